"""Every number a person or a file gives the suite is read here, by the same rules: command-line options,
sweep and campaign files, `--set` and `--model-override` values, price catalogs and price lists, published
figures.

Python's own readers accept more than a person means: `float("3_06")` is 306 and `int("1_000")` is 1000
(PEP 515's digit separators), `float("inf")`, `float("nan")` and `float("1e-320")` (a subnormal) are
numbers, and `int()` reads other scripts' digits ("٣"). YAML 1.1 adds `1:30` (sexagesimal, 90) and `0x1F`.
Here a number is plain ASCII decimal only: an optional sign, digits with at most one point, an optional
exponent; nothing else. And every kind of quantity has a declared sane range (`Kind`), so a price of
$1e-300 an hour or a 1e308-hour campaign is refused by name instead of giving an estimate of $0.00 or
infinity.

Bad input is a UserError (one line, exit 2) naming the value, the kind and the range accepted.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from suite.inputs import errors
from suite.inputs.errors import COUNT_CEILING, UserError

# Plain decimal: sign, digits with at most one point, exponent. `[0-9]`, not `\d`: `\d` matches other
# scripts' digits too. No `_`, no `:`, no `0x`, no `inf`/`nan`.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WHOLE = re.compile(r"[+-]?[0-9]+")
# A spreadsheet's thousands grouping (`1,234.5`): accepted only where a caller says so (CSV cells).
_GROUPED = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?")
# Longer text is no number a person typed (and a 5,000-digit integer would hit Python's int() limit).
MAX_CHARACTERS = 40


@dataclass(frozen=True)
class Kind:
    """A kind of quantity and the range a sane value of it lies in. WHAT names it in an error."""

    what: str
    least: float
    most: float
    least_included: bool = True
    most_included: bool = True

    def holds(self, value: float) -> bool:
        above = value >= self.least if self.least_included else value > self.least
        below = value <= self.most if self.most_included else value < self.most
        return above and below

    def range_text(self) -> str:
        low = f"{self.least:,g}" if self.least_included else f"above {self.least:,g}"
        high = f"{self.most:,g}" if self.most_included else f"below {self.most:,g}"
        return f"from {low} to {high}"


# The ranges, each far wider than any real value and far narrower than what a slip gives.
# The cheapest instance any cloud rents is a few tenths of a cent an hour (a spot t4g.nano); the largest a
# few hundred dollars: below a hundredth of a cent or above $10,000 an hour is a typo or a wrong unit.
PRICE_PER_HOUR = Kind("a price in $ per hour", 0.0001, 10_000.0)
# An instance is held for minutes at least (provisioning alone takes them) and not past a week.
HOURS = Kind("a number of hours", 0.01, 168.0)
# A budget or a cost: a cent to $100,000.
DOLLARS = Kind("an amount in $", 0.01, 100_000.0)
# A timeout longer than a week is no timeout; and threading's waits refuse more than threading.TIMEOUT_MAX
# (about 292 years on Linux) with an OverflowError, so 1e308 seconds would crash where it is used.
SECONDS = Kind("a positive number of seconds", 0.001, 7 * 24 * 3600.0)
# A relative change as a percentage (`suite compare --min-change`): 100% or more has no lower bound.
PERCENT = Kind("a percentage", 0.0, 100.0, most_included=False)
# A throughput (images per second or per hour, in the unit given with it): above a millionth, and below a
# trillion, which no accelerator comes near.
RATE = Kind("a rate above 0", 1e-6, 1e12)
# A memory size in GiB (an accelerator's, an instance's RAM): 0 where there is none, up to 1 PiB.
GIB = Kind("a size in GiB", 0.0, 1_048_576.0)


def _shown(value) -> str:
    """The value as the error shows it: repr, cut short with its length said (a 5,000-digit number is not
    printed whole), by the one helper every error that quotes input uses."""
    return errors.shown(value, MAX_CHARACTERS)


def _why_not(text: str) -> str:
    """A hint for the usual slips, so the message says why a number-looking text is refused."""
    if "_" in text:
        return " (no '_' in numbers: write 306, not 3_06)"
    if re.fullmatch(r"[+-]?[0-9]+(:[0-9]+)+(\.[0-9]*)?", text):
        return " (no h:mm: YAML 1.1 would read 1:30 as 90; write a decimal, e.g. 1.5)"
    if text.lower().lstrip("+-") in ("inf", "infinity", ".inf", "nan", ".nan"):
        return " (a finite number)"
    return ""


def decimal(value, grouped: bool = False) -> float | None:
    """VALUE as a finite float if it is a plain decimal (an int or float, or text as `_DECIMAL` has it;
    with GROUPED also `1,234.5`), else None. Never raises; no range: see `number` for that."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # an int past 1e308
            return None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) > MAX_CHARACTERS or not text.isascii():
        return None
    if grouped and _GROUPED.fullmatch(text):
        text = text.replace(",", "")
    if not _DECIMAL.fullmatch(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


def number(name: str, value, kind: Kind, grouped: bool = False) -> float:
    """VALUE as a float of KIND, or a UserError: `NAME must be KIND from LEAST to MOST, got VALUE`."""
    parsed = decimal(value, grouped)
    if parsed is None or not kind.holds(parsed):
        hint = _why_not(value.strip()) if isinstance(value, str) else ""
        raise UserError(f"{name} must be {kind.what} {kind.range_text()}, got {_shown(value)}{hint}")
    return parsed


def whole(name: str, value, least: int, most: int, wanted: str) -> int:
    """VALUE as a base-10 whole number in least..most, or a UserError naming the option, the value and
    the range. An int, or text of ASCII digits and a sign only: int() also reads "٣" and "1_000", and a
    float or a bool is no count."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise UserError(f"{name} must be {wanted}, got {_shown(value)}")
    text = str(value).strip()
    if not _WHOLE.fullmatch(text) or len(text) > 31:
        hint = _why_not(text)
        raise UserError(f"{name} must be {wanted}, got {_shown(value)}{hint}")
    count = int(text, 10)
    if count < least:
        raise UserError(f"{name} must be {wanted}, got {_shown(value)}")
    if count > most:
        raise UserError(f"{name} must be {wanted} of at most {most:,}, got {_shown(value)}")
    return count


def positive_int(name: str, value, most: int = COUNT_CEILING) -> int:
    """A whole number from 1 to MOST, or a UserError naming the option and the bad value."""
    return whole(name, value, 1, most, "a positive integer")


def non_negative_int(name: str, value, most: int = COUNT_CEILING) -> int:
    """A whole number from 0 to MOST."""
    return whole(name, value, 0, most, "a whole number >= 0")


def scalar(name: str, text: str):
    """A `KEY=VALUE` value whose type the key decides later (`--model-override ngf=8`): `8` -> 8,
    `0.5` -> 0.5, `true`/`false` -> a bool, anything else stays text. Text that only Python would read as
    a number (`1_0`, `inf`, `nan`) is refused rather than kept as text that fails later, or as 10."""
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _WHOLE.fullmatch(stripped) and len(stripped) <= 31:
        return int(stripped, 10)
    parsed = decimal(stripped)
    if parsed is not None:
        return parsed
    if _python_reads_as_number(stripped):
        raise UserError(
            f"{name} {stripped!r} is not a plain decimal number{_why_not(stripped) or ' (a finite number)'}"
        )
    return stripped


def _python_reads_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
