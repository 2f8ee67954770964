"""One strict YAML reader (suite/inputs/yaml_file.py) for sweep files, campaign files, price catalogs and published
figures: duplicate keys (in either spelling of - and _) refused with both lines, no aliases, no tags,
bounded size and depth, YAML 1.1's sexagesimal and yes/no read as text. And a campaign's runs are planned
as `suite run` plans them before anything is rented. Every case is one line on stderr, exit 2."""

from __future__ import annotations

import pytest

from suite.cli import main

CAMPAIGN = "workload: dcgan64\nhours: 0.5\ninstances: [g6.xlarge]\n"
SWEEP = "fixed:\n  workload: dcgan64\ngrid:\n  batch-size: [16, 32]\n"

# (text added to a valid file, what the one-line error says)
HOSTILE = [
    ("a: &x [*x]\n", "aliases (*x) are not accepted"),
    (
        "a: !!python/object/apply:os.system ['true']\n",
        "tags (tag:yaml.org,2002:python/object/apply:os.system)",
    ),
    ("a: !!binary aGVsbG8=\n", "tags (tag:yaml.org,2002:binary)"),
    ("a: " + "[" * 200 + "]" * 200 + "\n", "nested more than 32 deep"),
    ("a: " + "[" * 100_000 + "]" * 100_000 + "\n", "is not valid YAML"),
    ("a: " + "9" * 20_000 + "\n", "a value of 20,000 characters"),
    ("---\na: 1\n", "a second document"),
]


def run(tmp_path, capsys, command: str, text: str) -> str:
    path = tmp_path / "file.yaml"
    path.write_text(text)
    argv = ["fleet", "plan", str(path), "--out", str(tmp_path / "out")] if command == "fleet" else None
    if command == "sweep":
        argv = ["sweep", str(path), "--out", str(tmp_path / "out"), "--dry-run"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "out" / "tasks").exists()
    return err


@pytest.mark.parametrize(("extra", "expected"), HOSTILE)
@pytest.mark.parametrize("command", ["fleet", "sweep"])
def test_hostile_yaml_is_one_line(tmp_path, capsys, command, extra, expected):
    base = CAMPAIGN if command == "fleet" else SWEEP
    assert expected in run(tmp_path, capsys, command, base + extra)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (CAMPAIGN + "hours: 2\n", "key 'hours' appears twice (lines 2 and 4)"),
        (
            "workload: dcgan64\noptions: {batch-size: 64, batch_size: 32}\ninstances: [g6.xlarge]\n",
            "keys 'batch-size' and 'batch_size' are one key, given twice (line 2)",
        ),
        ("workload: dcgan64\nhours: 1:30\ninstances: [g6.xlarge]\n", "got '1:30' (no h:mm"),
        ("workload: dcgan64\nhours: 0_5\ninstances: [g6.xlarge]\n", "got '0_5' (no '_' in numbers"),
        ("workload: dcgan64\nhours: '0_5'\ninstances: [g6.xlarge]\n", "got '0_5'"),
        ("workload: dcgan64\nhours: 1e-300\ninstances: [g6.xlarge]\n", "from 0.01 to 168, got 1e-300"),
        ("workload: dcgan64\nhours: 9" + "9" * 5000 + "\ninstances: [g6.xlarge]\n", "a number of hours"),
        ("workload: dcgan64\nspot: yes\ninstances: [g6.xlarge]\n", "'spot' must be true or false, got 'yes'"),
        ("workload: dcgan64\nmax_cost_usd: 1_000\ninstances: [g6.xlarge]\n", "got '1_000'"),
        (
            "workload: dcgan64\nsource: {git: https://x.org/r, ref: 2026-13-45}\ninstances: [g6.xlarge]\n",
            "line 2",
        ),
    ],
)
def test_campaign_files_are_read_strictly(tmp_path, capsys, text, expected):
    assert expected in run(tmp_path, capsys, "fleet", text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SWEEP + "  batch-size: [64]\n", "key 'batch-size' appears twice (lines 4 and 5)"),
        (SWEEP + "  batch_size: [64]\n", "keys 'batch-size' and 'batch_size' are one key"),
        (SWEEP + "fixed: {}\n", "key 'fixed' appears twice"),
    ],
)
def test_sweep_files_refuse_duplicate_keys_in_one_mapping(tmp_path, capsys, text, expected):
    assert expected in run(tmp_path, capsys, "sweep", text)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("{model-override: 'nfg=8'}", "unknown model override(s) nfg for dcgan64"),
        ("{model-override: 'ngf=-1'}", "ngf must be a whole number of at least 1"),
        ("{model-override: 'ngf=1_0'}", "'1_0' is not a plain decimal number"),
        ("{model-override: 'ngf=wide'}", "ngf must be a whole number of at least 1"),
        ("{batch-size: 1_6}", "--batch-size must be a positive integer, got '1_6'"),
        ("{image-size: 1:30}", "--image-size must be a positive integer, got '1:30'"),
    ],
)
def test_a_campaign_run_suite_run_would_refuse_is_refused_by_plan(tmp_path, capsys, options, expected):
    text = f"workload: dcgan64\nhours: 0.5\noptions: {options}\ninstances: [g6.xlarge]\n"
    err = run(tmp_path, capsys, "fleet", text)
    assert "instance g6.xlarge" in err and expected in err, err


def test_a_campaign_backend_option_the_backend_refuses(tmp_path, capsys):
    text = (
        "workload: dcgan64\nhours: 0.5\noptions: {tf32: on}\ninstances: [{type: g6.xlarge, backend: cpu}]\n"
    )
    assert "--tf32 does not apply to the cpu backend" in run(tmp_path, capsys, "fleet", text)


def test_a_sound_campaign_and_its_overrides_still_plan(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(
        "workload: dcgan64\nhours: 0.5\noptions: {model-override: 'ngf=8', pin-memory: on}\n"
        "instances: [g6.xlarge]\n"
    )
    assert main(["fleet", "plan", str(path), "--out", str(tmp_path / "out")]) == 0, capsys.readouterr().err


def test_a_price_catalog_is_read_strictly(tmp_path):
    from suite.inputs.errors import UserError
    from suite.prices.catalog import load_catalog

    path = tmp_path / "c.yaml"
    entry = (
        "{provider: aws, region: us-east-1, accelerator: V100, accelerator_count: 1, accelerator_memory_gib: 16, "
        "vcpus: 8, ram_gib: 61, on_demand_usd_per_hour: PRICE, spot_usd_per_hour: null}"
    )
    head = "name: t\nsource: https://example.org\nas_of: 2026-01-01\ninstances:\n  p3.2xlarge: "
    for price, expected in (
        ("3_06", "must be a number, got '3_06'"),
        ("1e-300", "must be at least 0.0001"),
        ("1:30", "must be a number, got '1:30'"),
    ):
        path.write_text(head + entry.replace("PRICE", price) + "\n")
        with pytest.raises(UserError, match=expected):
            load_catalog(str(path))
    path.write_text(head + entry.replace("PRICE", "3.06") + "\n  &a p3.8xlarge: *a\n")
    with pytest.raises(UserError, match="aliases"):
        load_catalog(str(path))
