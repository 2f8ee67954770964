"""The one error type a person is meant to read.

A `UserError` is bad input or an unusable environment: the CLI prints it as
`suite: error: <message>` on stderr and exits with status 2, never with a traceback.
"""


class UserError(Exception):
    """Bad input or an unusable environment; the message says what was wrong and what is accepted."""


def one_of(kind: str, value, accepted) -> UserError:
    """`unknown backend 'tpu' (known: auto, cpu, cuda, hpu)`"""
    return UserError(f"unknown {kind} {value!r} (known: {', '.join(accepted)})")


# The largest count any option takes unless it says otherwise (steps, images in a batch, workers,
# processes, pixels on a side): a larger one is a typo or a probe, and would start work that never ends or
# allocate what no machine has. Options that can truly be larger (a data set's size, a seed) say so.
# Counts are parsed by suite.numbers; the bound is here, below it, for the record schema too.
COUNT_CEILING = 1_000_000

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
