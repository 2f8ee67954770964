"""`suite report`: compare runs by images/hour, $/hour, images per $ (on-demand and spot), $ per epoch."""

from __future__ import annotations

import os
import sys

from suite.inputs import errors, option_types

DEFAULT_RESULTS = "results"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="a cost table (images/hour, $/hour, images per $) from run records",
        description="Render run records as a comparison: throughput, on-demand and spot rates, images per "
        "dollar, $ per million images and per epoch. Repeated runs of one configuration are "
        "combined (median). It opens with the answer: per workload the fastest and the cheapest "
        "configuration, by how much, and whether the runs decide it (the test of `suite compare`).",
    )
    _add_sources(p)
    _add_layout(p)
    _add_pricing(p)
    _add_grouping(p)
    _add_published(p)
    p.add_argument("--plot", metavar="DIR", help="also draw PNG plots into DIR (needs the `plot` extra)")
    p.set_defaults(func=report_command)


def _add_sources(p) -> None:
    """What is read: the records, and the catalog that prices them."""
    from suite.prices.catalog import DEFAULT_CATALOG

    p.add_argument(
        "paths", nargs="*", metavar="PATH", help=f"record files or folders (default {DEFAULT_RESULTS}/)"
    )
    p.add_argument(
        "--prices",
        metavar="NAME|FILE",
        help=f"price catalog: a shipped name (default {DEFAULT_CATALOG}) or a YAML file",
    )


def _add_layout(p) -> None:
    """How the report is written: its format, its columns, and where."""
    p.add_argument(
        "--format",
        default="md",
        help="md (default), csv, json, or html (one self-contained page: sortable table, plots, runs, sources)",
    )
    p.add_argument(
        "--columns",
        default="exact",
        metavar="STYLE",
        help="md column names: exact (default: what each cell is, with units) or seed (the seed's Table 2.1 "
        "names: 'Average Throughput (Imgs/Hr)' is a median, 'Rate ($)' is $/hour, 'Throughput / $' is images "
        "per $)",
    )
    p.add_argument(
        "--wide",
        action="store_true",
        help="every column (region, img/h, spot $/h, backend, data, $ per M images, epoch hours and $, runs, "
        "spread, notes...); by default md and html show the columns a buyer decides with, notes numbered below",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        type=option_types.output_file("--out"),
        help="write the report here instead of stdout",
    )


def _add_pricing(p) -> None:
    """What each row's figures are of: an epoch's size, a whole instance, other instances."""
    p.add_argument(
        "--dataset-size",
        default=None,
        metavar="N",
        help="images in one epoch, for hours and $ per epoch (default 1,200,000: the seed's MSLS)",
    )
    p.add_argument(
        "--extrapolate",
        action="store_true",
        help="scale runs that used part of an instance to all its accelerators (marked as such)",
    )
    p.add_argument(
        "--instance",
        metavar="NAME[,NAME...]",
        help="price every run again as if on each of these instances (on-demand and spot), without "
        "re-running; only instances whose accelerator is the run's device (see --price-as-if)",
    )
    p.add_argument(
        "--price-as-if",
        action="store_true",
        help="also price runs made on another device than the instance's accelerator (e.g. a CPU run "
        "named p5.48xlarge), marked hypothetical in every format; never extrapolated",
    )


def _add_grouping(p) -> None:
    """Which records become rows, and which of them share one."""
    p.add_argument(
        "--include",
        metavar="KIND[,KIND...]",
        help="also report the records of sub-runs: sweep, batch-size, diagnose, scale, tune (a `suite tune` "
        "search's trials beside its default and tuned best, which are always shown), probes (batch-size "
        "and diagnose) or all (left out by default, unless the paths hold nothing else: a folder `suite "
        "sweep` or `suite diagnose` wrote is reported as such)",
    )
    p.add_argument(
        "--tuned-best",
        action="store_true",
        help="per workload and device, only the tuned best of its `suite tune` search (devices without "
        "one keep their rows)",
    )
    p.add_argument(
        "--pool",
        metavar="FIELD[,FIELD...]",
        help="pool runs that differ only in these row-key fields (e.g. torch,cpu_cores_logical); "
        "the row lists the values it pooled",
    )


