"""Published figures: throughputs others measured and published (an article's table, a vendor's README),
kept as YAML in suite/reporting/published/ so a report can show them beside the suite's own measurements.

One entry per figure: the model (a registry workload name where one matches; any other model is allowed and
shown as not a suite workload), batch and precision (null where the source does not state them), the device
and how many of them, the throughput and its unit (images, or tokens with the sequence length they were
measured at), the instance the source ran on (if it names one), its data, the source (citation, address,
table, date read, and why its address cannot be pinned to a version where it cannot) and any caveat it
states. Every entry goes through `parse_figure`, the shipped files and a user's file alike, and a CSV import
too (`suite published import`): a malformed entry is refused in one line naming the file, the entry and
the field.

A figure may also say what it is on the suite's terms (basis.py reads these):

    recipe             what the source ran, in words, where it is the suite workload's own training step
                       (model, precision, data): such a figure is *matched* — it stands in the measured
                       rows' table and is ranked with the suite's runs of that recipe
    parameters         the model's size
    flops_per_sample   the training FLOPs of one sample (an image), as the suite counts them
    layers, width      a language model's shape, for the attention term of its FLOPs per token
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from importlib import resources

from suite import stats
from suite.inputs import errors, numbers, spreadsheet
from suite.inputs.errors import UserError
from suite.prices import dates
from suite.prices.catalog import _read_yaml  # one YAML reader: duplicate keys refused, errors in a line
from suite.run_record import printable

IMAGE_UNITS = {"images/s": stats.SECONDS_PER_HOUR, "images/hour": 1.0}
# A figure in tokens counts sequences of `sequence_length` tokens: the report's token table shows it
# (token_rows.py), never beside images nor ranked with them.
TOKEN_UNITS = {"tokens/s": stats.SECONDS_PER_HOUR, "tokens/hour": 1.0}
UNITS = {**IMAGE_UNITS, **TOKEN_UNITS}
# Far above any single published training figure (a DGX of 8 A100s trains ResNet-50 at ~16,600 img/s; a
# 64-chip Gaudi 2 cluster trains a 70B model at ~54,600 tokens/s): a value above it is a unit mistake.
MAX_IMAGES_PER_HOUR = 1e11
MAX_TOKENS_PER_HOUR = 1e13
MAX_SEQUENCE_LENGTH = 10_000_000
MAX_COUNT = 100_000
MAX_ID_LENGTH = 200  # an id names a figure in a table's row: a person's short label
FIGURE_FIELDS = ("model", "batch", "precision", "device", "count", "throughput", "unit", "source")
SOURCE_FIELDS = ("citation", "table", "read")
# An address pinned to one version of its document: a commit's, or a dated web archive copy's.
_PINNED = re.compile(
    r"/(?:blob|tree|raw|commit)/[0-9a-f]{40}/|\b[0-9a-f]{40}\b|web\.archive\.org/web/\d{8,14}/"
)
# Far above any model's training FLOPs per image (ResNet-50 trains at ~2.4e10)
FLOPS = numbers.Kind("a number of FLOPs", 1.0, 1e18)


@dataclass(frozen=True)
class Source:
    citation: str  # author/title/date, or the repository and file
    table: str  # which table or figure, and which row of it
    read: str  # the day the figure was read (YYYY-MM-DD)
    url: str | None = None
    # Why the address (or its absence) cannot be pinned to the version read, and how the version is named
    # instead: a page revised in place, an article with no public address.
    not_pinned: str | None = None

    @property
    def pinned(self) -> bool:
        """The address names one version of the document (a commit, a dated archive copy)."""
        return bool(self.url and _PINNED.search(self.url))

    def text(self) -> str:
        at = f" <{self.url}>" if self.url else ""
        unpinned = f" (not pinned to a version: {self.not_pinned})" if self.not_pinned else ""
        return f"{self.citation}{at}{unpinned}, {self.table} (read {self.read})"


@dataclass(frozen=True)
class Figure:
    id: str
    model: str
    batch: int | None
    precision: str | None
    device: str
    count: int
    throughput: float
    unit: str
    source: Source
    model_label: str | None = None
    instance: str | None = None
    data: str | None = None
    caveat: str | None = None
    file: str | None = None
    sequence_length: int | None = None  # tokens a sequence: stated by every figure in tokens, by no other
    recipe: str | None = None  # the workload's own recipe, in the source's words: a matched figure
    parameters: int | None = None  # the model's size
    flops_per_sample: float | None = None  # training FLOPs of one image (a token model's: from its shape)
    layers: int | None = None  # a language model's shape, for the attention term of its FLOPs
    width: int | None = None

    @property
    def in_tokens(self) -> bool:
        return self.unit in TOKEN_UNITS

    @property
    def kind(self) -> str:
        """What the throughput counts: "tokens" or "images" (token_rows.TOKENS, IMAGES)."""
        return "tokens" if self.in_tokens else "images"

    @property
    def per_hour(self) -> float:
        """The throughput per hour, in its own unit (images or tokens)."""
        return self.throughput * UNITS[self.unit]

    @property
    def images_per_hour(self) -> float:
        """Samples per hour, as every report row counts them: images, or a token figure's sequences."""
        return self.per_hour / self.sequence_length if self.in_tokens else self.per_hour

    def to_dict(self) -> dict:
        optional = ("sequence_length", *OPTIONAL_FIELDS)
        entry = {
            k: v
            for k, v in dataclasses.asdict(self).items()
            if k not in ("id", "file") and not (k in optional and v is None)
        }
        if entry["source"].get("not_pinned") is None:
            entry["source"].pop("not_pinned")
        return entry


