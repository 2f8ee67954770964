"""`suite published list|import`: the published figures a report can show beside measured ones."""

from __future__ import annotations

import sys

from suite.inputs import option_types


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "published",
        help="show the published figures, or import your own from a CSV",
        description="Throughputs published by others (an article's table, a vendor's README), each with its "
        "source; `suite report --published` shows them beside measured rows.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    show = actions.add_parser("list", help="show the figures, their units and sources")
    show.add_argument(
        "file", nargs="?", metavar="FILE", help="a published-figures YAML file (default: shipped)"
    )
    show.set_defaults(func=list_command)

    imp = actions.add_parser(
        "import",
        help="turn a CSV of figures into a published-figures YAML file",
        description="One CSV row per figure, with a header: id, model, batch, precision, device, count, "
        "throughput, unit (images/s or images/hour), citation, url, table, read (YYYY-MM-DD), and optionally "
        "model_label, instance, data, caveat, sequence_length, not_pinned (why the url names no version), "
        "recipe (the workload's own recipe: a matched figure), parameters, flops_per_sample, layers, width. An "
        "empty cell is 'not stated'. A bad row is refused, naming it.",
    )
    imp.add_argument("file", help="the CSV file")
    imp.add_argument("--name", help="the file's name (default: the CSV's name)")
    imp.add_argument(
        "--out",
        metavar="FILE",
        type=option_types.output_file("--out"),
        help="write the YAML here (default: stdout); use it with `suite report --published-from FILE`",
    )
    imp.set_defaults(func=import_command)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def list_command(args) -> int:
    from tabulate import tabulate

    from suite.reporting.published import figures
    from suite.reporting.published.basis import is_matched
    from suite.reporting.published.rows import suite_workloads

    chosen = figures.load_file(args.file) if args.file else figures.load_shipped()
    workloads = suite_workloads()
    # A figure in tokens is never given in images: its own column, there only when some figure has one.
    tokens = any(f.in_tokens for f in chosen)
    rows = [
        [
            f.id,
            f.model,
            "—" if f.batch is None else f.batch,
            f.precision or "—",
            f"{f.count} × {f.device}",
            f"{f.throughput:,.10g} {f.unit}"
            + (f" at {f.sequence_length:,} tokens a sequence" if f.in_tokens else ""),
            "—" if f.in_tokens else f"{f.images_per_hour:,.0f}",
            *([f"{f.per_hour:,.0f}" if f.in_tokens else "—"] if tokens else []),
            "the workload's recipe" if is_matched(f, workloads) else "another",
        ]
        for f in chosen
    ]
    headers = ["id", "model", "batch", "precision", "devices", "as published", "images/hour"]
    print(
        tabulate(
            rows,
            headers=headers + (["tokens/hour"] if tokens else []) + ["basis"],
            tablefmt="github",
            disable_numparse=True,
        )
    )
    print("\nSources:")
    for f in chosen:
        print(f"- {f.id}: {f.source.text()}" + (f"; caveat: {f.caveat}" if f.caveat else ""))
    return 0


def import_command(args) -> int:
    from suite import run_record
    from suite.reporting.published.csv_import import import_csv, to_yaml

    data = import_csv(args.file, args.name)
    text = to_yaml(data)
    if args.out:
        run_record.write_text(args.out, text)
    else:
        sys.stdout.write(text)
    print(
        f"suite: {len(data['figures'])} published figure(s) imported"
        + (f" into {args.out} (use it with `suite report --published-from {args.out}`)" if args.out else ""),
        file=sys.stderr,
    )
    return 0
