"""Files that block, and readers that went around the bounded reader.

A "regular" file whose read waits (`/proc/kmsg`: size 0, and each read waits for the kernel's next message,
taking it from the kernel log as root) passed the regular-file check and hung every reader. Here it is never
read: the kernel's file systems are refused by `fstatfs` before a byte is read, and the reader never turns
blocking on. The blocking file is emulated harmlessly: a FIFO that the test holds open (so a read waits
forever), reported as a size-0 regular file by a patched `os.fstat`. Real pseudo files are `/proc/self/...`
and `/sys/...` files, which are harmless to read; nothing here opens `/proc/kmsg`.

Every `open` of a path in `suite/`, `backends/` and `workloads/` goes through the one reader; the last test
reads the source and fails on a new one, unless it is allow-listed here with its reason.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import pathlib
import signal
import stat
import sys

import pytest
from test_reliability_inputs import good_record

from suite import run_record
from suite.cli import main
from suite.inputs import files
from suite.inputs.errors import UserError
from suite.run_record import read as record_read
from suite.run_record.schema import NotARecord

ROOT = pathlib.Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def deadline(seconds=10):
    """Fail, not hang, when a reader blocks: SIGALRM after SECONDS, then every second until the block ends
    (code that catches every exception, such as a decoder skipping bad images, swallows the first)."""

    def expired(*_):
        raise AssertionError(f"a reader blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def blocking(monkeypatch):
    """plant(path): a file at PATH that fstat calls a regular file of size 0 and whose read waits forever
    (a FIFO held open for writing by the test, never written to): /proc/kmsg without the kernel."""
    held = []
    real_fstat = os.fstat

    def plant(path) -> str:
        path = str(path)
        os.mkfifo(path)
        held.append(os.open(path, os.O_RDWR | os.O_NONBLOCK))  # a writer: a read waits, never sees EOF
        inode = os.stat(path).st_ino

        def fstat(fd):
            found = real_fstat(fd)
            if stat.S_ISFIFO(found.st_mode) and found.st_ino == inode:
                fields = list(tuple(found)[:10])
                fields[0] = stat.S_IFREG | 0o444  # st_mode
                fields[6] = 0  # st_size: what /proc/kmsg reports
                return os.stat_result(fields)
            return found

        monkeypatch.setattr(os, "fstat", fstat)
        return path

    yield plant
    for fd in held:
        os.close(fd)


WAITS = "waits for data"


# -- class 1: a "regular" file whose read blocks ------------------------------------------------------


def test_the_emulated_file_really_blocks_a_plain_read(tmp_path, blocking):
    # The stand-in is faithful: a regular file of size 0 by fstat, and a blocking read would wait.
    path = blocking(tmp_path / "kmsg")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        found = os.fstat(fd)
        assert stat.S_ISREG(found.st_mode) and found.st_size == 0
        with pytest.raises(BlockingIOError):
            os.read(fd, 1)
    finally:
        os.close(fd)


def test_the_reader_refuses_a_regular_file_whose_read_would_wait(tmp_path, blocking):
    path = blocking(tmp_path / "x.json")
    with deadline(10), pytest.raises(files.NotAFile, match=WAITS):
        files.read_bytes(path, 1024)
    with deadline(10), pytest.raises(NotARecord, match=WAITS):
        record_read.read_record(path)


@pytest.mark.parametrize("command", ["report", "compare", "report-path"])
def test_report_and_compare_skip_a_blocking_record_by_name(tmp_path, capsys, blocking, command):
    for i in range(2):
        run_record.write_record(good_record(f"good{i}"), str(tmp_path))
    blocking(tmp_path / "bad.json")
    argv = {
        "report": ["report", str(tmp_path), "--format", "json"],
        "compare": ["compare", str(tmp_path), str(tmp_path), "--format", "json"],
        "report-path": [
            "report",
            str(tmp_path / "good0.json"),
            str(tmp_path / "bad.json"),
            "--format",
            "json",
        ],
    }[command]
    with deadline(10):
        assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)
    assert "skipped" in captured.err and "bad.json" in captured.err and WAITS in captured.err


def test_sweep_resume_and_fleet_folders_skip_a_blocking_record(tmp_path, blocking):
    from suite.exploring.grid import existing_records
    from suite.fleet.sky_driver import recorded_instances

    record = good_record("good")
    record["config"]["instance"] = "p3.2xlarge"
    run_record.write_record(record, str(tmp_path))
    blocking(tmp_path / "bad.json")
    said = []
    with deadline(10):
        assert [r["run_id"] for r in existing_records(str(tmp_path), warn=said.append)] == ["good"]
        assert recorded_instances(str(tmp_path)) == {"p3.2xlarge"}
    assert len(said) == 1 and WAITS in said[0]


@pytest.mark.parametrize(
    "reader",
    [
        lambda path: main(["prices", "list", path]),
        lambda path: main(["prices", "import", path, "--format", "ec2instances"]),
        lambda path: main(["published", "import", path]),
        lambda path: main(["sweep", path, "--out", os.path.dirname(path) + "/out"]),
        lambda path: main(["sweep", "--model-list", path, "--out", os.path.dirname(path) + "/out"]),
        lambda path: main(["fleet", "plan", path]),
    ],
    ids=["catalog", "price-list", "published-figures", "sweep-file", "model-list", "campaign-file"],
)
def test_a_persons_blocking_file_is_one_line_never_waited_on(tmp_path, capsys, blocking, reader):
    path = blocking(tmp_path / "bad.yaml")
    with deadline(10):
        assert reader(path) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.yaml" in err and WAITS in err and "Traceback" not in err, err


@pytest.mark.parametrize("name", ["manifest.json", "labels.npy", "images.u8"])
def test_a_cache_file_that_blocks_is_refused_by_name(tmp_path, blocking, name):
    from suite.data import cache, prepare

    source = tmp_path / "src" / "a"
    source.mkdir(parents=True)
    from PIL import Image

    for i in range(2):
        Image.new("RGB", (8, 8), (i * 100, 0, 0)).save(source / f"{i}.png")
    prepare.prepare(str(tmp_path / "src"), 8, str(tmp_path / "c"), workers=1)
    os.unlink(tmp_path / "c" / name)
    blocking(tmp_path / "c" / name)
    cache._CHECKED.clear()
    with deadline(10), pytest.raises(UserError, match=name.replace(".", r"\.")):
        cache.open_cache(str(tmp_path / "c"), full_check=True)


def test_the_suites_own_caches_skip_a_blocking_file(tmp_path, monkeypatch, blocking):
    from suite.measurement import counts_cache, flops

    monkeypatch.setattr(counts_cache, "cache_path", lambda kind: str(tmp_path / "bad.json"))
    blocking(tmp_path / "bad.json")
    with deadline(10):
        assert counts_cache.read(flops.CACHE_KIND) == {}


PSEUDO = ["/proc/self/status", "/proc/version", "/sys/kernel/mm/transparent_hugepage/enabled"]


@pytest.mark.parametrize("target", PSEUDO)
def test_the_kernels_own_files_are_refused_before_a_byte_is_read(tmp_path, capsys, monkeypatch, target):
    if not os.path.exists(target):
        pytest.skip(f"{target} is not on this machine")
    reads = []
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(fd) or real_read(fd, n))
    with pytest.raises(files.NotAFile, match="kernel's (procfs|sysfs)"):
        files.read_bytes(target, 1 << 20)
    assert reads == []  # refused by its file system, before any read
    # and through a link in a results folder, and named directly to a person's-file reader
    run_record.write_record(good_record("good"), str(tmp_path))
    os.symlink(target, tmp_path / "bad.json")
    monkeypatch.undo()
    assert main(["report", str(tmp_path), "--format", "json"]) == 0
    assert main(["sweep", "--model-list", str(tmp_path / "bad.json"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("the kernel's") == 2 and "bad.json" in err, err


def test_the_suites_fixed_files_are_read_without_waiting(tmp_path, blocking):
    from suite import context

    path = blocking(tmp_path / "fixed")
    with deadline(10):
        assert files.read_fixed_file(path) is None  # a read that would wait reads nothing
        assert files.read_fixed_file(str(tmp_path / "absent")) is None
    os.mkfifo(tmp_path / "stamp")  # no writer: a plain open() would wait for one
    with deadline(10):
        assert context._stamped_commit(str(tmp_path / "stamp")) is None
    (tmp_path / "cpuinfo").write_text("model name\t: Test CPU\n")
    assert files.read_fixed_file(str(tmp_path / "cpuinfo")) == "model name\t: Test CPU\n"


def test_an_image_that_blocks_is_skipped_by_prepare_and_named_by_the_loader(tmp_path, blocking):
    from PIL import Image

    from suite.data import imagefolder, prepare

    folder = tmp_path / "src" / "a"
    folder.mkdir(parents=True)
    for i in range(3):
        Image.new("RGB", (8, 8)).save(folder / f"{i}.png")
    os.mkfifo(folder / "fifo.png")  # no writer: Image.open(path) waited for one
    blocking(folder / "kmsg.png")
    with deadline(20):
        manifest = prepare.prepare(str(tmp_path / "src"), 8, str(tmp_path / "c"), workers=1)
    skipped = json.dumps(manifest)
    assert manifest["count"] == 3 and "fifo.png" in skipped and "kmsg.png" in skipped
    dataset = imagefolder.image_folder_class()(str(tmp_path / "src"))
    assert dataset.loader is imagefolder.load_image
    with deadline(10), pytest.raises(imagefolder.UnreadableImage, match="FIFO"):
        dataset[[p for p, _ in dataset.samples].index(str(folder / "fifo.png"))]


def test_a_sweep_claim_planted_as_a_fifo_or_link_is_refused_not_waited_on(tmp_path):
    from suite.exploring import grid

    os.mkfifo(tmp_path / "claim")
    os.symlink("/dev/zero", tmp_path / "link")
    with deadline(10):
        for name in ("claim", "link"):
            with pytest.raises(UserError, match="not a regular file"):
                grid.try_claim(str(tmp_path / name))
        fd = grid.try_claim(str(tmp_path / "fine"))
    assert fd is not None and "pid" in (tmp_path / "fine").read_text()
    grid.release_claim(str(tmp_path / "fine"), fd)


# -- class 2: every open of a path goes through the one reader --------------------------------------

# Calls that open a file by its path. `X.open(...)` covers os.open, io.open and PIL's Image.open.
OPENERS = {"open", "fdopen", "memmap", "fromfile", "loadtxt", "genfromtxt"}
LOADERS = {("np", "load"), ("numpy", "load"), ("torch", "load"), ("pickle", "load")}

# (file, function, call) -> why it may open a path itself. Everything else goes through
# suite/inputs/files.py: read_bytes / read_text / read_user_file / read_record for a person's files,
# open_regular for one read as a stream, read_fixed_file for the suite's own fixed kernel files.
ALLOWED = {
    (
        "suite/atomic.py",
        "_fsync_folder",
        "os.open",
    ): "the folder the writer just wrote into, opened to fsync it",
    ("suite/atomic.py", "_new_temporary", "os.open"): "the writer's own new temporary (O_CREAT | O_EXCL)",
    ("suite/atomic.py", "atomic_path", "open"): "the writer's own temporary, made just before",
    ("suite/atomic.py", "atomic_open", "open"): "the writer's own temporary, made just before",
    (
        "suite/data/prepare.py",
        "_write_images",
        "open",
    ): "writes the cache's images.u8 in its new temporary folder",
    ("suite/fleet/sky_driver.py", "Fleet.follow", "open"): "appends to the campaign's own log file",
    ("suite/exploring/grid.py", "_open_claim", "os.open"): (
        "a sweep's claim file: O_NONBLOCK | O_NOFOLLOW, and refused unless a regular file"
    ),
    ("suite/reporting/page.py", "_plots", "open"): "a plot the suite just drew in its own temporary folder",
    (
        "suite/inputs/streams.py",
        "_reopen_on_null",
        "os.open",
    ): "/dev/null, in the place of a closed standard stream",
    (
        "suite/inputs/streams.py",
        "checked_streams",
        "open",
    ): "a standard stream's own descriptor (0, 1, 2), not a path",
}
READER = "suite/inputs/files.py"  # the one reader itself


def _handles(function: ast.AST) -> set[str]:
    """Names bound by `with open_regular(...) as NAME` in FUNCTION: file objects, not paths."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("open_regular"):
                    if isinstance(item.optional_vars, ast.Name):
                        names.add(item.optional_vars.id)
    return names


