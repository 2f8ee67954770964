"""Fake bridge entry point. The real one loads libhabana_pytorch_plugin.so (lazy) or
libhabana_pytorch2_plugin.so (eager) according to PT_HPU_LAZY_MODE *at this import*; the fake records
the PT_HPU_* environment it saw here so a test can prove the suite set it first."""

import os

from habana_frameworks import record

IMPORT_ENV = {key: value for key, value in os.environ.items() if key.startswith("PT_HPU_")}
record("import habana_frameworks.torch", env=dict(IMPORT_ENV))

from habana_frameworks.torch import core, hpu  # noqa: E402,F401  (the real __init__ imports both)
