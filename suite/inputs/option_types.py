"""The types of command-line options, used by every parser (`type=` in argparse): a value is checked and
converted where it is typed, so a RunSpec holds what its hints say, and bad input is one line naming
the option and what it accepts (a UserError: exit 2)."""

from __future__ import annotations

import argparse
import os
import re

from suite.inputs import errors, numbers


def positive_int(flag: str, most: int = errors.COUNT_CEILING):
    """A whole number from 1 to MOST (every count has a ceiling: errors.COUNT_CEILING unless said)."""
    return lambda text: numbers.positive_int(flag, text, most)


def non_negative_int(flag: str, most: int = errors.COUNT_CEILING):
    """A whole number from 0 to MOST."""
    return lambda text: numbers.non_negative_int(flag, text, most)


def quantity(flag: str, kind: numbers.Kind):
    """A plain decimal number of KIND (a price per hour, hours, a percentage ...), within its range."""
    return lambda text: numbers.number(flag, text, kind)


def seconds(flag: str):
    """A timeout: a positive number of seconds, at most a week."""
    return quantity(flag, numbers.SECONDS)


# A duration's units (`15m`, `90s`, `1h`, `1h30m`): the first letter names it.
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}


def duration(flag: str):
    """A wall time: `15m`, `90s`, `1h`, `1h30m`, or plain seconds; positive, at most a week."""
    import re

    def parse(text: str) -> float:
        spelt = str(text).strip().lower()
        parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?:in)?)?(?:(\d+(?:\.\d+)?)s)?", spelt)
        if parts and any(parts.groups()):
            total = sum(float(v) * u for v, u in zip(parts.groups(), _DURATION_UNITS.values()) if v)
        else:
            total = numbers.decimal(spelt)
        if total is None or not numbers.SECONDS.holds(total):
            raise errors.UserError(
                f"{flag} must be a wall time from 1 ms to a week, such as 15m, 90s, 1h or 1h30m (or seconds), "
                f"got {text!r}"
            )
        return total

    return parse


def byte_size(flag: str):
    """A size in bytes, such as 2GiB, 512MiB or 1.5GB."""
    from suite.inputs.sizes import parse_byte_size

    return lambda text: parse_byte_size(flag, text)


def output_file(flag: str):
    """A file the command writes (a report, a catalog): a regular file, which is replaced, or a new path.
    A device, FIFO, socket, folder or symlink is refused before any work: the atomic writer would put a
    regular file in its place (as root, even in place of /dev/full)."""
    from suite import atomic

    def parse(text: str) -> str:
        kind = atomic.what_is_there(text) if text else "empty"
        if kind == "a folder":  # as `suite run --out` takes: here the command writes one file
            raise errors.UserError(
                f"{flag} {text!r} is a folder: this command writes one file, such as "
                f"{os.path.join(text, 'report.md')!r} (the commands that write records take a folder)"
            )
        if kind is not None:
            raise errors.UserError(f"{flag} {text!r} is {kind}: give a regular file or a new path")
        return text

    return parse


# A new --out path for records that reads as a file's name: a folder of that name would be made for them.
_FILE_NAME = re.compile(r".*\.(json|md|csv|html|txt|yaml|yml)$", re.IGNORECASE)


def output_folder(flag: str):
    """A folder the command writes records into: a folder (a symlink to one is fine: writing inside it
    replaces nothing) or a new path. A regular file, device, FIFO or socket is refused by name."""
    from suite import atomic

    def parse(text: str) -> str:
        if not text:
            kind = "empty"
        elif os.path.isdir(text) or not os.path.lexists(text):
            kind = None
        else:  # what_is_there calls a regular file None ("replaceable"): here a file is refused too
            kind = atomic.what_is_there(text) or "a file"
            if kind == "a symlink":
                kind = "a symlink to something other than a folder"
        if kind is not None:
            raise errors.UserError(f"{flag} {text!r} is {kind}: give a folder or a new path")
        if not os.path.lexists(text) and _FILE_NAME.fullmatch(text):
            # `suite run --out x.json` made a folder named x.json for its record: refused, saying where a
            # file comes from instead (report's and compare's --out is one).
            raise errors.UserError(
                f"{flag} {text!r} names a file, but this command writes its records into a folder "
                f"(one file each, named by run id): give a folder, such as "
                f"{os.path.splitext(text)[0] or 'results'!r}; `suite run --json` prints the record instead"
            )
        return text

    return parse