def path_opens(path: pathlib.Path) -> list[tuple[str, str, str, int]]:
    """(file, function, call, line) for each call in PATH that opens a file by a path it was given."""
    found = []
    relative = path.relative_to(ROOT).as_posix()

    def visit(node, where, handles):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{where}.{child.name}" if where else child.name
                inner = handles | (_handles(child) if not isinstance(child, ast.ClassDef) else set())
                visit(child, name, inner)
                continue
            if isinstance(child, ast.Call):
                func = child.func
                text = ast.unparse(func)
                first = child.args[0] if child.args else None
                given_a_handle = isinstance(first, ast.Name) and first.id in handles
                opener = (isinstance(func, ast.Name) and func.id == "open") or (
                    isinstance(func, ast.Attribute)
                    and func.attr in OPENERS
                    and bool(child.args or child.keywords)
                )
                loader = isinstance(func, ast.Attribute) and (ast.unparse(func.value), func.attr) in LOADERS
                pathlib_read = (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("read_text", "read_bytes", "open")
                    and isinstance(func.value, ast.Call)
                    and ast.unparse(func.value.func).endswith("Path")
                )
                if (opener or loader) and not given_a_handle or pathlib_read:
                    found.append((relative, where or "<module>", text, child.lineno))
            visit(child, where, handles)

    visit(ast.parse(path.read_text(encoding="utf-8")), "", set())
    return found


