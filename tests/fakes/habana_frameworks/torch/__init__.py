"""Fake bridge entry point. The real one (habana_frameworks/torch/__init__.py, v1.19.0) marks autoload done,
refuses a torch whose major.minor differs from the one it was built for (required_version.txt) and, in lazy
mode, a torch that is not Habana's fork (local version "git..."), with the same asserts as here; then it loads libhabana_pytorch_plugin.so (lazy) or libhabana_pytorch2_plugin.so (eager) according to is_lazy()
*at this import*, then imports core, distributed.hccl and hpu. The fake records the PT_HPU_* environment
and the mode it fixed here, so a test can prove what the suite set first and what really runs."""

import os

import habana_frameworks.autoload
from habana_frameworks import record
from habana_frameworks.torch.utils.internal import is_lazy

habana_frameworks.autoload.is_loaded = True

from packaging.version import Version  # noqa: E402

REQUIRED_VERSION_FILE_PATH = os.path.join(os.path.dirname(__file__), "required_version.txt")
with open(REQUIRED_VERSION_FILE_PATH) as req_ver_file:
    compile_time_ver = Version(req_ver_file.read())
run_time_ver = Version(habana_frameworks.TORCH_VERSION)  # the real one: Version(torch.__version__)
# A stock torch without a local version ("2.5.1") fails here with AttributeError, as in the real bridge.
is_torch_fork = run_time_ver.local.startswith("git")

assert run_time_ver.major == compile_time_ver.major and run_time_ver.minor == compile_time_ver.minor, (
    f"Error: Compile-time major/minor PyTorch version {compile_time_ver} differs from run-time {run_time_ver}."
)

if is_lazy():
    assert is_torch_fork, f"Stock PyTorch version {run_time_ver} is not supported in Lazy mode."
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
