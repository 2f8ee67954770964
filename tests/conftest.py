"""Shared test helpers: tiny versions of the real registry entries, so the suite stays fast on 2 cores."""

from __future__ import annotations

import atexit
import glob
import itertools
import json
import os
import sys

import pytest

# The test modules (which pytest rewrites for its assertions) and the suite's own are compiled once and kept
# in __pycache__ (ignored by git) even where PYTHONDONTWRITEBYTECODE is set, as on the project's 2-core
# machine: there every pytest-xdist worker compiled all of them again at every collection (about 6 s of
# CPU a worker). Set here, before either is imported; a child process keeps the environment's setting.
sys.dont_write_bytecode = False

# pytest-xdist runs one worker per core, and torch in each worker (and in every run a test starts) would
# use every core: OpenMP threads then spin waiting on peers the other worker has descheduled, and a test
# that takes 7 s alone took 45 s beside the GPU-matrix dry run. One compute thread per worker and per
# child run; a test that asks for threads (--threads) still gets them. Set before anything imports torch.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")


_EXIT_STATUS: list[int] = []


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # an xdist worker itself (its variables also reach its children)
        # A worker whose results are all with pytest ends without tearing down torch's modules one by one
        # (1 to 2 s that the whole run waits for), after the exit handlers registered since it started
        # (torch's, multiprocessing's), with the status pytest gave it.
        atexit.register(_exit_without_interpreter_teardown)


def pytest_sessionfinish(session, exitstatus):
    _EXIT_STATUS.append(int(exitstatus))


def _exit_without_interpreter_teardown() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_EXIT_STATUS[-1] if _EXIT_STATUS else 1)


# The repository's root: child `suite` processes run from here.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The wall-clock limit on a child process that imports torch or trains: a safety net that only a hang
# reaches. A child run takes 10 to 60 s on a quiet 2-core machine and four times that at a load of 8, where
# limits of 300 s were reached by runs that would have passed.
SAFETY_NET_S = 1800


def records(folder) -> dict[str, dict]:
    """Every JSON file in FOLDER by file name, read as a record."""
    found = {}
    for path in glob.glob(os.path.join(str(folder), "*.json")):
        with open(path) as handle:
            found[os.path.basename(path)] = json.load(handle)
    return found


def only_record(folder) -> dict:
    """The one record in FOLDER (a test that expects exactly one)."""
    found = records(folder)
    assert len(found) == 1, sorted(found)
    return next(iter(found.values()))


def suite_env(tmp_path=None, **extra) -> dict[str, str]:
    """This process's environment for a child `suite`, less the suite's own variables (a run id, an injected
    fault; the cache folder and the machine's stand-in files are kept), torchrun's rank variables, which would make it part of another run, and
    pytest-xdist's;
    with TMP_PATH, a cache folder and a temporary folder of its own (torchrun leaves a folder in the temporary
    folder at each start, which would pile up outside pytest's rotated ones). EXTRA is added."""
    env = {
        key: value
        for key, value in os.environ.items()
        if (key in ("SUITE_CACHE_DIR", "SUITE_SYSFS_ROOT") or not key.startswith("SUITE_"))
        and key not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")
        and not key.startswith("PYTEST_XDIST_")  # a child pytest is not this session's worker
    }
    if tmp_path is not None:
        env["SUITE_CACHE_DIR"] = str(tmp_path / "cache")
        (tmp_path / "tmp").mkdir(parents=True, exist_ok=True)
        env["TMPDIR"] = str(tmp_path / "tmp")
    env.update(extra)
    return env


def suite_here(capsys, argv: list[str]) -> tuple[int, str, str]:
    """`suite ARGV` run in this process, which has imported torch already (a fresh `suite sweep` or
    `batch-size` would, to check that the tiny widths build): its exit status, stdout and stderr. For a
    command whose runs are fresh processes anyway; a test of signals or of the entry point starts its own."""
    from suite import cli

    status = cli.main(argv)
    printed = capsys.readouterr()
    return status, printed.out, printed.err


# Architecture overrides that shrink each family but keep its structure (same layers, same code paths).
TINY = {
    "dcgan64": {"ngf": 8, "ndf": 8},
    "dcgan64-safe": {"ngf": 8, "ndf": 8, "nz": 16},
    "dcgan128-safe": {"ngf": 4, "ndf": 4, "nz": 16},
    "dcgan128": {"ngf": 4, "ndf": 4, "nz": 16},
    "resnet50": {"image_size": 32},
    "resnet50-inat": {"image_size": 32},
    "resnet18-cifar": {"image_size": 32},
    "gpt2-small": {"layers": 2, "width": 32, "heads": 2, "context": 16, "vocabulary": 64},
    "llama-1b": {"layers": 2, "width": 32, "heads": 4, "kv_heads": 2, "context": 16, "vocabulary": 64},
}


def model_override_options(overrides: dict) -> list[str]:
    """OVERRIDES as `--model-override KEY=VALUE` options."""
    return [arg for key, value in overrides.items() for arg in ("--model-override", f"{key}={value}")]


# The smallest real `suite run` on the CPU: batch 2, one warm-up step, one window of one step, one thread
# (the cores are shared; more threads would only contend). No workload: add TINY_DCGAN_OPTIONS, or a name.
TINY_OPTIONS = ["--backend", "cpu", "--batch-size", "2", "--warmup", "1", "--steps", "1", "--windows", "1"]
TINY_OPTIONS += ["--threads", "1"]

# The real dcgan64 registry entry at its TINY widths.
TINY_DCGAN_OPTIONS = ["--workload", "dcgan64", *model_override_options(TINY["dcgan64"])]

