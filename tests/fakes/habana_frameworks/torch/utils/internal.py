"""Fake of habana_frameworks/torch/utils/internal.py: is_lazy() is read once and cached, and lazy_only
decides at decoration time (at import) whether a function does anything."""

import os

from habana_frameworks import RELEASE


def is_lazy():
    if is_lazy._is_lazy is None:
        unset = RELEASE.lazy_value if RELEASE.default_mode == "lazy" else RELEASE.eager_value
        is_lazy._is_lazy = RELEASE.mode_of_value(os.getenv("PT_HPU_LAZY_MODE", unset)) == "lazy"
    return is_lazy._is_lazy


is_lazy._is_lazy = None


def lazy_only(func):
    def lazy_wrapper(*args, **kwargs):
        func(*args, **kwargs)

    def non_lazy_wrapper(*args, **kwargs):
        pass  # the real bridge logs once that the call has no effect

    return lazy_wrapper if is_lazy() else non_lazy_wrapper
