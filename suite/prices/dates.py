"""A price catalog's date: an ISO 8601 date to the precision its source allows (2025-06-01, 2025-06 or
2025), so a report can say how old its prices are. What a date cannot hold (why only the year is known, what
the prices pre-date) goes in the catalog's free-text `as_of_note`."""

from __future__ import annotations

import calendar
import datetime
import re

from suite.inputs import errors
from suite.inputs.errors import UserError

ACCEPTED = "a date: YYYY-MM-DD, or YYYY-MM or YYYY when only that much is known"
# ASCII digits only: `\d` would also match full-width and other scripts' digits ("２０２５"), which int()
# reads but a catalog should not keep.
_PATTERN = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?")
# No cloud instance had an hourly price before Amazon EC2's public beta (August 2006, see docs/failure-modes.md):
# an earlier date (year 1, 1970) is a typo or a default, not a price list's date.
EARLIEST_YEAR = 2006
# How catalogs said their date before it was a date: "imported 2025-06-01 (the source's own date may be
# older)", written by `suite prices import`, and "2025 (exact date unknown; ...)", the shipped one's form.
_DATE_WITH_WORDS = re.compile(r"(imported )?(\d{4}(?:-\d{2}(?:-\d{2})?)?) \((.+)\)")


def split_date_and_words(value) -> tuple[str, str] | None:
    """A date written with words in brackets -> (the date, the words for as_of_note), else None."""
    match = _DATE_WITH_WORDS.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    imported, date, words = match.groups()
    return date, (f"the import date; {words}" if imported else words)


def parse_price_date(value, what: str, today: datetime.date | None = None) -> str:
    """VALUE as written in a catalog (WHAT names it in an error) -> its ISO text ("2025-06-01", "2025-06"
    or "2025"). YAML reads an unquoted 2025-06-01 as a date and 2022 as a number: both are taken as written."""
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, datetime.date):
        text = value.isoformat()
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    else:
        text = str(value).strip() if isinstance(value, str) else ""
    match = _PATTERN.fullmatch(text)
    try:
        if match is None:
            raise ValueError
        start = datetime.date(int(match[1]), int(match[2] or 1), int(match[3] or 1))
    except ValueError:
        raise UserError(
            f"{what} must be {ACCEPTED}, got {errors.shown(value)}"
            + (": write the date alone and any words in as_of_note" if what.endswith("as_of") else "")
        ) from None
    if start.year < EARLIEST_YEAR:
        raise UserError(
            f"{what} {text} is before {EARLIEST_YEAR}, when cloud instances were first priced by the hour "
            f"(give the price list's own date: {ACCEPTED})"
        )
    if start > (today or datetime.date.today()):
        raise UserError(f"{what} {text} is in the future (prices are quoted as of a past date)")
    return text


def period_end(as_of: str) -> datetime.date:
    """The last day a partial date can mean: 2022 -> 2022-12-31, 2025-02 -> 2025-02-28."""
    parts = [int(part) for part in as_of.split("-")]
    year, month = parts[0], parts[1] if len(parts) > 1 else 12
    day = parts[2] if len(parts) > 2 else calendar.monthrange(year, month)[1]
    return datetime.date(year, month, day)


def age(as_of: str, today: datetime.date | None = None) -> str | None:
    """How old the prices are at least, in words ("over 3 years old"), or None if under a month."""
    end, today = period_end(as_of), today or datetime.date.today()
    months = (today.year - end.year) * 12 + today.month - end.month - (today.day < end.day)
    if months >= 24:
        return f"over {months // 12} years old"
    if months >= 12:
        return "over a year old"
    if months >= 2:
        return f"over {months} months old"
    return "over a month old" if months == 1 else None


# A day a figure was read: not before 2000 (no published training throughput this suite compares with is
# older), and not after next year (a later year is a typo; a day in the coming year a clock's drift).
EARLIEST_READ_YEAR = 2000
READ_ACCEPTED = "a calendar date, YYYY-MM-DD in ASCII digits, from 2000 to next year"


def calendar_date(value, what: str, today: datetime.date | None = None) -> str:
    """VALUE as a real calendar day (datetime.date refuses 2025-02-30), written YYYY-MM-DD in ASCII digits
    (int() would read full-width ones), its year from EARLIEST_READ_YEAR to next year; else a UserError
    naming WHAT, the value and what is accepted. YAML's unquoted 2025-06-01 (a date) is taken as written."""
    if isinstance(value, datetime.datetime):
        value = value.date()
    text = value.isoformat() if isinstance(value, datetime.date) else value
    match = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", text.strip()) if isinstance(text, str) else None
    try:
        if match is None:
            raise ValueError
        day = datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        raise UserError(f"{what} must be {READ_ACCEPTED}, got {errors.shown(value)}") from None
    if not EARLIEST_READ_YEAR <= day.year <= (today or datetime.date.today()).year + 1:
        raise UserError(f"{what} must be {READ_ACCEPTED}, got {errors.shown(value)} (year {day.year})")
    return day.isoformat()
