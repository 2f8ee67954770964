"""`suite run`'s options are listed from the suite's own declaration, group by group, never from
argparse's private listing of a parser."""

from __future__ import annotations

import argparse
import inspect

from suite import run_options


def test_declaring_the_options_lists_each_one_in_order():
    parser = argparse.ArgumentParser(prog="suite run")
    declared = run_options.add_run_options(parser)
    flags = [string for action in declared for string in action.option_strings]
    assert flags[:3] == ["--backend", "--workload", "--num-classes"]
    assert flags[-3:] == ["--rdzv-endpoint", "--dist-timeout", "--fsdp"]
    assert {"--pin-memory", "--no-pin-memory", "--tf32", "--no-fused", "--max-memory"} <= set(flags)
    assert "-h" not in flags  # the parser's own help is not a run option


def test_the_listing_is_the_declaration_not_argparse_internals():
    assert "_actions" not in inspect.getsource(run_options)
    listed = run_options.run_options()
    assert list(listed)[:2] == ["backend", "workload"]
    assert "nproc-per-node" in listed and listed["nproc-per-node"] is listed["nproc"]
    assert "no-pin-memory" not in listed  # a switch is listed once, under its positive name
