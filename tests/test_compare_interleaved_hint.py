"""Where `suite compare` needs more runs, it asks for both sides again, interleaved in one `suite run
--repeat N --against OPTION=VALUE` (A B B A …, both meeting the same host load), not for runs added to one
side after the fact; only sides that cannot share one host (two instances) get a command each."""

from __future__ import annotations

import shlex

from test_compare import side

from suite.compare import comparison as compare
from suite.launching.repeat import against_argv
from suite.run_options import run_parser


def too_few_note(base, cand, by=None) -> str:
    (comparison,) = compare.compare(base, cand, by=by)["comparisons"]
    (note,) = [n for n in comparison["notes"] if "need ≥ 3 a side" in n]
    return note


def commands(note: str) -> list[list[str]]:
    """Each `suite …` command the note holds, as words."""
    parts = note.split("suite ")[1:]
    return [shlex.split("suite " + part.split(", then")[0].split("; ")[0]) for part in parts]


def test_the_hint_runs_both_sides_interleaved_and_the_candidate_is_the_other_side():
    note = too_few_note(
        side([100, 101], "a/r", threads=1), side([150, 151, 149], "a/s", threads=2), "threads"
    )
    (run, comparison) = commands(note)
    args = run_parser().parse_args(run[2:])
    assert args.repeat == 3 and args.against == ["threads=2"] and args.threads == 1
    assert args.out == "a/interleaved"  # beside the sides' folders, never inside one (read recursively)
    candidate = run_parser().parse_args([*run[2:], *against_argv(args.against)])
    assert candidate.threads == 2 and candidate.workload == args.workload
    assert comparison == ["suite", "compare", "a/interleaved/baseline", "a/interleaved/candidate"]


def test_the_same_configuration_on_both_sides_is_an_interleaved_a_a_pair():
    note = too_few_note(side([100, 101, 99], "a"), side([120, 121], "c"))
    (run, _) = commands(note)
    args = run_parser().parse_args(run[2:])
    assert args.repeat == 3 and args.against == ["workload=dcgan64"]


def test_two_instances_cannot_share_a_host_so_each_side_gets_its_own_runs():
    note = too_few_note(
        side([100, 101], "a", instance="p3.2xlarge"),
        side([150, 151, 149], "c", instance="g5.xlarge"),
        "instance",
    )
    assert "--against" not in note and "--repeat 1 --out a" in note
