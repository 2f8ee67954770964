"""When `suite compare` finds no configuration on both sides it says why: the fields the closest pair differs
in and the `--by` that pairs them, or that one set of runs was given as both sides."""

from __future__ import annotations

from test_compare import side, write_side

from suite.cli import main
from suite.compare import comparison as compare


def test_two_groups_that_differ_only_in_precision_are_told_to_compare_by_precision(tmp_path, capsys):
    write_side(tmp_path / "fp32", [100, 101, 99], "a", precision="fp32")
    write_side(tmp_path / "bf16", [150, 151, 149], "b", precision="bf16")
    assert main(["compare", str(tmp_path / "fp32"), str(tmp_path / "bf16")]) == 0
    out = capsys.readouterr().out
    assert (
        "No configuration is on both sides: the closest pair differs in precision (fp32 / bf16); "
        "`--by precision` compares across it." in out
    )
    # and the suggestion works
    assert main(["compare", str(tmp_path / "fp32"), str(tmp_path / "bf16"), "--by", "precision"]) == 0
    assert "**faster**" in capsys.readouterr().out


def test_a_folder_compared_with_itself_says_so(tmp_path, capsys):
    write_side(tmp_path / "runs", [100, 101, 99], "a")
    assert main(["compare", str(tmp_path / "runs"), str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "No configuration is on both sides: the baseline and the candidate are the same runs" in out
    assert "--by" not in out.split("No configuration is on both sides")[1].split("\n")[0]


def test_the_gate_names_why_nothing_was_compared(tmp_path, capsys):
    write_side(tmp_path / "a", [100, 101, 99], "a")
    write_side(tmp_path / "b", [100, 101, 99], "b", batch_size=16)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-on", "slower"]) == 4
    err = capsys.readouterr().err
    assert (
        "undecided (no configuration is on both sides): the closest pair differs in batch_size (8 / 16)"
        in err
    )
    assert "`--by batch_size`" in err


def test_several_fields_are_named_and_the_by_covers_them_all():
    base = side([100, 101, 99], "a", precision="fp32", threads=1)
    cand = side([100, 101, 99], "b", precision="bf16", threads=2)
    result = compare.compare(base, cand)
    assert result["comparisons"] == []
    why = result["unpaired"]
    fields = {d["field"] for d in why["differs"]}
    assert {"config.precision", "config.threads"} <= fields
    assert set(why["by"].split(",")) == {"precision", "threads"}
    assert compare.compare(base, cand, by=why["by"])["comparisons"]  # the named --by pairs them


def test_a_given_by_is_kept_and_what_differs_beyond_it_is_added():
    base = side([100, 101, 99], "a", precision="fp32", batch_size=8)
    cand = side([100, 101, 99], "b", precision="bf16", batch_size=16)
    result = compare.compare(base, cand, by="precision")
    assert [d["field"] for d in result["unpaired"]["differs"]] == ["config.batch_size"]
    assert result["unpaired"]["by"] == "precision,batch_size"


def test_nothing_is_suggested_where_something_was_compared():
    base = side([100, 101, 99], "a")
    cand = side([120, 121, 119], "b")
    assert compare.compare(base, cand)["unpaired"] is None
