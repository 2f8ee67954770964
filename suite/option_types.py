"""The types of command-line options, used by every parser (`type=` in argparse): a value is checked and
converted where it is typed, so a RunConfig holds what its hints say, and bad input is one line naming
the option and what it accepts (a UserError: exit 2)."""

from __future__ import annotations

import math

from suite import errors


def positive_int(flag: str):
    """A whole number >= 1."""
    return lambda text: errors.positive_int(flag, text)


def non_negative_int(flag: str):
    """A whole number >= 0."""
    return lambda text: errors.non_negative_int(flag, text)


def positive_float(flag: str, what: str = "a positive number"):
    """A finite number > 0 (seconds, dollars); WHAT says it in the error, e.g. "a positive number of seconds"."""

    def parse(text) -> float:
        try:
            value = float(text)
        except (TypeError, ValueError):
            value = -1.0
        if not (value > 0 and math.isfinite(value)):  # float() reads "inf": no timeout or price is infinite
            raise errors.UserError(f"{flag} must be {what}, got {text!r}")
        return value

    return parse


def byte_size(flag: str):
    """A size in bytes, such as 2GiB, 512MiB or 1.5GB."""
    from suite.sizes import parse_byte_size

    return lambda text: parse_byte_size(flag, text)


def switch(flag: str):
    """true or false, in the one vocabulary every option accepts (on/off, yes/no, 1/0 too)."""
    return lambda text: errors.truth(flag, text)