def _add_published(p) -> None:
    """Published figures beside the measured rows."""
    p.add_argument(
        "--published",
        action="store_true",
        help="also show the shipped published figures (see `suite published list`) as rows of their own, "
        "marked published, priced with today's catalog, and measured ÷ published where a configuration matches",
    )
    p.add_argument(
        "--published-from",
        metavar="FILE",
        action="append",
        help="also show the published figures of this YAML file (from `suite published import`); repeatable",
    )


def report_command(args) -> int:
    from suite.prices.catalog import load_catalog
    from suite.rows.build import build_rows
    from suite.rows.identity import pool_fields

    _check_choices(args)
    dataset_size = _dataset_size(args.dataset_size)
    catalog = load_catalog(args.prices)
    from suite.reporting import tuned

    searches = tuned.read_searches(args.paths or [DEFAULT_RESULTS])
    records = _load_records(args, searches)
    catalog_for = _catalog_by_record(args.prices, catalog)
    if args.instance:
        records, catalog_for = _priced_as_instances(args, records)
    pool = pool_fields([n.strip() for n in (args.pool or "").split(",") if n.strip()], records)
    rows = build_rows(
        records,
        catalog,
        dataset_size,
        args.extrapolate,
        pool=pool,
        price_as_if=args.price_as_if,
        catalog_for=catalog_for,
    )
    tuned.mark(rows, searches, records)
    unpriced = sum(1 for row in rows if not row.get("instance") and not row.get("published"))
    if args.published or args.published_from:
        rows = _with_published(rows, args, catalog, dataset_size, records)
    shown = _catalogs_shown(rows, records, catalog_for, catalog)
    plotted = _plots(args, records, rows, shown) if args.plot else []
    text, rows = _report_text(args, rows, shown, records, dataset_size, plotted)
    _write(args, text, records, rows)
    if unpriced:  # instead of silent "—" price columns, after the report was written
        from suite.reporting.answer import PRICE_HINT

        print(f"suite: {unpriced} row(s) have no instance, so no prices: {PRICE_HINT}", file=sys.stderr)
    return 0


def _check_choices(args) -> None:
    """--format and --columns name one of their choices (exit 2 naming the bad one otherwise)."""
    from suite.inputs.errors import one_of
    from suite.reporting.render import COLUMN_STYLES, FORMATS

    if args.format not in FORMATS:
        raise one_of("--format", args.format, FORMATS)
    if args.columns not in COLUMN_STYLES:
        raise one_of("--columns", args.columns, COLUMN_STYLES)


def _dataset_size(given) -> int:
    """--dataset-size as a count of images (1,200,000 and 1_200_000 read as 1200000), else the default."""
    from suite.inputs.numbers import positive_int
    from suite.rows.build import DEFAULT_DATASET_SIZE

    if given is None:
        return DEFAULT_DATASET_SIZE
    return positive_int("--dataset-size", str(given).replace(",", "").replace("_", ""), most=10**12)


def _load_records(args, searches) -> list[dict]:
    """The records under the paths: `suite run`'s own and the sub-runs --include names (the others
    counted on stderr); a folder of sub-runs alone reports them as such; a tuning search's default and
    tuned best always, and with --tuned-best only the best where a device has one (reporting/tuned.py)."""
    from suite.inputs.errors import UserError
    from suite.reporting import tuned
    from suite.rows.gather import chosen_records

    paths = args.paths or [DEFAULT_RESULTS]
    say = lambda line: print(f"suite: {line}", file=sys.stderr)  # noqa: E731
    loaded = chosen_records(paths, args.include, say, always=searches.shown)
    if args.tuned_best:
        loaded = tuned.best_only(loaded, searches)
    if not loaded and not (args.published or args.published_from):  # published figures alone are a table
        raise UserError(f"no suite run records found in {', '.join(paths)} (make some with `suite run`)")
    return [record for _, record in loaded]


def _catalog_by_record(prices: str | None, default):
    """Which catalog prices a record: --prices for all, else the one the run was accepted against (`suite
    run --instance p2.xlarge` finds it in seed-2022), so the report names each catalog it used."""
    from suite.inputs.errors import UserError
    from suite.prices.catalog import load_catalog

    catalogs = {default.name: default}

    def catalog_for(record: dict):
        named = None if prices else record["config"].get("prices")
        if not named:
            return default
        if named not in catalogs:
            try:
                catalogs[named] = load_catalog(named)
            except UserError:
                catalogs[named] = default  # a catalog file no longer there: the default prices it
        return catalogs[named]

    return catalog_for


