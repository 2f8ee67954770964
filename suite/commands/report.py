"""`suite report`: compare runs by images/hour, $/hour, images per $ (on-demand and spot), $ per epoch."""

from __future__ import annotations

import os
import sys

DEFAULT_RESULTS = "results"


def add_parser(subparsers) -> None:
    from suite.reporting.pricing import DEFAULT_CATALOG

    p = subparsers.add_parser(
        "report",
        help="a cost table (images/hour, $/hour, images per $) from run records",
        description="Render run records as a comparison: throughput, on-demand and spot rates, images per "
        "dollar, $ per million images and per epoch. Repeated runs of one configuration are "
        "combined (median).",
    )
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help=f"record files or folders (default {DEFAULT_RESULTS}/)"
    )
    p.add_argument(
        "--prices",
        metavar="NAME|FILE",
        help=f"price catalog: a shipped name (default {DEFAULT_CATALOG}) or a YAML file",
    )
    p.add_argument("--format", default="md", help="md (default), csv or json")
    p.add_argument("--out", metavar="FILE", help="write the report here instead of stdout")
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
    p.add_argument("--plot", metavar="DIR", help="also draw PNG plots into DIR (needs the `plot` extra)")
    p.set_defaults(func=report_command)


def report_command(args) -> int:
    from suite import results
    from suite.errors import UserError, one_of, positive_int
    from suite.reporting import report
    from suite.reporting.pricing import load_catalog

    if args.format not in report.FORMATS:
        raise one_of("--format", args.format, report.FORMATS)
    dataset_size = (
        report.DEFAULT_DATASET_SIZE
        if args.dataset_size is None
        else positive_int("--dataset-size", str(args.dataset_size).replace(",", "").replace("_", ""))
    )
    catalog = load_catalog(args.prices)
    paths = args.paths or [DEFAULT_RESULTS]
    loaded = report.load_records(paths)
    if not loaded:
        raise UserError(f"no suite run records found in {', '.join(paths)} (make some with `suite run`)")
    records = [record for _, record in loaded]
    rows = report.build_rows(records, catalog, dataset_size, args.extrapolate)
    text = report.render(rows, catalog, args.format, dataset_size, args.extrapolate)
    if args.plot:
        from suite.reporting import plots

        for path in plots.draw_all(records, rows, catalog, args.plot):
            print(f"suite: plot {os.path.relpath(path)}", file=sys.stderr)
    if args.out:
        results.write_text(args.out, text)
        print(
            f"suite: report of {len(records)} run(s) in {len(rows)} row(s) written to {args.out}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0
