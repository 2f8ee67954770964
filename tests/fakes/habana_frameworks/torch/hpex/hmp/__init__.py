"""Fake legacy HMP (in Habana's examples up to 1.12). Tests that need it absent copy the fakes without
this folder."""

import contextlib

from habana_frameworks import record


def convert(opt_level="O1", bf16_file_path="", fp32_file_path="", isVerbose=False):
    record(
        "hmp.convert",
        opt_level=opt_level,
        bf16_file_path=bf16_file_path,
        fp32_file_path=fp32_file_path,
        isVerbose=isVerbose,
    )


@contextlib.contextmanager
def disable_casts():
    record("hmp.disable_casts enter")
    try:
        yield
    finally:
        record("hmp.disable_casts exit")
