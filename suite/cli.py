"""`suite` command line. Each sub-command lives in suite/commands/<name>.py and is found there.

Errors a person caused (UserError, bad arguments) print one line, `suite: error: ...`, exit 2.
Ctrl-C exits 130 with a short message.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import pkgutil
import re
import signal
import sys
import threading

import suite
from suite.inputs import errors
from suite.inputs.errors import UserError
from suite.inputs.option_types import Parser

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def build_parser(argv: list[str] | None = None) -> Parser:
    """The command line's parser. Given the arguments, it declares only the named command's options:
    declaring every command's costs more than the parse (argparse builds a help formatter for each
    option it checks), and a test or a sweep runs the command line hundreds of times."""
    parser = Parser(
        prog="suite",
        description="Benchmark deep-learning training on CPU, CUDA and Gaudi: "
        "throughput, cost per image, and where the bottleneck is.",
    )
    parser.add_argument("--version", action="version", version=f"suite {suite.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    import suite.commands as commands

    modules = {info.name.replace("_", "-"): info.name for info in pkgutil.iter_modules(commands.__path__)}
    named = modules.get(argv[0]) if argv else None
    for module in [named] if named else sorted(modules.values()):  # no command named: all, to list them
        importlib.import_module(f"suite.commands.{module}").add_parser(subparsers)
    return parser


def preset_device_environment(argv: list[str]) -> None:
    """Environment a device fixes at `import torch`, set from the command line before anything imports
    torch (build_parser does). From torch 2.5, `import torch` loads out-of-tree backends (Habana's bridge)
    and the bridge fixes its execution mode there."""
    table = _habana_release_table()
    if table is not None:
        table.preset_mode(argv)


@functools.cache  # once a process, not at every command line
def _habana_release_table():
    """backends/habana_releases.py, loaded from its file: importing the suite.backends package would import
    torch first. None where the file is not there."""
    package = importlib.util.find_spec("suite.backends")
    for root in (package.submodule_search_locations or ()) if package else ():
        path = os.path.join(root, "habana_releases.py")
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_suite_habana_releases_preimport", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # dataclasses look their module up there
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[spec.name]  # not half a module (a failed load is not cached either)
                raise
            return module
    return None


# A value that starts with '-' after an option (`--size -5`, `--batch-size -2`) reads to argparse as another
# option, and the message becomes "expected one argument". The suite has no short options but -h, so a
# token like that is the option's value: joined as `--size=-5`, it reaches the option's own check, which
# names the value and what is accepted.
_DASH_VALUE = re.compile(r"-(?!-)(?!h$).+")


def join_dash_values(argv: list[str]) -> list[str]:
    joined, index = [], 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            return joined + argv[index:]
        following = argv[index + 1] if index + 1 < len(argv) else None
        if token.startswith("--") and "=" not in token and following and _DASH_VALUE.fullmatch(following):
            joined.append(f"{token}={following}")
            index += 2
            continue
        joined.append(token)
        index += 1
    return joined


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _stop_on_sigterm():
    """SIGTERM (`kill`, `timeout`, a scheduler's preemption) gets the orderly stop of Ctrl-C: the same
    KeyboardInterrupt, so a sweep or a launcher stops its children and says how to resume. Not in a
    torchrun worker: there SIGTERM is torchrun's way of stopping ranks and must end them as it expects.
    Returns the handler it replaced (None where none was installed)."""
    if threading.current_thread() is not threading.main_thread() or "RANK" in os.environ:
        return None
    global _FORK_HOOKED
    if not _FORK_HOOKED:
        # Forked helpers (decoding pools, DataLoader workers) keep SIGTERM's default: their parent stops
        # them with it (Pool.terminate), and a KeyboardInterrupt raised inside a pool worker can leave a
        # queue lock held and its siblings waiting forever.
        os.register_at_fork(after_in_child=_default_sigterm)
        _FORK_HOOKED = True
    return signal.signal(signal.SIGTERM, _interrupt)


_FORK_HOOKED = False


def _default_sigterm() -> None:
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:
        pass  # forked from another thread: Python ran no handler of ours there


def _drop_unowned_handoffs() -> None:
    from suite import context

    for name in context.drop_unowned_handoffs():
        errors.warn(
            f"{name} in the environment ignored: only a suite command sets it, for the runs it starts"
        )


def _check_environment() -> None:
    """Every variable the suite reads is checked, owned or ignored with a warning, before anything reads it
    (docs/failure-modes.md lists them): what a suite parent hands down needs the parent's proof; a launcher's
    rank variables count only as the set a launcher makes, and their values are checked (a UserError);
    the override takes 1 or 0."""
    from suite import limits
    from suite.measurement import distributed

    _drop_unowned_handoffs()
    for ignored in (distributed.check_launcher_environment(), limits.check_override_env()):
        if ignored:
            errors.warn(ignored)


def _interrupted(records_before: int, argv: list[str]) -> str:
    """What an interrupted command says. A `suite run` (one run, or one launched through torchrun) says
    where the record it had already written when the stop came is (the stop came after the record, before
    the command's end; a launcher's rank 0 may have written it), or that nothing was written (a run stopped
    after a timed window writes that record itself and says so). Commands that start runs of their own
    (sweeps, a --repeat group) say what they kept themselves; a run of theirs stopped after a timed window
    keeps a record of status interrupted, so no "nothing was written" is claimed for them."""
    from suite.run_record import written_since

    one_run = argv[:1] == ["run"] and not any(a == "--repeat" or a.startswith("--repeat=") for a in argv)
    if not one_run:
        return "interrupted"
    written = written_since(records_before)
    if not written:
        return "interrupted (nothing was written for the unfinished run)"
    return f"interrupted after its record was written ({written[-1]}; kept)"


def main(argv: list[str] | None = None) -> int:
    from suite.inputs import streams

    previous_streams = streams.checked_streams()  # a closed or full stdout or stderr: never a traceback
    try:
        return _main(argv)
    finally:
        streams.restore(previous_streams)


def _main(argv: list[str] | None) -> int:
    from suite import context, limits
    from suite.inputs import streams
    from suite.vendors import optional_modules

    ignored = limits.end_with_launcher()  # a torchrun rank ends with the launcher that started it
    if ignored:
        errors.warn(ignored)
    try:
        _check_environment()  # before the load sample, which reads WORLD_SIZE and SUITE_SIBLINGS
    except UserError as error:
        errors.say_error(error)
        return EXIT_USER_ERROR
    context.start_load_sample()  # the record's host-load sample spans start-up, not a sleep before the run

    optional_modules.quarantine_broken()  # before anything imports torch (which imports pynvml)
    previous = _stop_on_sigterm()
    from suite.run_record import written_since

    records_before = len(written_since(0))
    given = sys.argv[1:] if argv is None else list(argv)
    try:
        preset_device_environment(given)
        arguments = join_dash_values(given)
        parser = build_parser(arguments)
        args = parser.parse_args(arguments)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USER_ERROR
        status = int(args.func(args) or 0)
        streams.flush_stdout()  # now, where a failure is one line, not at exit
        return status
    except UserError as error:
        from suite import run_record

        errors.say_error(error)
        return (
            run_record.EXIT_RECORD_NOT_WRITTEN
            if isinstance(error, run_record.RecordNotWritten)
            else EXIT_USER_ERROR
        )
    except KeyboardInterrupt:
        print(f"\nsuite: {_interrupted(records_before, given)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    raise SystemExit(main())
