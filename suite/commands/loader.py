"""`suite loader`: data-loader throughput alone, no model, for each loader setting (the upper bound on
what any device can train at with this data)."""

from __future__ import annotations

import json
import sys

from suite.inputs import option_types
from suite.run_record.record import metrics_of

DEFAULT_OUT = "results"


def add_parser(subparsers) -> None:
    from suite.inputs.option_types import Switch

    p = subparsers.add_parser(
        "loader",
        help="measure the data loader alone (no model), per loader setting",
        description="Loader-only throughput: batches pulled from the data path as a run "
        "would pull them, with no model. The result bounds training throughput.",
    )
    p.add_argument(
        "--data",
        required=True,
        help="a folder of class sub-folders of images, a cache made by `suite data prepare`, or for a "
        "language model (--workload gpt2-small, llama-1b) a file of token ids",
    )
    p.add_argument(
        "--workload", default="dcgan64", help="its image size and default batch size (default dcgan64)"
    )
    p.add_argument("--batch-size", help="images per batch (default: the workload's)")
    p.add_argument(
        "--workers",
        default=None,
        help="comma-separated worker counts to try, e.g. 0,1,2,4 (default: the run's default)",
    )
    p.add_argument(
        "--pin-memory",
        dest="pin_memory",
        action=Switch,
        many=True,
        help="as on `suite run`, or on,off to try both (default: the run's default)",
    )
    p.add_argument("--prefetch", help="batches each worker prepares ahead (default 2)")
    p.add_argument("--batches", default="10", help="batches per timed window (default 10)")
    p.add_argument("--windows", default="3", help="timed windows; the median is reported (default 3)")
    p.add_argument(
        "--warmup", default="2", help="batches before timing: worker start-up, first reads (default 2)"
    )
    p.add_argument(
        "--backend",
        default="auto",
        help="the device a run would use (default auto): sets the "
        "pin-memory default, and the copy target with --to-device",
    )
    p.add_argument(
        "--to-device",
        action="store_true",
        help="include the copy to the device (and, for a cache, "
        "conversion to float there); default: the host batches the loader hands out",
    )
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        type=option_types.output_folder("--out"),
        help=f"folder for the records (default {DEFAULT_OUT}/)",
    )
    p.add_argument("--json", action="store_true", help="print the records on stdout instead of a table")
    p.set_defaults(func=loader_command)


def loader_command(args) -> int:
    from suite import run_record
    from suite.inputs.errors import UserError
    from suite.inputs.numbers import non_negative_int, positive_int
    from suite.inputs.option_types import comma_list
    from suite.measurement.loader_only import measure_setting
    from suite.measurement.runner import plan_run
    from suite.spec import RunSpec
    from suite.workloads import get_workload

    if args.data == "synthetic":
        raise UserError(
            "--data synthetic has no loader to measure (one batch is made on the device and "
            "reused): give an image folder, a cache, or a language model's token file"
        )
    workers_list = comma_list("--workers", args.workers, lambda v: non_negative_int("--workers", v))
    pin_list = args.pin_memory or [None]  # a Switch(many=True) holds the settings to try
    batches, windows = positive_int("--batches", args.batches), positive_int("--windows", args.windows)
    warmup = non_negative_int("--warmup", args.warmup)
    batch_size = (
        positive_int("--batch-size", args.batch_size)
        if args.batch_size is not None
        else get_workload(args.workload).default_batch_size
    )
    out_dir = run_record.check_out_dir(args.out)

    # Check every setting before measuring any: a bad value must not cost a half-finished sweep.
    plans = [
        plan_run(
            RunSpec().replace(
                backend=args.backend,
                workload=args.workload,
                batch_size=batch_size,
                data=args.data,
                workers=workers,
                pin_memory=pin,
                prefetch=args.prefetch,
            )
        )
        for workers in workers_list
        for pin in pin_list
    ]
    records = []
    for plan in plans:
        record = measure_setting(
            plan, batches=batches, windows=windows, warmup=warmup, to_device=args.to_device
        )
        records.append((record, run_record.write_record_or_stop(record, out_dir)))
        if not args.json:
            print(f"  measured {describe_setting(record)}", file=sys.stderr)
    if args.json:
        json.dump([record for record, _ in records], sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        print(render_table([record for record, _ in records]))
        print(f"records: {len(records)} in {out_dir}/")
    return 0 if all(record["status"] == "ok" for record, _ in records) else 1


def describe_setting(record: dict) -> str:
    data = record.get("data") or {}
    text = f"{data.get('source', '?')} workers {data.get('workers', '?')} pin_memory {data.get('pin_memory', '?')}"
    if record["status"] != "ok":
        from suite.launching.child import describe

        text += f": FAILED ({describe(record)})"
    return text


def significant(value: float, digits: int = 3) -> str:
    """A measured rate to the digits its noise allows: 144,555.3 -> 145,000 (never ten digits)."""
    return f"{float(f'{value:.{digits}g}'):,.0f}" if value >= 10 ** (digits - 1) else f"{value:.{digits}g}"


IMAGE_RATES = ["img/s (median ± σ)", "img/h"]
# A token file's batches are sequences: their rate, the tokens it carries, and the batches themselves.
TOKEN_RATES = ["seq/s (median ± σ)", "tok/s", "batches/s"]


def render_table(records: list[dict]) -> str:
    from tabulate import tabulate

    tokens = any((record.get("data") or {}).get("source") == "tokens" for record in records)
    rows, baseline = [], None
    for record in records:
        data, metrics = record.get("data", {}), metrics_of(record)
        rate = metrics.images_per_second
        if rate and baseline is None:
            baseline = rate
        rows.append(
            [
                data.get("source"),
                data.get("workers"),
                "on" if data.get("pin_memory") else "off",
                data.get("prefetch") if data.get("prefetch") is not None else "-",
                record["config"]["batch_size"],
                f"{significant(rate)} ± {significant(metrics.images_per_second_stdev)}"
                + (" ⚠" if record.get("warnings") else "")
                if rate
                else f"FAILED ({record['status']})",
                *(
                    _token_rates(record, metrics)
                    if tokens
                    else [significant(metrics.images_per_hour) if rate else "-"]
                ),
                f"{metrics.get('first_batch_s'):.2f}"
                if rate and metrics.get("first_batch_s") is not None
                else "-",
                f"{rate / baseline:,.2f}×" if rate else "-",
            ]
        )
    notes = [
        f"⚠ {describe_setting(record)}: {warning}"
        for record in records
        for warning in record.get("warnings", [])
    ]
    rates = TOKEN_RATES if tokens else IMAGE_RATES
    return tabulate(
        rows,
        headers=[
            "data",
            "workers",
            "pin_memory",
            "prefetch",
            "batch",
            *rates,
            "first batch s",
            "vs first row",
        ],
        colalign=("left", "right", "left", "right", "right", *["right"] * len(rates), "right", "right"),
    ) + "".join(f"\n{line}" for line in notes)


def _token_rates(record: dict, metrics) -> list[str]:
    """tok/s and batches/s of a token file's record ("-" where it failed)."""
    rate = metrics.images_per_second
    if not rate:
        return ["-", "-"]
    tokens = metrics.get("tokens_per_second")
    return [significant(tokens) if tokens else "-", significant(rate / record["config"]["batch_size"])]