def comma_list(option: str, text, parse, example: str | None = None) -> list:
    """'0,1,2' -> [parse('0'), parse('1'), parse('2')]; None -> [None] (the default setting). EXAMPLE, if
    given, shows a valid list in the error."""
    if text is None:
        return [None]
    items = [item.strip() for item in str(text).split(",")]
    if not all(items):
        such_as = f" such as {example}" if example else ""
        raise errors.UserError(f"{option} must be a comma-separated list{such_as}, got {text!r}")
    return [parse(item) for item in items]


class Switch(argparse.Action):
    """A true/false option spelled alike in every command: `--NAME` (on), `--NAME VALUE` with VALUE in the
    one vocabulary of `errors.truth` (on/off, true/false, yes/no, 1/0), and `--no-NAME` (off). So `suite run
    --pin-memory off`, the advice "try --pin-memory on" and `suite loader --pin-memory on,off` all parse.
    With many=True the value is a list of settings to try, one or more (`suite loader`)."""

    def __init__(self, option_strings, dest, many: bool = False, default=None, help=None, **kwargs):
        self.positive = option_strings[0]
        self.negative = "--no-" + self.positive[2:]
        self.many = many
        metavar = "on,off" if many else "on|off"
        super().__init__(
            [*option_strings, self.negative], dest, nargs="?", default=default, help=help, metavar=metavar
        )

    def __call__(self, parser, namespace, value, option_string=None):
        if option_string == self.negative:
            if value is not None:  # nargs="?" takes the next word: `--no-pin-memory on` is a contradiction
                raise errors.UserError(
                    f"{self.negative} takes no value, got {value!r} (give {self.negative} alone, "
                    f"or {self.positive} {self.metavar})"
                )
            settings = [False]
        elif value is None:
            settings = [True]
        elif self.many:
            settings = comma_list(
                self.positive, value, lambda item: errors.truth(self.positive, item), "on,off"
            )
        else:
            settings = [errors.truth(self.positive, value)]
        setattr(namespace, self.dest, settings if self.many else settings[0])

    def invocation(self) -> str:
        """How --help shows it: `--pin-memory [on|off], --no-pin-memory` (the negative takes no value)."""
        return f"{self.positive} [{self.metavar}], {self.negative}"


# The parser every command uses (and `suite run`'s options alone, in run_options): here, below the CLI,
# so that what declares options never imports the command line.
class Once(argparse.Action):
    """An option that may be given once: a second value is refused rather than silently replacing the
    first (`--instance p5.48xlarge --instance p5en.48xlarge` cannot say which instance it ran on)."""

    def __call__(self, parser, namespace, value, option_string=None):
        given = getattr(namespace, self.dest, None)
        if given is not None and given != self.default:
            raise argparse.ArgumentError(self, f"given twice ({given!r}, then {value!r}): give it once")
        setattr(namespace, self.dest, value)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, but a Switch shows its `--no-` form without a value."""

    def _format_action_invocation(self, action):  # argparse's one hook for this line
        if isinstance(action, Switch):
            return action.invocation()
        return super()._format_action_invocation(action)


class Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is a UserError (one line, exit 2) rather than usage + exit."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise errors.UserError(f"{message} (see `{self.prog} --help`)")

    def parse_args(self, args=None, namespace=None):
        """argparse's, but an argument no option takes is refused by the command it was given to: its help
        is the one that lists the options (argparse's own error names the top `suite --help`), and the
        nearest of its options is named (`--output`: did you mean --out?)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if not extras:
            return parsed
        command = self._command_parser(parsed)
        import difflib

        flags = [flag for flag in command._option_string_actions if flag.startswith("--")]
        near = next((difflib.get_close_matches(e.split("=")[0], flags, n=1, cutoff=0.7) for e in extras), [])
        hint = f"did you mean {near[0]}? " if near else ""
        raise errors.UserError(
            f"unrecognized arguments: {' '.join(extras)} ({hint}see `{command.prog} --help`)"
        )

    def _command_parser(self, parsed):
        """The parser of the command PARSED names, a sub-command's where it has one (`suite fleet plan`)."""
        parser = self
        while parser._subparsers:
            (action,) = parser._subparsers._group_actions
            name = getattr(parsed, action.dest, None)
            if name not in action.choices:
                break
            parser = action.choices[name]
        return parser
