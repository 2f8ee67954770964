"""`suite compare` as a gate a buyer can trust: many comparisons without false verdicts (a seeded null
experiment), a gate that cannot decide does not pass, reruns that reproduce the runs, `--by` fields that
match, and instances compared with runs made elsewhere marked hypothetical."""

from __future__ import annotations

import random
import shlex

import pytest
from test_compare import SEED, side, write_side

from suite import run_record
from suite.cli import main
from suite.compare import comparison as compare
from suite.compare import significance as compare_stats
from suite.run_options import run_parser


def null_sides(seed: int, configs: int = 20, runs: int = 3, sigma: float = 0.05):
    """Both sides from one log-normal distribution: every faster/slower verdict is false."""
    rng = random.Random(seed)
    sides = []
    for prefix in ("a", "b"):
        loaded = []
        for batch in range(1, configs + 1):
            rates = [100 * rng.lognormvariate(0, sigma) for _ in range(runs)]
            loaded += side(rates, f"{prefix}{batch}-", batch_size=batch)
        sides.append(loaded)
    return sides


def false_verdicts(result: dict) -> int:
    return sum(
        m["verdict"] in ("faster", "slower") for c in result["comparisons"] for m in c["metrics"].values()
    )


@pytest.mark.slow  # 80 comparisons of 20 configurations each: seconds
def test_seeded_null_of_20_configurations_gives_at_most_one_verdict_in_nearly_every_seed():
    seeds = range(40)
    corrected = [false_verdicts(compare.compare(*null_sides(seed))) for seed in seeds]
    uncorrected = [false_verdicts(compare.compare(*null_sides(seed), correction="none")) for seed in seeds]
    # Holm keeps P(any false verdict) ≤ 5 %: at most 2 of 40 seeds may show more than one.
    assert sum(n > 1 for n in corrected) <= 2
    assert sum(n > 0 for n in corrected) <= 4
    # The same draws tested one by one: 1 − 0.95²⁰ − 20·0.05·0.95¹⁹ ≈ 26 % of seeds have two or more.
    assert sum(n > 1 for n in uncorrected) >= 5


def test_the_output_names_the_correction_and_the_family_size(tmp_path, capsys):
    base, cand = null_sides(3, configs=4)
    result = compare.compare(base, cand)
    assert result["correction"]["method"] == "holm" and result["correction"]["family"] == 4
    assert compare.compare(*null_sides(3, configs=25))["correction"]["method"] == "bh"
    for loaded, folder in ((base, "a"), (cand, "b")):
        (tmp_path / folder).mkdir()
        for _, rec in loaded:
            run_record.write_record(rec, str(tmp_path / folder))
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert (
        "Holm's step-down correction (family-wise error ≤ α) over a family of 4 test(s)"
        in capsys.readouterr().out
    )


def test_holm_and_bh_adjusted_p_values_match_the_published_procedures():
    # Reference: statsmodels.stats.multitest.multipletests(p, method="holm" / "fdr_bh").
    p = [0.01, 0.04, 0.03, 0.005]
    assert compare_stats.holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert compare_stats.benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])


def test_a_real_speed_up_still_wins_within_a_family():
    base = side([100, 101, 99], "a") + side([50, 50.5, 49.5], "b", batch_size=16)
    cand = side([120, 121, 119], "c") + side([50.2, 49.9, 50.4], "d", batch_size=16)
    verdicts = [
        c["metrics"]["images_per_second"]["verdict"] for c in compare.compare(base, cand)["comparisons"]
    ]
    assert verdicts == ["faster", compare_stats.UNDECIDED]


# -- item: the gate, the rerun hint, --by ---------------------------------------------------------------


def test_fail_on_fails_when_nothing_matched(tmp_path, capsys):
    write_side(tmp_path / "a", [100, 101, 99], "a")
    write_side(tmp_path / "b", [100, 101, 99], "b", batch_size=16)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-on", "slower"]) == 4
    assert "undecided (no configuration is on both sides)" in capsys.readouterr().err


def test_rerun_hint_reproduces_overrides_and_schedule():
    base = side(
        [100, 101],
        "a",
        model_overrides={"ngf": 8, "ndf": 8},
        warmup_steps=1,
        steps_per_window=2,
        windows=3,
        seed=5,
    )
    cand = side(
        [100, 101, 99],
        "c",
        model_overrides={"ngf": 8, "ndf": 8},
        warmup_steps=1,
        steps_per_window=2,
        windows=3,
        seed=5,
    )
    (comparison,) = compare.compare(base, cand)["comparisons"]
    (note,) = [n for n in comparison["notes"] if "suite run" in n]
    command = shlex.split(note[note.index("suite run ") :].split(", then ")[0])
    assert command[:2] == ["suite", "run"]
    args = run_parser().parse_args(command[2:])
    assert args.model_overrides == {"ngf": 8, "ndf": 8}
    assert (args.warmup_steps, args.steps_per_window, args.windows) == (1, 2, 3)
    assert (args.workload, args.batch_size, args.precision, args.repeat) == ("dcgan64", 8, "fp32", 3)


def with_parameters(loaded, count):
    for _, rec in loaded:
        rec["workload"] = {"name": "dcgan64", "parameters": {"generator": count}}
    return loaded


def test_by_model_overrides_matches_across_the_overrides():
    base = with_parameters(side([100, 101, 99], "a", model_overrides={"ngf": 8}), 1000)
    cand = with_parameters(side([60, 61, 59], "c", model_overrides={"ngf": 16}), 4000)
    (comparison,) = compare.compare(base, cand, by="model_overrides")["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == "slower"
    assert comparison["baseline"]["value"] == "model_overrides={'ngf': 8}"


def test_by_instance_with_cpu_runs_is_marked_hypothetical():
    base = side([100, 101, 99], "a", instance="p3.2xlarge", prices="seed-2022")
    cand = side([120, 121, 119], "c", instance="p3.8xlarge", prices="seed-2022")
    (comparison,) = compare.compare(base, cand, by="instance", catalog=SEED)["comparisons"]
    assert comparison["hypothetical"]
    assert any(n.startswith("HYPOTHETICAL baseline: --instance p3.2xlarge has") for n in comparison["notes"])
    from suite.compare.render import render_markdown

    assert "p3.2xlarge → p3.8xlarge (HYPOTHETICAL)" in render_markdown(
        compare.compare(base, cand, by="instance", catalog=SEED)
    )
