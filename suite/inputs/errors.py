"""The one error type a person is meant to read.

A `UserError` is bad input or an unusable environment: the CLI prints it as
`suite: error: <message>` on stderr and exits with status 2, never with a traceback.
"""

import re
import sys


class UserError(Exception):
    """Bad input or an unusable environment; the message says what was wrong and what is accepted."""


def one_of(kind: str, value, accepted) -> UserError:
    """`unknown backend 'tpu' (known: auto, cpu, cuda, hpu)`"""
    return UserError(f"unknown {kind} {shown(value)} (known: {', '.join(accepted)})")


def near(value: str, names, what: str, listing: str) -> UserError:
    """`unknown torchvision model 'vit_b16' (near: vit_b_16, vit_b_32; see `suite list --models torchvision`)`:
    a name not among NAMES, with the close ones and where the whole list is."""
    import difflib

    close = difflib.get_close_matches(value, list(names), n=5, cutoff=0.6)
    hint = f"near: {', '.join(close)}; " if close else ""
    return UserError(f"unknown {what} {value!r} ({hint}see `{listing}`)")


# The largest count any option takes unless it says otherwise (steps, images in a batch, workers,
# processes, pixels on a side): a larger one is a typo or a probe, and would start work that never ends or
# allocate what no machine has. Options that can truly be larger (a data set's size, a seed) say so.
# Counts are parsed by suite.inputs.numbers; the bound is here, below it, for the record schema too.
COUNT_CEILING = 1_000_000

TRUE_WORDS = ("true", "on", "yes", "1")
FALSE_WORDS = ("false", "off", "no", "0")


def truth(name: str, value) -> bool:
    """A true/false value: a bool, or one of the one vocabulary of words every option accepts."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in TRUE_WORDS + FALSE_WORDS:
        raise UserError(
            f"{name} is a switch: give true or false (also on/off, yes/no, 1/0), got {shown(value)}"
        )
    return text in TRUE_WORDS


# How much of a value a message quotes: enough to recognise it, never a 100,000-character argument whole.
SHOWN_LENGTH = 80
# The most a printed message may hold (a list of names, a quoted path): longer is cut, its length said.
MESSAGE_LENGTH = 2_000
# An unbroken run over 300 characters (a long path is shorter) is a value no one cut: cut at print time.
_LONG_RUN = re.compile(r"\S{301,}")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def shown(value, limit: int = SHOWN_LENGTH) -> str:
    """VALUE as an error message quotes it: its repr (control characters escaped, quotes said), the first
    LIMIT characters and then its full length: `'xxxx…' (100,000 characters)`."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    text = repr(value)
    return _cut(text, limit)


# C0 and C1 controls (a terminal's escape sequences start with ESC or CSI), and the line separators and
# bidirectional overrides that make text display other than it reads.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text, keep: str = "") -> str:
    """`text` with every control character written as an escape (ESC as \\x1b), but those in `keep`: what
    the renderers put in a terminal, a markdown table or a CSV cell from a record or a file name."""
    return CONTROL.sub(lambda m: m.group() if m.group() in keep else ascii(m.group())[1:-1], str(text))


def for_terminal(message) -> str:
    """A message as the suite prints it on a terminal: every control character escaped by the one
    `printable` (an escape sequence from a file or an argument is shown, never obeyed), each unbroken run
    over 300 characters cut with its length said, and the whole at most MESSAGE_LENGTH."""
    text = _LONG_RUN.sub(lambda run: _cut(run.group(), SHOWN_LENGTH), printable(message))
    return _cut(text, MESSAGE_LENGTH)


def shown_path(path: str) -> str:
    """PATH as the suite prints it: relative to the working folder where it lies under it, else absolute
    (`../../../tmp/r/x.json` said less than `/tmp/r/x.json`)."""
    import os

    relative = os.path.relpath(path)
    return (
        os.path.abspath(path)
        if relative == os.pardir or relative.startswith(os.pardir + os.sep)
        else relative
    )


def warn(message) -> None:
    """`suite: warning: MESSAGE` on stderr, through `for_terminal`."""
    print(f"suite: warning: {for_terminal(message)}", file=sys.stderr)


def say_error(message) -> None:
    """`suite: error: MESSAGE` on stderr, through `for_terminal`."""
    print(f"suite: error: {for_terminal(message)}", file=sys.stderr)