def package_files():
    for top in ("suite", "backends", "workloads"):
        yield from sorted((ROOT / top).rglob("*.py"))


def test_every_open_of_a_path_goes_through_the_one_reader():
    found = [
        hit
        for path in package_files()
        if path.relative_to(ROOT).as_posix() != READER
        for hit in path_opens(path)
    ]
    unexplained = [
        f"{file}:{line} {function}: {call}(...)"
        for file, function, call, line in found
        if (file, function, call) not in ALLOWED
    ]
    assert not unexplained, (
        "open a person's file through suite/inputs/files.py (read_bytes, read_text, read_user_file, "
        "open_regular), or allow-list an internal file in this test with its reason:\n"
        + "\n".join(unexplained)
    )
    stale = set(ALLOWED) - {(file, function, call) for file, function, call, _ in found}
    assert not stale, f"allow-listed opens that are no longer in the code: {sorted(stale)}"


@pytest.mark.parametrize(
    "source",
    [
        "def f(p):\n    with open(p) as h:\n        return h.read()\n",
        "import numpy as np\ndef f(p):\n    return np.load(p)\n",
        "from PIL import Image\ndef f(p):\n    return Image.open(p)\n",
        "import os\ndef f(p):\n    return os.open(p, os.O_RDONLY)\n",
        "import pathlib\ndef f(p):\n    return pathlib.Path(p).read_text()\n",
        "import numpy as np\ndef f(p):\n    return np.memmap(p, mode='r')\n",
    ],
    ids=["open", "np.load", "Image.open", "os.open", "Path.read_text", "np.memmap"],
)
def test_the_source_check_sees_each_way_to_open_a_path(tmp_path, monkeypatch, source):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "m.py").write_text(source)
    assert len(path_opens(tmp_path / "m.py")) == 1
    handle = "from suite.inputs.files import open_regular\nimport numpy as np\ndef f(p):\n    with open_regular(p) as h:\n        return np.load(h)\n"
    (tmp_path / "ok.py").write_text(handle)
    assert path_opens(tmp_path / "ok.py") == []
