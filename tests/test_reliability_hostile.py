"""Hostile inputs, round 2: writers that must touch only what is theirs, price lists of the wrong shape,
user code that ends the process or cannot train, numbers out of bounds, a hostile environment, and two
sweeps racing for one folder. Every case runs in this process (no child) unless its name says otherwise."""

from __future__ import annotations

import io
import json
import os
import socket
import time

import pytest
import torch
import yaml

from suite import atomic, run_record
from suite.cli import main

# -- writers touch only what is theirs -----------------------------------------------------------------


def _age(path, seconds=2 * atomic.STALE_AFTER_S):
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_the_atomic_writer_removes_only_its_own_stale_temporaries_for_that_target(tmp_path):
    mine = []
    for target in ("r1.json", "report.md"):  # a temporary of each target, left by a killed write
        with pytest.raises(RuntimeError), atomic.atomic_path(str(tmp_path / target)) as tmp:
            mine.append(tmp)
            os.link(tmp, tmp + ".kept")  # survives the writer's own clean-up of a failed write
            raise RuntimeError
        os.rename(tmp + ".kept", tmp)
        _age(tmp)
    users = [".tmp-notes", ".tmp-r1.json-abc.json", ".tmp-r1.json.suite-atomic-toolong99.json", ".tmp-x"]
    for name in users:  # a user's own files that merely look temporary: old, but not the writer's
        (tmp_path / name).write_text("mine")
        _age(tmp_path / name)
    atomic.write_atomic(str(tmp_path / "r1.json"), "{}")
    left = sorted(os.listdir(tmp_path))
    assert os.path.basename(mine[0]) not in left  # its own, for this target: gone
    assert os.path.basename(mine[1]) in left  # its own, but for another target: another write's business
    assert set(users) <= set(left)


def test_a_stale_temporary_that_is_a_symlink_or_folder_is_never_removed(tmp_path):
    target = tmp_path / "r1.json"
    link = tmp_path / ".tmp-r1.json.suite-atomic-abcdefgh.json"
    os.symlink(tmp_path / "elsewhere", link)
    old = time.time() - 2 * atomic.STALE_AFTER_S
    os.utime(link, (old, old), follow_symlinks=False)
    folder = tmp_path / ".tmp-r1.json.suite-atomic-ijklmnop.json"
    folder.mkdir()
    _age(folder)
    atomic.write_atomic(str(target), "{}")
    assert os.path.islink(link) and folder.is_dir()


def _hostile_targets(tmp_path):
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "link.md"
    os.symlink(victim, link)
    folder = tmp_path / "folder.md"
    folder.mkdir()
    sock_path = tmp_path / "s.md"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    return {
        "a FIFO": fifo,
        "a symlink": link,
        "a folder": folder,
        "a socket": sock_path,
        "device": "/dev/null",
    }


@pytest.mark.parametrize("kind", ["a FIFO", "a symlink", "a folder", "a socket", "device"])
def test_the_atomic_writer_refuses_anything_but_a_regular_file_or_a_new_path(tmp_path, kind):
    target = _hostile_targets(tmp_path)[kind]
    before = os.lstat(target)
    with pytest.raises(atomic.NotRegularFile, match="give a new path or a regular file"):
        atomic.write_atomic(str(target), "x")
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert (tmp_path / "victim.txt").read_text() == "precious"
    assert not [n for n in os.listdir(tmp_path) if atomic.is_temporary(n)]


def test_a_record_is_not_written_through_a_planted_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / "r1.json")
    made = run_record.new_record("r1", {"utc_time": "2026-01-01T00:00:00Z"}, {"workload": "dcgan64"})
    with pytest.raises(OSError):  # an OSError: the caller's fallback (exit 3) keeps the measurement
        run_record.write_record(made, str(tmp_path))
    assert os.path.islink(tmp_path / "r1.json") and victim.read_text() == "precious"


