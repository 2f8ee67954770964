"""Fake bridge entry point. The real one (habana_frameworks/torch/__init__.py, v1.19.0) marks autoload done,
loads libhabana_pytorch_plugin.so (lazy) or libhabana_pytorch2_plugin.so (eager) according to is_lazy()
*at this import*, then imports core, distributed.hccl and hpu. The fake records the PT_HPU_* environment
and the mode it fixed here, so a test can prove what the suite set first and what really runs."""

import os

import habana_frameworks.autoload
from habana_frameworks import record
from habana_frameworks.torch.utils.internal import is_lazy

habana_frameworks.autoload.is_loaded = True
# PT_HPU_*, and the op-list names of releases before 1.13 (LOWER_LIST, FP32_LIST).
IMPORT_ENV = {
    key: value
    for key, value in os.environ.items()
    if key.startswith("PT_HPU_") or key in ("LOWER_LIST", "FP32_LIST")
}
LOADED_LIBRARY = "libhabana_pytorch_plugin.so" if is_lazy() else "libhabana_pytorch2_plugin.so"
record("import habana_frameworks.torch", env=dict(IMPORT_ENV), lazy=is_lazy())

# The real __init__ imports these three, in this order. (Kept apart: hccl must run between core and hpu.)
import habana_frameworks.torch.core  # noqa: E402,F401
import habana_frameworks.torch.distributed.hccl  # noqa: E402,F401
import habana_frameworks.torch.hpu  # noqa: E402,F401