def _priced_as_instances(args, records: list[dict]):
    """--instance: every run priced again on each named instance it can run on; (those candidates, which
    catalog prices each: the one its instance is in)."""
    from suite.inputs.errors import UserError
    from suite.prices.catalog import find_instance
    from suite.rows.gather import repriced

    names = [name.strip() for name in args.instance.split(",") if name.strip()]
    if not names:
        raise UserError("--instance needs at least one instance name")
    found = [find_instance(name, args.prices) for name in dict.fromkeys(names)]
    by_name = {instance.name: found_catalog for instance, found_catalog in found}
    records, unmatched = repriced(records, [instance for instance, _ in found], args.price_as_if)
    if unmatched:
        print(
            f"suite: {len(unmatched)} run(s) match none of --instance {args.instance} (another "
            "device, or more accelerators than the instance has; --price-as-if prices other devices)",
            file=sys.stderr,
        )
    if not records:
        raise UserError(f"no run can be priced as {args.instance}")
    return records, lambda record: by_name[record["config"]["instance"]]


def _catalogs_shown(rows: list[dict], records: list[dict], catalog_for, default) -> list:
    """The catalogs the rows were priced with, each once (the default where none of them was)."""
    named = {r["prices_catalog"] for r in rows}
    used = {catalog_for(r).name: catalog_for(r) for r in records} | {default.name: default}
    return [c for c in used.values() if c.name in named] or [default]


def _report_text(args, rows, catalogs, records, dataset_size: int, plotted: list[str]):
    """The report in the format asked for, and the rows it shows."""
    from suite.reporting.render import Opening, render

    if args.format == "html":
        from suite.reporting.page import render_page
        from suite.reporting.published import basis as published_basis
        from suite.rows.token_rows import split

        shown, others = published_basis.split(rows)  # figures on other bases: a table of their own
        images, tokens = split(
            shown
        )  # the page's answer and first table are in images; tokens have their own
        page = render_page(images, catalogs, records, dataset_size, args.columns, args.wide, tokens, others)
        return page, rows
    text = render(
        rows,
        catalogs,
        args.format,
        dataset_size,
        args.extrapolate,
        args.columns,
        args.wide,
        Opening(records, tuple(_as_linked(path, args.out) for path in plotted)),
    )
    return text, rows


def _write(args, text: str, records: list[dict], rows: list[dict]) -> None:
    """To --out (saying what it holds on stderr), else to stdout."""
    from suite import run_record

    if args.out:
        run_record.write_text(args.out, text)
        print(
            f"suite: report of {len(records)} run(s) in {len(rows)} row(s) written to {args.out}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)


def _plots(args, records: list[dict], rows: list[dict], catalogs) -> list[str]:
    """`--plot DIR`: draw them, say each on stderr; their paths."""
    from suite.reporting import plots
    from suite.reporting.published.basis import split

    def skipped(line: str) -> None:
        print(f"suite: {line}", file=sys.stderr)

    shown, _ = split(rows)  # a figure on another basis is drawn beside nothing, as it is ranked with nothing
    paths = plots.draw_all(records, shown, catalogs, args.plot, skipped)
    for path in paths:
        print(f"suite: plot {errors.shown_path(path)}", file=sys.stderr)
    return paths


def _as_linked(path: str, out: str | None) -> str:
    """A plot's path as the markdown's reader finds it: from the --out file's folder, or from here."""
    return os.path.relpath(path, os.path.dirname(os.path.abspath(out)) if out else os.getcwd())


def _with_published(rows: list[dict], args, catalog, dataset_size: int, records: list[dict]) -> list[dict]:
    """The published figures asked for, beside the measured rows (`records`: the runs behind them): priced
    with the report's catalog (the default one, or --prices), today's prices rather than the source's."""
    from suite.reporting.published import figures
    from suite.reporting.published.rows import with_published

    chosen = figures.load_shipped() if args.published else []
    for path in args.published_from or []:
        chosen += figures.load_file(path)
    return with_published(rows, figures.unique(chosen), catalog, dataset_size, records)