# The fields a figure may leave out altogether (null where given and not stated).
OPTIONAL_FIELDS = ("recipe", "parameters", "flops_per_sample", "layers", "width")


def _text(value, where: str, field: str, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and field == "precision":
        value = str(value)
    if not isinstance(value, str) or not value.strip() or printable(value.strip()) != value.strip():
        wanted = "a non-empty text without control characters" + (" or null" if nullable else "")
        raise UserError(f"{where}: field {field!r} must be {wanted}, got {errors.shown(value)}")
    return value.strip()


def _whole(value, where: str, field: str, nullable: bool) -> int | None:
    if value is None and nullable:
        return None
    null = " or null (not stated)" if nullable else ""
    return numbers.whole(  # a CSV cell's text too, by the suite's one reader of numbers
        f"{where}: field {field!r}", value, 1, MAX_COUNT, f"a whole number from 1 to {MAX_COUNT:,}{null}"
    )


def _throughput(value, unit: str, where: str) -> float:
    # Plain decimal, with a spreadsheet's thousands grouping (1,234.5) allowed: float("3_06") is 306.
    number = numbers.number(f"{where}: field 'throughput'", value, numbers.RATE, grouped=True)
    most, per_hour = (
        (MAX_TOKENS_PER_HOUR, "tokens/hour") if unit in TOKEN_UNITS else (MAX_IMAGES_PER_HOUR, "images/hour")
    )
    if number * UNITS[unit] > most:
        raise UserError(
            f"{where}: field 'throughput' {errors.shown(value)} {unit} is above {most:.0e} {per_hour} "
            "(a wrong unit?)"
        )
    return number


def _sequence_length(entry: dict, unit: str, where: str) -> int | None:
    """A figure in tokens states the sequence length it was measured at (its tokens are sequences of
    that many); a figure in images has none."""
    value = entry.get("sequence_length")
    if unit not in TOKEN_UNITS:
        if value is not None:
            raise UserError(
                f"{where}: field 'sequence_length' is for a figure in {' or '.join(TOKEN_UNITS)}; "
                f"this one is in {unit}"
            )
        return None
    if value is None:
        raise UserError(
            f"{where}: field 'sequence_length' is missing: a figure in {unit} states the tokens of one "
            f"sequence, a whole number from 1 to {MAX_SEQUENCE_LENGTH:,}"
        )
    return numbers.whole(
        f"{where}: field 'sequence_length'",
        value,
        1,
        MAX_SEQUENCE_LENGTH,
        f"a whole number from 1 to {MAX_SEQUENCE_LENGTH:,}",
    )


def _source(value, where: str) -> Source:
    if not isinstance(value, dict):
        raise UserError(f"{where}: field 'source' must be a mapping of {', '.join(SOURCE_FIELDS)} (and url)")
    for field in SOURCE_FIELDS:
        if field not in value:
            raise UserError(f"{where}: field 'source.{field}' is missing (a figure must cite its source)")
    read = dates.calendar_date(value["read"], f"{where}: field 'source.read' (the day it was read)")
    return Source(
        citation=_text(value["citation"], where, "source.citation"),
        table=_text(value["table"], where, "source.table"),
        read=read,
        url=_text(value.get("url"), where, "source.url", nullable=True),
        not_pinned=_text(value.get("not_pinned"), where, "source.not_pinned", nullable=True),
    )


def _model_facts(entry: dict, where: str) -> dict:
    """The optional facts of the figure's model: its size, FLOPs per sample and shape, and the recipe."""
    flops = entry.get("flops_per_sample")
    if flops is not None:
        flops = numbers.number(f"{where}: field 'flops_per_sample'", flops, FLOPS, grouped=True)
    return {
        "recipe": _text(entry.get("recipe"), where, "recipe", nullable=True),
        "parameters": _size(entry.get("parameters"), where, "parameters"),
        "flops_per_sample": flops,
        "layers": _size(entry.get("layers"), where, "layers"),
        "width": _size(entry.get("width"), where, "width"),
    }


def _size(value, where: str, field: str) -> int | None:
    if value is None:
        return None
    return numbers.whole(f"{where}: field {field!r}", value, 1, 10**15, "a whole number from 1 or null")


def _check_matched(figure: Figure, where: str) -> Figure:
    """A matched figure (one with a recipe) states everything a measured row of its recipe is compared
    by: its batch, precision and data."""
    if figure.recipe is not None:
        unstated = [name for name in ("batch", "precision", "data") if getattr(figure, name) is None]
        if unstated:
            raise UserError(
                f"{where}: a figure with a 'recipe' (the workload's own) states its "
                f"{', '.join(unstated)}: a recipe with a field unknown matches no measured run"
            )
    return figure


def parse_figure(figure_id: str, entry, file_where: str) -> Figure:
    """One entry, checked field by field; the first bad field is refused in one line."""
    where = f"{file_where}, entry {errors.shown(figure_id)}"
    if not isinstance(figure_id, str) or printable(figure_id) != figure_id or len(figure_id) > MAX_ID_LENGTH:
        raise UserError(
            f"{where}: an id is a text of at most {MAX_ID_LENGTH} characters without control characters"
        )
    spreadsheet.refuse_formula(figure_id, where)
    if not isinstance(entry, dict):
        raise UserError(
            f"{where}: expected a mapping of fields ({', '.join(FIGURE_FIELDS)}), got {errors.shown(entry)}"
        )
    for field in FIGURE_FIELDS:
        if field not in entry:
            null = (
                " (write null where the source does not state it)" if field in ("batch", "precision") else ""
            )
            raise UserError(f"{where}: field {field!r} is missing{null}")
    instance = _text(entry.get("instance"), where, "instance", nullable=True)
    if instance is not None:  # it names a price catalog's row, whose names are checked so
        spreadsheet.refuse_formula(instance, f"{where}, field 'instance'")
    unit = _text(entry["unit"], where, "unit")
    if unit not in UNITS:
        raise UserError(f"{where}: field 'unit' must be one of {', '.join(UNITS)}, got {errors.shown(unit)}")
    return _check_matched(
        Figure(
            id=str(figure_id),
            model=_text(entry["model"], where, "model"),
            batch=_whole(entry["batch"], where, "batch", nullable=True),
            precision=_text(entry["precision"], where, "precision", nullable=True),
            device=_text(entry["device"], where, "device"),
            count=_whole(entry["count"], where, "count", nullable=False),
            throughput=_throughput(entry["throughput"], unit, where),
            unit=unit,
            source=_source(entry["source"], where),
            model_label=_text(entry.get("model_label"), where, "model_label", nullable=True),
            instance=instance,
            data=_text(entry.get("data"), where, "data", nullable=True),
            caveat=_text(entry.get("caveat"), where, "caveat", nullable=True),
            file=file_where,
            sequence_length=_sequence_length(entry, unit, where),
            **_model_facts(entry, where),
        ),
        where,
    )


def parse_figures(data, where: str) -> list[Figure]:
    if not isinstance(data, dict) or not isinstance(data.get("figures"), dict) or not data["figures"]:
        raise UserError(f"{where}: not a published-figures file (expected 'figures:' mapping ids to entries)")
    return [parse_figure(str(key), entry, where) for key, entry in data["figures"].items()]


def shipped_files() -> list[str]:
    folder = resources.files("suite.reporting.published")
    return sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".yaml"))


def load_shipped() -> list[Figure]:
    """Every figure the suite ships, file by file."""
    figures = []
    for name in shipped_files():
        entry = resources.files("suite.reporting.published") / name
        with resources.as_file(entry) as path:
            where = f"published figures {name!r}"
            figures += parse_figures(_read_yaml(str(path), where), where)
    return unique(figures)


def load_file(path: str) -> list[Figure]:
    where = f"published figures file {path!r}"
    return unique(parse_figures(_read_yaml(path, where), where))


def unique(figures: list[Figure]) -> list[Figure]:
    seen: dict[str, str] = {}
    for figure in figures:
        if figure.id in seen:
            raise UserError(f"{figure.file}, entry {figure.id!r}: the id is also used in {seen[figure.id]}")
        seen[figure.id] = figure.file
    return figures
