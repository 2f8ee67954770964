"""Fake hccl: the real import registers the "hccl" process-group backend and maps OMPI_COMM_WORLD_* to
RANK / WORLD_SIZE / LOCAL_RANK. The fake records the import and does the mapping."""

import os

from habana_frameworks import record

record("import hccl")
for ompi, torch_name in (
    ("OMPI_COMM_WORLD_RANK", "RANK"),
    ("OMPI_COMM_WORLD_SIZE", "WORLD_SIZE"),
    ("OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK"),
):
    if ompi in os.environ:
        os.environ.setdefault(torch_name, os.environ[ompi])
