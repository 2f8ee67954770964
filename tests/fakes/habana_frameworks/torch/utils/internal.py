import os


def is_lazy() -> bool:
    # As the real bridge (habana_frameworks/torch/utils/internal.py, releases before eager became default).
    return os.getenv("PT_HPU_LAZY_MODE", "1") != "0"
