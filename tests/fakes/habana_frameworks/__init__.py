"""A fake of Habana's `habana_frameworks` package for wiring tests: it runs on the CPU and records calls.

Every call a test may check is appended to CALLS as (event, details). Tests put tests/fakes on sys.path
only inside the test and drop these modules from sys.modules afterwards.
"""

CALLS: list = []


def record(event: str, **details) -> None:
    CALLS.append((event, details))


def events(*names: str) -> list:
    """The recorded event names, keeping only `names` (all if none given)."""
    return [event for event, _ in CALLS if not names or event in names]