# The base command line of every test that runs `suite run` (in this process or a child): `suite` + these.
TINY_RUN = ["run", *TINY_OPTIONS, *TINY_DCGAN_OPTIONS]


def changed(options: list[str], **values) -> list[str]:
    """OPTIONS with the value after `--name` replaced for each name=value (underscores are dashes); a
    name not in OPTIONS is added at the end. For a test that genuinely needs another value than the base."""
    options = list(options)
    for name, value in values.items():
        flag = "--" + name.replace("_", "-")
        if flag in options:
            options[options.index(flag) + 1] = str(value)
        else:
            options += [flag, str(value)]
    return options


def as_sets(options: list[str], leave_out=()) -> list[str]:
    """`--name value` OPTIONS as the `--set name=value` pairs of commands that run points of their own
    (`suite sweep`, `batch-size`, `diagnose`), less the names in LEAVE_OUT (the command's own options)."""
    pairs = zip(options[::2], options[1::2])
    return [
        arg for flag, value in pairs if flag[2:] not in leave_out for arg in ("--set", f"{flag[2:]}={value}")
    ]


# TINY_RUN's settings for every point of a `suite sweep` / `batch-size` (which choose the batch size).
TINY_SWEEP_SET = as_sets([*TINY_OPTIONS, *TINY_DCGAN_OPTIONS], leave_out=("batch-size",))


def tiny_config(workload: str = "dcgan64", **fields):
    from suite.spec import RunSpec

    values = {
        "backend": "cpu",
        "workload": workload,
        "batch_size": 2,
        "warmup_steps": 1,
        "steps_per_window": 2,
        "windows": 2,
        "model_overrides": dict(TINY[workload]),
    }
    values.update(fields)
    return RunSpec().replace(**values)


@pytest.fixture
def tiny():
    return tiny_config


def computed_once(tmp_path_factory, key: str, compute):
    """COMPUTE()'s result, computed once in the whole test session, whichever pytest-xdist worker asks
    first: the others wait on its lock and read it back (pickled under the session's temporary root, which
    the workers share and a new session does not). For an expensive result several tests read and none
    changes, where a module fixture would compute it again on every worker that runs one of them."""
    import fcntl
    import pickle

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's root: each worker's basetemp is a folder of its own in it
    path = root / f"computed-once-{key}.pickle"
    with open(root / f"computed-once-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, however the block ends
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = compute()
        path.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    """The CUDA backend's queries answered by fakes (torch.cuda on the CPU, a recording pynvml)."""
    from fakes import pynvml as fake_nvml
    from fakes.torch_cuda import patch_cuda

    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    fake_nvml.install(monkeypatch)
    return patch_cuda(monkeypatch)


# One catalog entry, every field filled: what price-catalog tests start from and vary.
T4_INSTANCE = {
    "provider": "aws",
    "region": "us-east-1",
    "accelerator": "NVIDIA T4",
    "accelerator_count": 1,
    "accelerator_memory_gib": 16,
    "vcpus": 4,
    "ram_gib": 16,
    "on_demand_usd_per_hour": 0.526,
    "spot_usd_per_hour": 0.189,
}


@pytest.fixture(autouse=True)
def kineto_log_level_restored():
    """A profiled run in this process sets KINETO_LOG_LEVEL for itself: no later test may inherit it."""
    before = os.environ.get("KINETO_LOG_LEVEL")
    yield
    if before is None:
        os.environ.pop("KINETO_LOG_LEVEL", None)
    else:
        os.environ["KINETO_LOG_LEVEL"] = before


@pytest.fixture(autouse=True)
def torch_threads_restored():
    """A run in this process on real data (`suite loader`, a run with --data) sets torch's threads to leave
    the loader's workers their cores: no later test may inherit the count (the next ones ran at 2)."""
    torch = sys.modules.get("torch")  # not imported by a test that needs none
    before = torch.get_num_threads() if torch is not None else None
    yield
    if before is not None and torch.get_num_threads() != before:
        torch.set_num_threads(before)


@pytest.fixture(scope="session")
def own_folders(tmp_path_factory):
    """A new empty folder at each call, under one folder of the session's. tmp_path_factory.mktemp lists
    every folder made so far to number the next, which three of these a test made quadratic: 2 s of
    the quick loop."""
    root, count = tmp_path_factory.mktemp("own"), itertools.count()

    def make(name: str) -> str:
        folder = root / f"{name}-{next(count)}"
        folder.mkdir()
        return str(folder)

    return make


@pytest.fixture(autouse=True)
def machine_says_no_instance(own_folders, monkeypatch):
    """Runs find no cloud instance in the machine's DMI files unless a test writes its own (on an AWS
    machine a run would otherwise be priced as it, and a record's config would depend on where tests ran)."""
    monkeypatch.setenv("SUITE_SYSFS_ROOT", own_folders("no-dmi"))


@pytest.fixture(autouse=True)
def own_numerics_ledger(own_folders, monkeypatch):
    """Each test has a numerics ledger of its own (the cache folder's stays shared, for its counts): a check
    another test made, or one made on this machine, never marks a test's runs, and no test's check is left
    in the machine's ledger. A child given suite_env(tmp_path) has its own cache folder, ledger included."""
    from suite.run_record import numerics_ledger

    folder = own_folders("numerics-ledger")
    monkeypatch.setattr(numerics_ledger, "folder", lambda: folder)


@pytest.fixture(autouse=True)
def no_skypilot_catalog(own_folders, monkeypatch):
    """SkyPilot's downloaded price catalogs (~/.sky/catalogs) price fleet estimates when present: tests see
    none unless they write their own under SKY_RUNTIME_DIR, so an estimate never depends on this machine."""
    monkeypatch.setenv("SKY_RUNTIME_DIR", own_folders("sky-runtime"))
