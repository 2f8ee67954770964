"""A report row: one configuration's runs as the tables, the CSV and the JSON show it. Every field is named
here with its type and meaning; `rows.build_rows` makes them, `reporting/published/rows.py` makes rows of published figures,
`token_rows` adds the token figures, `fleet_report` how each instance of a campaign ended.

A row stays a dict (the JSON format writes it as it is, and the CSV's columns are its keys), typed as a
TypedDict so that a reader sees what it may read, and `tests/test_report_row_type.py` holds every row the
report makes to these fields. Throughputs are per hour in the row's samples (images, or a token workload's
sequences); `unit` says which, and a token row adds its figures in tokens.
"""

# ruff: noqa: UP006, UP035, UP045 -- typing.get_type_hints evaluates these annotations (the row's test does),
# which Python 3.9, the floor, cannot do for `X | None` or builtin generics in a TypedDict's fields.
from __future__ import annotations

from typing import Dict, List, Optional, TypedDict


class _Always(TypedDict):
    """The fields every row has, measured or published."""

    # What ran, and where it is priced
    model_run: Optional[str]  # the workload (a modified model says so)
    instance: Optional[str]  # the cloud instance it is priced as; None where none is named
    retired: Optional[str]  # the instance's retirement date, if retired ("date not found" where none was)
    region: Optional[str]
    backend: Optional[str]
    device: Optional[str]  # the accelerator's (or CPU's) name
    device_count: Optional[int]
    world_size: Optional[int]  # processes that trained together
    accelerators_used: int  # of the instance's accelerators
    instance_accelerators: Optional[int]
    accelerators_priced: int  # what the rate and the price count: those used, all when extrapolated
    precision: Optional[str]  # as it ran: `fp32+TF32` where TF32 did the fp32 math (labels.precision)
    settings: List[str]  # every non-default setting of its runs, in words (labels.py); [] for a published one
    setting_flags: List[str]  # the `suite run` options that give its rate (`--channels-last`, `--tf32`)
    batch_size: Optional[int]  # per process
    data: str  # synthetic, imagefolder, cache, tokens
    unit: str  # "images", or "tokens": what one sample's figures count
    units_per_sample: int  # 1, or the tokens of one sequence

    # The measurement: a median over runs, its spread and interval, and why runs were left out
    images_per_hour: Optional[float]  # samples per hour, scaled to the instance where asked
    measured_images_per_hour: Optional[float]  # as measured, before any scaling
    images_per_hour_min: Optional[float]
    images_per_hour_max: Optional[float]
    profiled_images_per_hour: Optional[float]  # profiled runs only (perturbed, never in the median)
    runs: int  # runs in the median
    run_ids: List[str]  # every run behind the row, in the median or not
    runs_not_ok: Dict[str, int]  # left out, counted by why
    spread: Optional[float]  # (max − min) ÷ median across runs
    window_cv_max: Optional[float]
    median_ci_low: Optional[float]  # the median's distribution-free 95% interval (None: too few runs)
    median_ci_high: Optional[float]
    median_ci_coverage: Optional[float]
    rates_disagree: bool
    status: str  # ok, or the worst reason none was measured
    warnings: List[str]
    errors: List[str]
    notes: List[str]
    verdict: Optional[str]
    numerics: Optional[str]  # the numerics checks' verdicts, when any ran

    # How it was scaled or priced, and what it is
    extrapolated_factor: Optional[float]
    measured_scaling: Optional[float]
    device_matches_instance: Optional[bool]
    hypothetical: bool  # priced as an instance whose accelerator did not run (--price-as-if)
    upper_bound: bool  # synthetic data: a compute-only ceiling
    pooled: Dict[str, List[str]]  # fields whose values the row pools (--pool)

    # Prices: per hour of the accelerators the row counts (row_prices.py), then per sample and per epoch;
    # spot beside on demand; the whole instance's beside them (what the row costs if the rest sit idle)
    price_basis: Optional[str]  # "whole instance", "per accelerator", or "instance of that size"
    priced_as: Optional[str]  # the instance whose price it pays: the row's own, or one with just as many
    usd_per_accelerator_hour: Optional[float]
    spot_usd_per_accelerator_hour: Optional[float]
    usd_per_hour: Optional[float]
    images_per_usd: Optional[float]
    usd_per_million_images: Optional[float]
    spot_usd_per_hour: Optional[float]
    spot_images_per_usd: Optional[float]
    spot_usd_per_million_images: Optional[float]
    epoch_hours: Optional[float]
    epoch_usd: Optional[float]
    spot_epoch_usd: Optional[float]
    instance_usd_per_hour: Optional[float]
    instance_spot_usd_per_hour: Optional[float]
    instance_images_per_usd: Optional[float]
    instance_spot_images_per_usd: Optional[float]
    prices_catalog: str
    prices_as_of: str
    prices_as_of_note: str


class Row(_Always, total=False):
    """A row; the fields below only where they apply."""

    differs_in: Dict[str, object]  # what tells apart rows that share every shown column
    tuned: str  # its part in a `suite tune` search: "best", "default" or "trial" (reporting/tuned.py)
    price_source: str  # where this row's prices come from, when not the catalog's source

    # A measured row's figures beside its rate: each the median over its runs in the median that record
    # it (row_figures.py); per device; a token row adds its energy per token
    mfu: Optional[float]
    model_tflops_per_second: Optional[float]
    energy_per_image_j: Optional[float]  # per sample, as images_per_hour counts samples
    energy_per_token_j: Optional[float]
    mean_power_w: Optional[float]
    peak_memory_bytes: Optional[float]
    time_to_first_step_s: Optional[float]
    # The days (YYYY-MM-DD), commits and hosts of the runs it pools (run_span.py)
    run_days: List[str]
    run_commits: List[str]
    run_hosts: List[str]
    # Its runs' warnings by what they concern (warning_kinds.py): the rate (these earn its ⚠), or another
    # figure, by that figure's name
    rate_warnings: List[str]
    other_warnings: Dict[str, List[str]]

    # A published figure's row (`suite report --published`)
    published: bool
    published_id: Optional[str]
    published_source: Optional[str]
    published_caveat: Optional[str]
    published_document: Optional[str]
    published_where: Optional[str]
    published_as: Optional[str]
    published_by: Optional[str]  # who published it, in a word ("Lambda")
    published_ratios: Dict[str, float]  # measured ÷ published, per matching row
    # On what basis it stands (published_basis.py): the workload's own recipe, or another basis
    published_matched: Optional[bool]
    published_recipe: Optional[str]
    model_parameters: Optional[int]
    model_flops_per_sample: Optional[float]
    per_device_per_hour: Optional[float]  # in the row's unit (images or tokens)
    model_tflops_per_device: Optional[float]
    recipe_group: Optional[str]  # the matched recipe the row is of: its rows are ranked together

    # A token workload's figures (token_rows.add_token_figures)
    tokens_per_hour: float
    tokens_per_usd: Optional[float]
    spot_tokens_per_usd: Optional[float]
    usd_per_million_tokens: Optional[float]
    spot_usd_per_million_tokens: Optional[float]
    instance_tokens_per_usd: Optional[float]  # the whole instance's, as instance_images_per_usd
    instance_spot_tokens_per_usd: Optional[float]

    # A fleet campaign's row (fleet_report)
    fleet_status: str
    fleet_hours: Optional[float]
    fleet_cost_usd: Optional[float]


REQUIRED = frozenset(_Always.__annotations__)
FIELDS = frozenset(Row.__annotations__) | REQUIRED
