"""`suite fleet plan`: campaign files, task files, run commands and the cost estimate (no SkyPilot needed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

from suite.cli import build_parser, main
from suite.fleet import campaign, campaign_file, campaign_inline, sky_tasks
from suite.inputs.errors import UserError
from suite.prices.catalog import load_catalog

DOCS = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "fleet.md")


@pytest.fixture(autouse=True)
def no_sky_network(monkeypatch):
    """Anything that imports sky in these tests finds it offline and starts no API server."""
    monkeypatch.setenv("SKYPILOT_DISABLE_LOCAL_API_SERVER", "1")
    monkeypatch.setenv("SKYPILOT_DISABLE_USAGE_COLLECTION", "1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def write(tmp_path, text, name="campaign.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def plan(tmp_path, capsys, *argv):
    code = main(["fleet", "plan", *argv, "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    return code, out, err


def docs_campaign() -> str:
    """The campaign file printed in docs/fleet.md (its first yaml block)."""
    with open(DOCS) as handle:
        return re.search(r"```yaml\n(.*?)```", handle.read(), re.S).group(1)


def test_docs_campaign_dry_run_prints_tasks_and_the_catalog_arithmetic(tmp_path, capsys):
    path = write(tmp_path, docs_campaign())
    code, out, err = plan(tmp_path, capsys, path)
    assert code == 0, err
    settings = yaml.safe_load(docs_campaign())
    catalog = load_catalog(settings.get("prices"))
    expected = 0.0
    for entry in settings["instances"]:
        entry = entry if isinstance(entry, dict) else {"type": entry}
        instance = catalog.get(entry["type"])
        spot = entry.get("spot", settings.get("spot", False))
        rate = instance.spot_usd_per_hour if spot else instance.on_demand_usd_per_hour
        expected += entry.get("hours", settings["hours"]) * rate
        assert f"instance_type: {entry['type']}" in out
    # Spot runs as managed jobs: their controller VM (m6i.xlarge on-demand) for the longest job + 10 minutes.
    spot_hours = [
        e.get("hours", settings["hours"])
        for e in settings["instances"]
        if isinstance(e, dict) and e.get("spot")
    ]
    controller = (max(spot_hours) + 10 / 60) * catalog.get("m6i.xlarge").on_demand_usd_per_hour
    assert f"= ${controller:,.2f}" in out
    expected += controller
    assert f"estimated cost of the campaign: ${expected:,.2f}" in out
    on_demand = sum(
        (e.get("hours", settings["hours"]) if isinstance(e, dict) else settings["hours"])
        * catalog.get(e["type"] if isinstance(e, dict) else e).on_demand_usd_per_hour
        for e in settings["instances"]
    )
    assert f"all on-demand: ${on_demand:,.2f}" in out
    assert "sky jobs launch" in out and "sky launch" in out
    written = sorted(os.listdir(tmp_path / "out" / "tasks"))
    assert len(written) == len(settings["instances"])


def test_every_run_command_is_a_suite_run_the_parser_accepts(tmp_path):
    settings = campaign_file.load(write(tmp_path, docs_campaign()))
    plan_ = campaign.build(settings)
    parser = build_parser()
    for target in plan_.targets:
        spec = sky_tasks.task(plan_, target)
        line = [text for text in spec["run"].splitlines() if text.startswith("suite run ")]
        assert len(line) == 1
        import shlex

        argv = shlex.split(line[0])[1:]
        args = parser.parse_args(argv)
        assert args.command == "run"
        assert args.instance == target.instance_type
        assert args.backend == sky_tasks.backend_for(target)
        assert args.workload == plan_.workload
        assert args.out == sky_tasks.records_dir(plan_, target)


def test_backend_and_install_follow_the_instance_accelerator(tmp_path):
    prices = write(
        tmp_path,
        "name: mine\nsource: test\nas_of: '2026'\ninstances:\n"
        "  m5.xlarge: {provider: aws, region: us-east-1, accelerator: none, accelerator_count: 0, "
        "accelerator_memory_gib: 0, vcpus: 4, ram_gib: 16, on_demand_usd_per_hour: 0.192, spot_usd_per_hour: 0.08}\n"
        "  g6.xlarge: {provider: aws, region: us-east-1, accelerator: NVIDIA L4, accelerator_count: 1, "
        "accelerator_memory_gib: 24, vcpus: 4, ram_gib: 16, on_demand_usd_per_hour: 0.8, spot_usd_per_hour: 0.4}\n"
        "  dl1.24xlarge: {provider: aws, region: us-east-1, accelerator: Habana Gaudi HL-205, accelerator_count: 8, "
        "accelerator_memory_gib: 256, vcpus: 96, ram_gib: 768, on_demand_usd_per_hour: 13.1, spot_usd_per_hour: 2}\n",
        name="prices.yaml",
    )
    path = write(
        tmp_path,
        f"workload: dcgan64\nhours: 0.25\nprices: {prices}\ninstances:\n  - m5.xlarge\n  - g6.xlarge\n"
        "  - {type: dl1.24xlarge, host_image: {us-east-1: ami-0123456789abcdef0}}\n",
    )
    plan_ = campaign.build(campaign_file.load(path))
    specs = {t.instance_type: sky_tasks.task(plan_, t) for t in plan_.targets}
    assert "--backend cpu" in specs["m5.xlarge"]["run"]
    assert "'.[cuda]'" in specs["g6.xlarge"]["setup"] and "--backend cuda" in specs["g6.xlarge"]["run"]
    assert "image_id" not in specs["g6.xlarge"]["resources"]  # SkyPilot's own image for NVIDIA
    gaudi = specs["dl1.24xlarge"]
    # Habana's container on the campaign's host AMI, not on SkyPilot's default image (docs/fleet.md).
    assert gaudi["resources"]["image_id"] == {
        "us-east-1": "ami-0123456789abcdef0",
        "docker": sky_tasks.HABANA_IMAGE,
    }
    assert gaudi["resources"]["infra"] == "aws"
    assert "--no-deps" in gaudi["setup"] and "--backend hpu" in gaudi["run"]
    assert "--runtime=habana" in gaudi["config"]["docker"]["run_options"]
    # A catalog file is not on the cluster: it is copied there and the run points at the copy.
    assert specs["m5.xlarge"]["file_mounts"][sky_tasks.PRICES_MOUNT] == os.path.abspath(prices)
    assert f"--prices {sky_tasks.PRICES_MOUNT}" in specs["m5.xlarge"]["run"]
    assert "cloud" not in specs["m5.xlarge"]["resources"] and "infra" not in specs["m5.xlarge"]["resources"]


@pytest.mark.parametrize("where", ["file", "inline"])
def test_a_retired_instance_is_refused_with_one_line_naming_when_and_who_says_so(tmp_path, capsys, where):
    # p3.2xlarge is still in the default catalog (old runs are priced with it), marked retired.
    assert load_catalog().get("p3.2xlarge").retired is not None
    if where == "file":
        path = write(tmp_path, "workload: dcgan64\ninstances:\n  - g6.xlarge\n  - p3.2xlarge\n")
        code, out, err = plan(tmp_path, capsys, path)
    else:
        code, out, err = plan(tmp_path, capsys, "--instances", "g6.xlarge,p3.2xlarge")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "instance 'p3.2xlarge'" in err and "is retired and cannot be launched (RETIRED 2025-12-20:" in err
    assert "choose a current one, e.g. " in err and "g6.xlarge" in err
    assert (f"{path}, line 4" in err) if where == "file" else "(command line)" in err
    assert not (tmp_path / "out" / "tasks").exists()  # refused before anything is written


def test_instance_without_a_suite_backend_is_refused(tmp_path, capsys):
    code, _, err = plan(tmp_path, capsys, "--instances", "trn1.2xlarge")
    assert code == 2
    assert "no suite backend drives AWS Trainium (trn1.2xlarge)" in err


def test_unknown_instance_is_refused_with_near_matches_and_its_line(tmp_path, capsys):
    path = write(tmp_path, "workload: dcgan64\ninstances:\n  - g6.xlarge\n  - g6.xlarg\n")
    code, out, err = plan(tmp_path, capsys, path)
    assert code == 2 and out == ""
    assert "unknown instance 'g6.xlarg': did you mean g6.xlarge" in err
    assert f"{path}, line 4" in err
    assert not (tmp_path / "out" / "tasks").exists()


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "workload: dcgan64\nhourz: 1\ninstances: [g6.xlarge]\n",
            "unknown key 'hourz' in campaign file {path} ({path}, line 2",
        ),
        (
            "workload: dcgan64\nhours: -1\ninstances: [g6.xlarge]\n",
            "'hours' ({path}, line 2) must be a number of hours from 0.01 to 168, got -1",
        ),
        (
            "workload: dcgan64\ninstances:\n  - {type: g6.xlarge, spot: maybe}\n",
            "'spot' must be true or false, got 'maybe' ({path}, line 3)",
        ),
        (
            "workload: dcgan64\ninstances:\n  - {typo: g6.xlarge}\n",
            "unknown key 'typo' in an entry of 'instances' ({path}, line 3",
        ),
        (
            "workload: dcgan64\noptions: {out: x}\ninstances: [g6.xlarge]\n",
            "option 'out' ({path}, line 2) is set by the campaign itself",
        ),
        ("workload: dcgan64\ninstances: [g6.xlarge, g6.xlarge]\n", "instance 'g6.xlarge' is listed twice"),
        (
            "workload: dcgan64\ninstances:\n  - {type: g6.xlarge, spot: true}\n",
            "give a bucket for their records",
        ),
        (
            "workload: dcgan64\nrecords: {bucket: ftp://x}\ninstances: [g6.xlarge]\n",
            "bucket 'ftp://x' ({path}, line 2) must be a URL",
        ),
        ("workload: dcgan64\ninstances: [g6.xlarge\n", "is not valid YAML"),
        ("instances: [g6.xlarge]\n", "has no 'workload'"),
        ("name: Bad_Name!\nworkload: dcgan64\ninstances: [g6.xlarge]\n", "campaign name 'bad-name!'"),
        (
            "workload: dcgan64\noptions: {bogus: 1}\ninstances: [g6.xlarge]\n",
            "instance g6.xlarge: the run command would be refused: unknown `suite run` option 'bogus'",
        ),
    ],
)
def test_campaign_file_errors_name_the_key_and_line(tmp_path, capsys, text, message):
    path = write(tmp_path, text)
    code, out, err = plan(tmp_path, capsys, path)
    assert code == 2, out
    assert err.startswith("suite: error: ") and len(err.strip().splitlines()) == 1
    assert message.format(path=path) in err


def test_spot_without_a_quote_is_refused(tmp_path, capsys):
    path = write(
        tmp_path,
        "workload: dcgan64\nprices: seed-2022\nrecords: {bucket: s3://b/c}\ninstances:\n"
        "  - {type: g5.12xlarge, spot: true}\n",
    )
    code, _, err = plan(tmp_path, capsys, path)
    assert code == 2
    assert "g5.12xlarge has no spot price in the seed-2022 catalog" in err and f"{path}, line 5" in err


def test_budget_cap_refuses_a_plan_above_it(tmp_path, capsys):
    path = write(
        tmp_path, "workload: dcgan64\nhours: 2\nmax_cost_usd: 10\ninstances: [g6.xlarge, g5.xlarge]\n"
    )
    code, out, err = plan(tmp_path, capsys, path)
    # 2 h x (0.8048 + 1.006) $/h = $3.62: under the cap
    assert code == 0 and "estimated cost of the campaign: $3.62" in out
    code, out, err = plan(tmp_path, capsys, path, "--max-cost", "3")
    assert code == 2 and out == ""
    assert "the campaign's estimate is $3.62, above its max_cost_usd $3.00" in err


def test_inline_campaign_spot_with_bucket(tmp_path, capsys):
    code, out, err = plan(
        tmp_path,
        capsys,
        "--instances",
        "g6.xlarge,g4dn.xlarge",
        "--spot",
        "--hours",
        "1",
        "--bucket",
        "s3://my-bucket/runs",
        "--set",
        "batch-size=32",
        "--name",
        "quick",
    )
    assert code == 0, err
    # 1 h x (0.37855 + 0.2052) spot $/h, and the managed-jobs controller: (1 h + 10 min) x 0.192 $/h
    assert "estimated cost of the campaign: $0.81 (instances $0.58 + controller $0.22)" in out
    assert "use_spot: true" in out and "source: s3://my-bucket/runs" in out and "--batch-size 32" in out
    assert "sky jobs launch -y -n quick-g6-xlarge" in out


def test_tasks_are_yaml_skypilot_reads_as_a_task_mapping(tmp_path, capsys):
    path = write(tmp_path, docs_campaign())
    code, _, _ = plan(tmp_path, capsys, path)
    assert code == 0
    for name in os.listdir(tmp_path / "out" / "tasks"):
        with open(tmp_path / "out" / "tasks" / name) as handle:
            spec = yaml.safe_load(handle)
        assert set(spec) <= {"name", "workdir", "resources", "setup", "run", "config", "file_mounts"}
        assert isinstance(spec["run"], str) and isinstance(spec["setup"], str)
        assert spec["name"] + ".yaml" == name


def test_fleet_run_without_skypilot_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "sky", None)  # `import sky` raises ImportError
    path = write(tmp_path, "workload: dcgan64\ninstances: [g6.xlarge]\n")
    code = main(["fleet", "run", path, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "suite: error: `suite fleet run` needs SkyPilot: pip install 'suite[cloud]'" in err
    assert (tmp_path / "out" / "tasks").is_dir()  # the plan is written all the same


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["run", "--help"],
        ["report", "--help"],
        # `list` imports torch in its fresh Python: seconds, so it is left to the full run.
        pytest.param(["list"], marks=pytest.mark.slow),
        ["fleet", "plan", "--instances", "g6.xlarge,g5.xlarge", "--out", "{tmp}"],
    ],
)
def test_sky_is_never_imported_by_the_other_commands_nor_by_plan(argv, tmp_path):
    argv = [word.replace("{tmp}", str(tmp_path)) for word in argv]
    code = (
        "import sys\nfrom suite.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print('SKY-IMPORTED' if any(m == 'sky' or m.startswith('sky.') for m in sys.modules) else 'NO-SKY')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "NO-SKY", done.stderr


def test_run_script_copies_records_to_the_bucket_and_keeps_the_exit_status(tmp_path):
    """Executed by bash with a stand-in `suite` that writes a record and exits 1 (as an OOM run does)."""
    plan_ = campaign.build(
        campaign_inline.from_inline(
            campaign_inline.InlineCampaign(
                ["g6.xlarge"], "dcgan64", [], 1, False, None, None, "s3://b/x", None
            )
        )
    )
    bucket = tmp_path / "bucket"
    script = sky_tasks.task(plan_, plan_.targets[0])["run"].replace(sky_tasks.RECORDS_MOUNT, str(bucket))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "suite").write_text(
        '#!/bin/sh\nwhile [ "$1" != "--out" ]; do shift; done\nmkdir -p "$2" && echo {} > "$2/r.json"\nexit 1\n'
    )
    (bin_dir / "suite").chmod(0o755)
    workdir = tmp_path / "sky_workdir"
    workdir.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", script], cwd=workdir, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert (bucket / "g6.xlarge" / "r.json").is_file()


def test_inline_options_with_a_campaign_file_are_refused(tmp_path, capsys):
    path = write(tmp_path, "workload: dcgan64\ninstances: [g6.xlarge]\n")
    code, _, err = plan(tmp_path, capsys, path, "--spot", "--hours", "3")
    assert code == 2
    assert "--hours, --spot go with --instances; a campaign file sets these itself" in err


def test_source_git_or_local_sets_the_workdir(tmp_path):
    path = write(
        tmp_path,
        "workload: dcgan64\nsource: {git: https://github.com/example/suite, ref: v0.1.0}\ninstances: [g5.xlarge]\n",
    )
    plan_ = campaign.build(campaign_file.load(path))
    assert sky_tasks.task(plan_, plan_.targets[0])["workdir"] == {
        "url": "https://github.com/example/suite",
        "ref": "v0.1.0",
    }
    local = campaign.build(
        campaign_file.load(write(tmp_path, "workload: dcgan64\nsource: local\ninstances: [g5.xlarge]\n"))
    )
    workdir = sky_tasks.task(local, local.targets[0])["workdir"]
    assert os.path.isfile(os.path.join(workdir, "pyproject.toml"))
    with pytest.raises(UserError, match="'source' needs 'git: URL'"):
        campaign_file.load(
            write(tmp_path, "workload: dcgan64\nsource: {ref: main}\ninstances: [g5.xlarge]\n")
        )
