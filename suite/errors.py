"""The one error type a person is meant to read.

A `UserError` is bad input or an unusable environment: the CLI prints it as
`suite: error: <message>` on stderr and exits with status 2, never with a traceback.
"""


class UserError(Exception):
    """Bad input or an unusable environment; the message says what was wrong and what is accepted."""


def one_of(kind: str, value, accepted) -> UserError:
    """`unknown backend 'tpu' (known: auto, cpu, cuda, hpu)`"""
    return UserError(f"unknown {kind} {value!r} (known: {', '.join(accepted)})")


def positive_int(name: str, value) -> int:
    """Parse a positive integer or raise a UserError naming the option and the bad value."""
    try:
        number = int(str(value), 10)
    except (TypeError, ValueError):
        raise UserError(f"{name} must be a positive integer, got {value!r}") from None
    if number < 1:
        raise UserError(f"{name} must be a positive integer, got {value!r}")
    return number


def non_negative_int(name: str, value) -> int:
    try:
        number = int(str(value), 10)
    except (TypeError, ValueError):
        raise UserError(f"{name} must be a whole number >= 0, got {value!r}") from None
    if number < 0:
        raise UserError(f"{name} must be a whole number >= 0, got {value!r}")
    return number


TRUE_WORDS = ("true", "on", "yes", "1")
FALSE_WORDS = ("false", "off", "no", "0")


def truth(name: str, value) -> bool:
    """A true/false value: a bool, or one of the one vocabulary of words every option accepts."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in TRUE_WORDS + FALSE_WORDS:
        raise UserError(f"{name} is a switch: give true or false (also on/off, yes/no, 1/0), got {value!r}")
    return text in TRUE_WORDS
