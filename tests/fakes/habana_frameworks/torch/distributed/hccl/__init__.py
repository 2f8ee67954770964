"""Fake hccl, with the real import's environment handling (distributed/hccl/__init__.py, v1.19.0):
initialize_distributed_hpu() maps OMPI_COMM_WORLD_{LOCAL_RANK,SIZE,RANK} to LOCAL_RANK/WORLD_SIZE/RANK only
when all three are set (and not when all three targets already are), defaults MASTER_ADDR/MASTER_PORT, and
sets HLS_MODULE_ID (the card this process opens) from LOCAL_RANK when world size > 1, through
HABANA_VISIBLE_MODULES when that is set."""

import os

from habana_frameworks import record

HLS_MODULE_ID_VAR = "HLS_MODULE_ID"
HABANA_VISIBLE_MODULES_VAR = "HABANA_VISIBLE_MODULES"
OMPI_VARIABLES_MAPPING = {
    "OMPI_COMM_WORLD_LOCAL_RANK": "LOCAL_RANK",
    "OMPI_COMM_WORLD_SIZE": "WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK": "RANK",
}


def _setup_environment_from_mpi():
    if all(key in os.environ for key in OMPI_VARIABLES_MAPPING.values()):
        return
    if all(key in os.environ for key in OMPI_VARIABLES_MAPPING):
        for mpi_name, name in OMPI_VARIABLES_MAPPING.items():
            os.environ[name] = os.environ[mpi_name]
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12345")


def _setup_module_id(local_rank, world_size):
    if HLS_MODULE_ID_VAR in os.environ or local_rank == -1 or world_size == 1:
        return
    if HABANA_VISIBLE_MODULES_VAR in os.environ:
        visible = os.environ[HABANA_VISIBLE_MODULES_VAR].split(",")
        assert local_rank < len(visible), "There is not enough devices available for training."
        os.environ[HLS_MODULE_ID_VAR] = visible[local_rank]
        return
    os.environ[HLS_MODULE_ID_VAR] = str(local_rank)


def initialize_distributed_hpu():
    _setup_environment_from_mpi()
    world_size = int(os.getenv("WORLD_SIZE", 1))
    rank = int(os.getenv("RANK", -1))
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    _setup_module_id(local_rank, world_size)
    if rank != -1:
        os.environ["ID"] = str(rank)
    return world_size, rank, local_rank


record("import hccl")
initialize_distributed_hpu()
