"""Fake of the bridge's torch autoload entry point (habana_frameworks/autoload/__init__.py, v1.19.0):
torch >= 2.5 calls `__autoload` from its "torch.backends" entry point during `import torch`."""

import os

from habana_frameworks import UNSET_LAZY_MODE

is_loaded = False


def is_autoload_enabled():
    autoload_env = os.getenv("PT_HPU_AUTOLOAD", "-1")
    if autoload_env == "1":
        return True
    if autoload_env == "0":
        return False
    # Skipped for lazy mode; an unset PT_HPU_LAZY_MODE is "1" in 1.19 (what it is later: UNSET_LAZY_MODE).
    return os.getenv("PT_HPU_LAZY_MODE", UNSET_LAZY_MODE) != "1"


def __autoload():
    global is_loaded
    if is_loaded or not is_autoload_enabled():
        return
    import habana_frameworks.torch  # noqa: F401
