"""Fake of habana_frameworks/torch/utils/internal.py: is_lazy() is read once and cached, and lazy_only
decides at decoration time (at import) whether a function does anything."""

import os

from habana_frameworks import RELEASE, UNSET_LAZY_MODE


def is_lazy():
    if is_lazy._is_lazy is None:
        is_lazy._is_lazy = RELEASE.mode_of_value(os.getenv("PT_HPU_LAZY_MODE", UNSET_LAZY_MODE)) == "lazy"
    return is_lazy._is_lazy


is_lazy._is_lazy = None


def lazy_only(func):
    def lazy_wrapper(*args, **kwargs):
        func(*args, **kwargs)

    def non_lazy_wrapper(*args, **kwargs):
        pass  # the real bridge logs once that the call has no effect

    return lazy_wrapper if is_lazy() else non_lazy_wrapper
