"""`suite compare`: is the candidate faster (or cheaper) than the baseline, with a significance test."""

from __future__ import annotations

import sys

from suite.inputs import option_types


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="baseline vs candidate: medians, ratio with a 95%% interval, and a significance verdict",
        description="Match the configurations of two sets of run records by the report's row key and say, "
        "for each, whether the candidate is faster, slower, no change within --min-change, or undecided "
        "(Welch's t-test and two one-sided tests over runs; at least 3 runs a side, see `suite run --repeat`), "
        "with the smallest change the runs could detect.",
    )
    p.add_argument("baseline", metavar="BASELINE", help="a record, a folder of records or a quoted glob")
    p.add_argument("candidate", metavar="CANDIDATE", help="a record, a folder of records or a quoted glob")
    p.add_argument(
        "--by",
        metavar="FIELD",
        help="compare across these fields (comma-separated) instead of requiring them equal, e.g. instance "
        "(with its backend and device), threads, precision",
    )
    p.add_argument(
        "--min-change",
        default="0%",
        metavar="PCT",
        help="the change that matters (e.g. 3%%; default 0%%): a smaller one is no verdict of faster or "
        "slower, a ratio shown to lie within it is `no change`, and a --fail-on gate passes only when the "
        "runs rule out a change for the worse beyond it",
    )
    p.add_argument(
        "--correction",
        default="auto",
        metavar="METHOD",
        help="multiple-comparison control over all the tests one comparison makes: auto (default: holm "
        "below 20 tests, bh from 20), holm, bh (Benjamini–Hochberg) or none",
    )
    p.add_argument(
        "--include",
        metavar="KIND[,KIND...]",
        help="also compare the records of sub-runs, as `suite report --include` does: sweep, batch-size, "
        "diagnose, scale, probes or all (left out by default, unless a side holds nothing else)",
    )
    p.add_argument("--format", default="md", help="md (default), csv or json")
    p.add_argument(
        "--out",
        metavar="FILE",
        type=option_types.output_file("--out"),
        help="write the comparison here instead of stdout",
    )
    p.add_argument(
        "--prices",
        metavar="NAME|FILE",
        help="price catalog for images per $ (default: the report's default catalog)",
    )
    p.add_argument(
        "--fail-on",
        metavar="VERDICT",
        help="gate on `slower` (img/s) or `costlier` (images per $): exit status 1 when any configuration "
        "is, 0 only when the runs rule out every change for the worse beyond --min-change, and 4 "
        "(undecided) otherwise: too few or too noisy runs, a verdict withheld for load, a metric that "
        "cannot be computed, nothing matched",
    )
    p.set_defaults(func=compare_command)


def compare_command(args) -> int:
    from suite import run_record
    from suite.compare import comparison, gate, render, significance
    from suite.inputs.errors import UserError, one_of
    from suite.prices.catalog import load_catalog
    from suite.rows.gather import chosen_records, include_origins

    if args.format not in render.FORMATS:
        raise one_of("--format", args.format, render.FORMATS)
    if args.correction not in significance.CORRECTIONS:
        raise one_of("--correction", args.correction, significance.CORRECTIONS)
    if args.fail_on is not None and args.fail_on not in gate.FAIL_ON:
        raise one_of("--fail-on verdict", args.fail_on, gate.FAIL_ON)
    include_origins(args.include)  # a bad kind is refused before anything is read
    by = comparison.parse_by(args.by)
    min_change = comparison.parse_min_change(args.min_change)
    catalog = load_catalog(args.prices)
    sides = []
    for name, path in (("baseline", args.baseline), ("candidate", args.candidate)):
        # the runs `suite report` reads of the same paths: sub-runs out unless included, or named
        loaded = chosen_records(
            comparison.expand_paths(path),
            args.include,
            lambda line, name=name: print(f"suite: {name}: {line}", file=sys.stderr),
        )
        if not loaded:
            raise UserError(f"no suite run records found for the {name} in {path!r}")
        sides.append(loaded)
    result = comparison.compare(
        *sides, by=by, min_change=min_change, catalog=catalog, correction=args.correction
    )
    result["gate"] = gate.gate(result, args.fail_on)
    text = render.render(result, args.format)
    if args.out:
        run_record.write_text(args.out, text)
        print(f"suite: comparison written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    gated = result["gate"]
    if gated is None:
        return 0
    for finding in gated["findings"]:
        if finding["status"] != gate.PASS:
            print(
                f"suite: {finding['status']} ({finding['why']}): {finding['configuration']}", file=sys.stderr
            )
    print(f"suite: --fail-on {gated['fail_on']}: {gated['status']}", file=sys.stderr)
    return gated["exit_status"]
