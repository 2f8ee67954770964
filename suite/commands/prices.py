"""`suite prices list|import`: show a price catalog, or make one from a public price list."""

from __future__ import annotations

import sys

from suite.inputs import option_types


def add_parser(subparsers) -> None:
    from suite.prices.catalog import DEFAULT_CATALOG

    p = subparsers.add_parser(
        "prices",
        help="show the price catalogs, or import one from a public price list",
        description="Instance price catalogs used by `suite report`.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    show = actions.add_parser("list", help="show a catalog's instances, prices, source and date")
    show.add_argument(
        "catalog",
        nargs="?",
        metavar="NAME|FILE",
        help=f"a shipped catalog or a YAML file (default {DEFAULT_CATALOG})",
    )
    show.set_defaults(func=list_command)

    imp = actions.add_parser(
        "import",
        help="turn ec2instances.info instances.json or SkyPilot vms.csv into a catalog",
        description="Convert a public price list into the suite's catalog format (YAML). SkyPilot rows are "
        "per availability zone: on-demand is the zones' median, spot the zones' mean (--zones).",
    )
    imp.add_argument("file", help="instances.json (ec2instances.info) or vms.csv (SkyPilot catalog)")
    imp.add_argument("--format", default="auto", help="auto (default), ec2instances or skypilot")
    imp.add_argument("--region", default="us-east-1", help="region to take prices from (default us-east-1)")
    imp.add_argument("--name", help="the catalog's name (default imported-<date>)")
    imp.add_argument(
        "--spot", default="avg", help="ec2instances.info spot statistic: avg (default), min, max"
    )
    imp.add_argument(
        "--zones",
        default="mean",
        help="SkyPilot: how zones' spot quotes are combined: mean (default), median, min, max",
    )
    imp.add_argument(
        "--gcp-host",
        default="n1-standard-8",
        help="SkyPilot GCP: the VM that GPU-only rows are added to (default n1-standard-8)",
    )
    imp.add_argument(
        "--as-of",
        metavar="DATE",
        help="the date the price list was published or downloaded: YYYY-MM-DD, YYYY-MM or YYYY "
        "(default: today, noted as the import date)",
    )
    imp.add_argument("--all", action="store_true", help="also instances without accelerators")
    imp.add_argument(
        "--out",
        metavar="FILE",
        type=option_types.output_file("--out"),
        help="write the catalog here (default: stdout)",
    )
    imp.set_defaults(func=import_command)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _fmt(value, digits=4) -> str:
    return "—" if value is None else f"{value:.{digits}f}".rstrip("0").rstrip(".")


def _row_note(instance) -> str:
    """The note column: RETIRED first (when and on whose word), then why there is no on-demand price, then
    the row's own note."""
    said = [instance.retired.text()] if instance.retired else []
    said += [f"NO ON-DEMAND PRICE ({instance.no_on_demand}): not priced"] if instance.no_on_demand else []
    return "; ".join(said + ([instance.note] if instance.note else []))


def list_command(args) -> int:
    from tabulate import tabulate

    from suite.prices.catalog import DEFAULT_CATALOG, load_catalog, shipped_catalog_names

    catalog = load_catalog(args.catalog)
    # A row priced from another source than the catalog's names it by number, listed under the table.
    cited = list(dict.fromkeys(i.price_source for i in catalog.instances.values() if i.price_source))
    rows = [
        [
            i.name,
            i.provider,
            i.region,
            i.accelerator,
            i.accelerator_count,
            _fmt(i.accelerator_memory_gib),
            i.vcpus,
            _fmt(i.ram_gib),
            _fmt(i.on_demand_usd_per_hour),
            _fmt(i.spot_usd_per_hour),
            (i.price_as_of or ("date not recorded" if i.price_source else catalog.as_of))
            + (f" [{cited.index(i.price_source) + 1}]" if i.price_source else ""),
            _row_note(i),
        ]
        for i in catalog.instances.values()
    ]
    print(
        tabulate(
            rows,
            headers=[
                "instance",
                "provider",
                "region",
                "accelerator",
                "count",
                "accel GiB",
                "vCPUs",
                "RAM GiB",
                "on-demand $/h",
                "spot $/h",
                "price as of",
                "note",
            ],
            tablefmt="github",
            disable_numparse=True,
        )
    )
    print()
    for n, source in enumerate(cited, 1):
        print(f"[{n}] {source}")
    print(catalog.caption())
    shipped = []
    for name in shipped_catalog_names():
        marks = ["default"] if name == DEFAULT_CATALOG else []
        marks += ["history"] if (catalog if name == catalog.name else load_catalog(name)).history else []
        shipped.append(f"{name} ({', '.join(marks)})" if marks else name)
    print(f"Shipped catalogs: {', '.join(shipped)}; or pass your own YAML file.")
    return 0


def import_command(args) -> int:
    from suite import run_record
    from suite.prices.importer import ImportRequest, import_file, to_yaml

    request = ImportRequest(
        fmt=args.format,
        region=args.region,
        name=args.name,
        spot_stat=args.spot,
        zone_stat=args.zones,
        gcp_host=args.gcp_host,
        include_cpu_only=args.all,
        as_of=args.as_of,
    )
    catalog, unpriced = import_file(args.file, request)
    text = to_yaml(catalog)
    if args.out:
        run_record.write_text(args.out, text)
    else:
        sys.stdout.write(text)
    # SkyPilot's instances with accelerators and no on-demand price are in the catalog, marked (no_on_demand).
    skipped = (
        f"; {unpriced} without an on-demand price in {args.region} (marked or skipped)" if unpriced else ""
    )
    print(
        f"suite: {len(catalog['instances'])} instances imported{skipped}"
        + (f" into {args.out} (use it with --prices {args.out})" if args.out else ""),
        file=sys.stderr,
    )
    return 0