@pytest.mark.parametrize(
    "command", [["report", "{results}"], ["compare", "{results}"], ["prices", "import", "{results}/x.json"]]
)
@pytest.mark.parametrize("kind", ["a FIFO", "a symlink", "device"])
def test_every_file_out_refuses_a_device_fifo_or_symlink_before_any_work(tmp_path, capsys, command, kind):
    target = _hostile_targets(tmp_path)[kind]
    argv = [part.format(results=tmp_path / "results") for part in command] + ["--out", str(target)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--out {str(target)!r} is" in err and "give a regular file or a new path" in err
    assert "Traceback" not in err
    assert (tmp_path / "victim.txt").read_text() == "precious"


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--workload", "dcgan64"],
        ["sweep", "--set", "batch-size=2"],
        ["diagnose", "--workload", "dcgan64"],
        ["loader"],
        ["batch-size", "--workload", "dcgan64"],
        ["scale", "--nproc", "1"],
        ["data", "synth", "--count", "1"],
        ["data", "prepare", "src", "--size", "8"],
    ],
)
@pytest.mark.parametrize("kind", ["a FIFO", "a socket", "device", "a file"])
def test_every_folder_out_refuses_what_is_not_a_folder(tmp_path, capsys, command, kind):
    if kind == "a file":
        target = tmp_path / "victim.txt"
        target.write_text("precious")
    else:
        target = _hostile_targets(tmp_path)[kind]
    assert main([*command, "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"--out {str(target)!r} is" in err and "give a folder or a new path" in err


# -- price imports: every field typed, every size bounded -------------------------------------------------


def _ec2(**changes) -> dict:
    item = {
        "instance_type": "p3.2xlarge",
        "vCPU": 8,
        "memory": 61,
        "GPU": 1,
        "GPU_model": "V100",
        "GPU_memory": 16,
        "pricing": {"us-east-1": {"linux": {"ondemand": "3.06", "spot_avg": "0.9"}}},
    }
    item.update(changes)
    return item


GOOD_EC2 = _ec2(instance_type="g4dn.xlarge", GPU_model="T4")


@pytest.mark.parametrize(
    "bad, named",
    [
        ({"pricing": "3.06"}, "pricing is a str"),
        ({"pricing": {"us-east-1": "3.06"}}, "pricing['us-east-1'] is a str"),
        ({"pricing": {"us-east-1": {"linux": ["3.06"]}}}, "pricing['us-east-1']['linux'] is a list"),
        ({"pricing": {"us-east-1": {"linux": {"ondemand": ["3.06"]}}}}, "a price is a list"),
        ({"instance_type": ["p3.2xlarge"]}, "instance_type is ['p3.2xlarge'], not a name"),
        ({"instance_type": 7}, "instance_type is 7, not a name"),
        ({"vCPU": "eight"}, "vCPU is 'eight', not a whole number above 0"),
        ({"vCPU": None}, "vCPU is missing"),
        ({"memory": "lots"}, "memory is 'lots', not a number above 0"),
        ({"GPU_memory": {"GiB": 16}}, "GPU_memory is {'GiB': 16}, not a number"),
        ({"GPU": "one"}, "GPU is 'one', not a whole number"),
        ({"GPU": 1.5}, "GPU is 1.5, not a whole number"),
        ({"GPU_model": ["V100"]}, "GPU_model is ['V100'], not a name"),
    ],
)
def test_a_malformed_ec2_instance_is_skipped_by_name_and_the_rest_imported(tmp_path, capsys, bad, named):
    source = tmp_path / "instances.json"
    source.write_text(json.dumps([_ec2(**bad), GOOD_EC2]))
    out = tmp_path / "catalog.yaml"
    assert main(["prices", "import", str(source), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 instance(s) skipped, malformed" in err and named in err, err
    catalog = yaml.safe_load(out.read_text())
    assert list(catalog["instances"]) == ["g4dn.xlarge"]  # the bad one is not written with a made-up 0


@pytest.mark.parametrize(
    "bad, named",
    [
        ({"vCPUs": "many"}, "vCPUs is 'many'"),
        ({"MemoryGiB": "-4"}, "MemoryGiB is '-4'"),
        ({"AcceleratorCount": "x"}, "AcceleratorCount is 'x'"),
        ({"GpuInfo": "{'TotalGpuMemoryInMiB': 'big'}"}, "TotalGpuMemoryInMiB is 'big'"),
    ],
)
def test_a_skypilot_row_with_junk_hardware_is_skipped_by_name(tmp_path, capsys, bad, named):
    header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region"
    good = {"InstanceType": "g4dn.xlarge", "AcceleratorName": "T4", "AcceleratorCount": "1", "vCPUs": "4"}
    good |= {"MemoryGiB": "16", "GpuInfo": "", "Price": "0.526", "SpotPrice": "0.2", "Region": "us-east-1"}
    rows = [{**good, "InstanceType": "p3.2xlarge", **bad}, good]
    source = tmp_path / "vms.csv"
    source.write_text(
        "\n".join([header, *(",".join(f'"{row[k]}"' for k in header.split(",")) for row in rows)])
    )
    out = tmp_path / "catalog.yaml"
    assert main(["prices", "import", str(source), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "p3.2xlarge: " in err and named in err, err
    assert list(yaml.safe_load(out.read_text())["instances"]) == ["g4dn.xlarge"]


@pytest.mark.parametrize(
    "name, content, said",
    [
        ("deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("deep-object.json", '{"a":' * 50_000 + "1" + "}" * 50_000, "nested too deeply"),
        (
            "wide.csv",
            'InstanceType,Region\n"' + "x" * 131_073 + '",us-east-1\n',
            "not a readable CSV (line 2",
        ),
    ],
)
def test_a_price_list_too_deep_or_too_wide_is_one_line(tmp_path, capsys, name, content, said):
    source = tmp_path / name
    source.write_text(content)
    assert main(["prices", "import", str(source)]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("as_of", ["0001", "0001-01-01", "1970", "２０２５", "２０２５-06-01", "2025-0６"])
def test_an_as_of_in_year_one_or_in_non_ascii_digits_is_refused(tmp_path, capsys, as_of):
    source = tmp_path / "instances.json"
    source.write_text(json.dumps([GOOD_EC2]))
    assert main(["prices", "import", str(source), "--as-of", as_of]) == 2
    err = capsys.readouterr().err
    assert repr(as_of) in err or f"{as_of} is before 2006" in err
    assert "Traceback" not in err


# -- user code that ends the process or cannot train: a planning refusal, exit 2 --------------------------

TINY_USER_RUN = ["run", "--backend", "cpu", "--batch-size", "2", "--warmup", "1", "--steps", "1"]
TINY_USER_RUN += ["--windows", "1", "--threads", "1", "--image-size", "16"]


@pytest.mark.parametrize(
    "factory, said",
    [
        ("hostile_models:exits", "the factory called sys.exit(0)"),
        ("hostile_models:exits_with_status", "the factory called sys.exit(3)"),
        ("hostile_exit_on_import:model", "importing 'hostile_exit_on_import' called sys.exit(0)"),
        ("hostile_models:exits_in_forward", "its forward called sys.exit(0)"),
        ("hostile_models:zero_classes", "has a 0-class head: a classifier needs at least 2 classes"),
        ("hostile_models:no_parameters", "has no trainable parameters"),
        ("hostile_models:frozen", "has no trainable parameters"),
        ("hostile_models:integer_logits", "returns int64 logits: cross-entropy needs floating-point logits"),
        (
            "hostile_models:dict_output",
            "returns a dict with keys 'logits': the suite trains on a (batch, classes)",
        ),
        ("hostile_models:features_and_logits", "returns a tuple of 2: (2, 32) float32, (2, 10) float32"),
        ("hostile_models:fixed_size_32", "does not take 16 px images"),
    ],
)
def test_user_code_that_exits_or_cannot_train_is_a_planning_refusal(tmp_path, capsys, factory, said):
    assert main([*TINY_USER_RUN, "--workload", factory, "--out", str(tmp_path)]) == 2
    said_last = capsys.readouterr().err.splitlines()[-1]  # torch may warn first (a zero-element layer)
    assert said_last.startswith("suite: error: ") and said in said_last, said_last
    assert not list(tmp_path.iterdir())  # planning: no record, nothing measured


def test_a_named_tuple_with_logits_still_trains_on_its_logits(tmp_path, capsys):
    from suite.workloads.classifier import logits

    assert (
        main(
            [
                *TINY_USER_RUN,
                "--workload",
                "hostile_models:tensor_with_logits_attribute",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    with pytest.raises(TypeError, match=r"a tuple of 2: \(2, 32\) float32, \(2, 10\) float32"):
        logits((torch.zeros(2, 32), torch.zeros(2, 10)))  # never guessed at in a training step either


# -- a broken third-party workload never hides the rest of `suite list` -----------------------------------


def test_list_shows_the_rest_and_names_each_broken_plugin_with_its_error(monkeypatch, capsys):
    from suite.workloads import installed

    plugins = {
        "good-plugin": "user_models:small_cnn",
        "exits-plugin": "hostile_models:exits",
        "missing-plugin": "no_such_module_for_suite_tests:model",
        "raising-plugin": "user_models:raises",
        "not-a-module-plugin": "user_models:wrong_type",
    }
    monkeypatch.setattr(installed, "entry_points", lambda: plugins)  # what importlib.metadata would list
    assert main(["list"]) == 0
    out, err = capsys.readouterr()
    assert "good-plugin" in out and "dcgan64" in out and "resnet50" in out
    for name in plugins.keys() - {"good-plugin"}:
        assert name not in out
        assert f"suite: warning: installed workload {name!r} ({plugins[name]}) not listed: " in err, err
    assert "called sys.exit(0)" in err and "no_such_module_for_suite_tests" in err
    assert "weights file models/best.pt not found" in err and "returned a dict" in err


# -- bounds and environment --------------------------------------------------------------------------------

TINY_DCGAN_RUN = ["run", "--backend", "cpu", "--workload", "dcgan64", "--model-override", "ngf=8"]
TINY_DCGAN_RUN += ["--model-override", "ndf=8", "--batch-size", "2", "--warmup", "1", "--steps", "1"]
TINY_DCGAN_RUN += ["--windows", "1"]


@pytest.mark.parametrize(
    "extra, said",
    [
        (
            ["--repeat", "1000000000"],
            "--repeat must be a positive integer of at most 1,000, got '1000000000'",
        ),
        (["--steps", "9" * 5000], "--steps must be a positive integer, got '999"),
        (["--steps", "10000000"], "--steps must be a positive integer of at most 1,000,000"),
        (["--batch-size", "١٢"], "--batch-size must be a positive integer, got '١٢'"),
        (["--windows", "1_000"], "--windows must be a positive integer, got '1_000'"),
        (
            ["--dist-timeout", "1e308"],
            "--dist-timeout must be a positive number of seconds from 0.001 to 604,800",
        ),
        (["--prices", "seed-2022"], "--prices 'seed-2022' names the catalog --instance is looked up in"),
        (["--prices", ""], "--prices is empty"),
        (["--prices", "  "], "--prices is empty"),
    ],
)
def test_run_numbers_and_prices_out_of_bounds_are_refused_before_anything_runs(tmp_path, capsys, extra, said):
    assert main([*TINY_DCGAN_RUN, *extra, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "argv, said",
    [
        (
            ["batch-size", "--try-timeout", "-1"],
            "--try-timeout must be a positive number of seconds from 0.001 to 604,800, got '-1'",
        ),
        (
            ["batch-size", "--try-timeout", "0"],
            "--try-timeout must be a positive number of seconds from 0.001 to 604,800, got '0'",
        ),
        (["batch-size", "--try-timeout", "nan"], "--try-timeout must be a positive number of seconds"),
        (["sweep", "--grid", "batch-size=2", "--point-timeout", "1e12"], "to 604,800, got '1e12'"),
        (
            ["data", "synth", "--out", "x", "--count", "1", "--seed", str(2**40)],
            "--seed must be a whole number",
        ),
    ],
)
def test_other_commands_numbers_are_bounded_too(tmp_path, capsys, monkeypatch, argv, said):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    "sweep_file, inline, said",
    [
        (
            "grid:\n  batch-size: [2, 4]\n  batch_size: [8]\n",
            [],
            "keys 'batch-size' and 'batch_size' are one key",
        ),
        ("grid:\n  batch-size: [2, 4]\nfixed:\n  batch-size: 2\n", [], "option 'batch-size' is given twice"),
        ("grid:\n  nproc: [1]\n  nproc-per-node: [2]\n", [], "option 'nproc-per-node' is given twice"),
        ("grid:\n  batch-size: [2, 4]\n", ["--grid", "batch_size=8"], "option 'batch-size' is given twice"),
        ("grid:\n  batch-size: [2, 4]\n", ["--set", "batch-size=8"], "option 'batch-size' is given twice"),
        (
            None,
            ["--grid", "steps=1,2", "--set", "warmup=1", "--set", "warmup=2"],
            "option 'warmup' is given twice",
        ),
    ],
)
def test_a_sweep_option_given_twice_in_any_spelling_is_refused(tmp_path, capsys, sweep_file, inline, said):
    argv = ["sweep"]
    if sweep_file is not None:
        (tmp_path / "sweep.yaml").write_text(sweep_file)
        argv.append(str(tmp_path / "sweep.yaml"))
    argv += ["--out", str(tmp_path / "out"), *inline]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "give it once" in err, err


def test_a_repeatable_sweep_option_may_be_given_again():
    from suite.exploring import grid_options
    from suite.run_options import run_options

    spec = grid_options.parse_inline(
        ["batch-size=2,4"], ["model-override=ngf=8", "model_override=ndf=8"], run_options()
    )
    assert spec.fixed["model-override"] == ["ngf=8", "ndf=8"]


@pytest.mark.parametrize("owner", ["1", "0", "own pid", f"1@{0:.2f}", "1@x", ""])
def test_a_run_id_or_origin_from_the_environment_needs_a_proven_ancestor(monkeypatch, owner):
    from suite import context
    from suite.measurement import distributed

    owner = str(os.getpid()) if owner == "own pid" else owner  # resolved here: test ids must not vary
    env = {"SUITE_RUN_ID": "shared", "SUITE_RUN_ID_OWNER": owner}
    assert distributed.launcher_run_id(env) is None  # PID 1 is everyone's ancestor: no proof alone
    monkeypatch.setenv("SUITE_ORIGIN", "sweep")
    monkeypatch.setenv("SUITE_RUN_ID_OWNER", owner)
    assert context.drop_unowned_handoffs() == ["SUITE_ORIGIN"]
    assert "SUITE_ORIGIN" not in os.environ and "SUITE_RUN_ID_OWNER" not in os.environ
    # What a suite parent hands its child is still taken: the token names it and its start time.
    env["SUITE_RUN_ID_OWNER"] = context.owner_token(os.getppid())
    assert distributed.launcher_run_id(env) == "shared"


def test_a_users_run_with_suite_origin_in_the_shell_is_still_a_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SUITE_ORIGIN", "sweep")
    assert main([*TINY_DCGAN_RUN, "--threads", "1", "--out", str(tmp_path)]) == 0
    (record,) = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert record["origin"] == "run"  # not hidden from `suite report` as a sweep's sub-run
    assert "SUITE_ORIGIN in the environment ignored" in capsys.readouterr().err


def test_per_device_threads_beyond_a_copys_cores_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert main([*TINY_DCGAN_RUN, "--per-device", "2", "--threads", "4", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "each copy is pinned to 1 of the 2 core(s); give --threads 1 or fewer" in err, err


@pytest.mark.parametrize(
    "field, value, said",
    [
        ("classes", "cats", "field 'classes' is 'cats', not a list of distinct class names"),
        ("classes", ["a", "a"], "not a list of distinct class names"),
        ("classes", [1, 2], "not a list of distinct class names"),
        ("count", "2", "field 'count' is '2', not a whole number >= 0"),
        ("count", True, "field 'count' is True"),
        ("image_size", 8.5, "field 'image_size' is 8.5"),
        ("labels_sha256", 7, "field 'labels_sha256' is 7, not 64 hexadecimal digits"),
    ],
)
def test_a_cache_manifest_field_of_the_wrong_type_is_refused_by_name(tmp_path, field, value, said):
    from suite.data import cache
    from suite.inputs.errors import UserError

    folder = _tiny_cache(tmp_path)
    manifest_path = folder / cache.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest[field] = value
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="does not match its manifest") as refused:
        cache.open_cache(str(folder))
    assert said in str(refused.value)


def _tiny_cache(tmp_path):
    from PIL import Image

    from suite.data.prepare import prepare
    from suite.data.progress import Progress

    for label in ("cats", "dogs"):
        (tmp_path / "src" / label).mkdir(parents=True)
        Image.new("RGB", (8, 8), (10, 20, 30)).save(tmp_path / "src" / label / "a.png")
    prepare(
        str(tmp_path / "src"), 8, str(tmp_path / "cache"), workers=1, progress=Progress("t", 0, io.StringIO())
    )
    return tmp_path / "cache"


# -- two sweeps into one folder run each point once ------------------------------------------------------


def _points(count: int):
    from suite.exploring import grid

    return [
        grid.Point(i, {"batch-size": str(i + 1)}, [], {"workload": "dcgan64", "batch_size": i + 1})
        for i in range(count)
    ]


def _recording_run_point(ran: list, contested=None):
    """Stands in for the child `suite run`: writes the point's record as the child would. With CONTESTED
    (claim path -> an event set when another sweep is refused that point), it holds the point until
    another sweep has been refused it: the race the claim settles then happens at every point, on a fast
    machine or a busy one, instead of when a sleep happens to be long enough."""

    def run_point(point, out_dir, timeout_s=None, origin="sweep"):
        from suite.exploring import grid

        ran.append(point.index)
        if contested is not None:
            claim = grid.claim_path(out_dir, point)
            assert contested(claim).wait(30), f"no other sweep reached point {point.index} while it ran"
        record = run_record.new_record(
            f"p{point.index}-{len(ran)}", {"utc_time": "2026-01-01T00:00:00Z"}, point.config
        )
        record["status"] = "ok"
        run_record.write_record(record, out_dir)
        return record

    return run_point


@pytest.mark.parametrize("sweeps", [2, 3])
def test_concurrent_sweeps_into_one_folder_run_each_point_once(tmp_path, monkeypatch, sweeps):
    import threading

    from suite.exploring import grid

    ran: list[int] = []
    events, lock = {}, threading.Lock()

    def contested(path) -> threading.Event:
        with lock:
            return events.setdefault(path, threading.Event())

    real_try_claim = grid.try_claim

    def try_claim(path, wait=False):  # a refusal is another sweep reaching a point that is being run
        fd = real_try_claim(path, wait)
        if fd is None:
            contested(path).set()
        return fd

    monkeypatch.setattr(grid, "try_claim", try_claim)
    monkeypatch.setattr(grid, "run_point", _recording_run_point(ran, contested))
    outcomes = [None] * sweeps

    def one(index):
        outcomes[index] = grid.run_points(_points(6), str(tmp_path), log=lambda line: None)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(sweeps)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(ran) == list(range(6))  # each point once, whichever sweep ran it
    for outcome in outcomes:  # and every sweep reports every point, with its record
        assert [point.index for point, _ in outcome] == list(range(6))
        assert all(record["status"] == "ok" for _, record in outcome)
    assert not [name for name in os.listdir(tmp_path) if name.startswith(grid.CLAIM_PREFIX)]


def test_a_point_claimed_by_a_sweep_that_died_is_run_by_the_next(tmp_path, monkeypatch):
    import multiprocessing
    import signal

    from suite.exploring import grid

    point = _points(1)[0]
    path = grid.claim_path(str(tmp_path), point)
    ready = multiprocessing.get_context("fork").Event()

    def claimer():  # a sweep that claimed the point, then was killed -9 before any record
        grid.try_claim(path)
        ready.set()
        time.sleep(60)

    process = multiprocessing.get_context("fork").Process(target=claimer)
    process.start()
    assert ready.wait(20)
    assert grid.try_claim(path) is None  # held while its claimer lives
    os.kill(process.pid, signal.SIGKILL)
    process.join()
    assert os.path.exists(path)  # the dead claimer's file is still there ...
    ran: list[int] = []
    monkeypatch.setattr(grid, "run_point", _recording_run_point(ran))
    (pair,) = grid.run_points([point], str(tmp_path), log=lambda line: None)
    assert ran == [0] and pair[1]["status"] == "ok"  # ... but its lock died with it: the point runs
