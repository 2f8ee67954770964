"""`suite fleet plan|run|report`: one benchmark on many cloud instance types through SkyPilot, and the cost table.

`plan` writes one SkyPilot task file per instance type and prints the tasks, the `sky` commands and the
estimated cost of the whole campaign; it needs no SkyPilot. `run` launches them (the `cloud` extra).
`report` prints a fleet folder's cost table: every instance, how it ended, and what its figure cost.
"""

from __future__ import annotations

import os
import sys

DEFAULT_OUT = "results/fleet"
# `fleet run` exits 0 when every instance has its record; EXIT_FAILED when one failed, timed out, went over
# budget, or the run stopped on an error (after tearing down what it launched); 2 for a plan refused before
# anything was rented; 130 on Ctrl-C or SIGTERM (after tearing down).
EXIT_FAILED = 1


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "fleet",
        help="run one benchmark on several cloud instance types through SkyPilot (plan, run, report)",
        description="A campaign: the same `suite run` on several cloud instance types, launched through "
        "SkyPilot, priced from the suite's catalog before anything starts, and reported together.",
    )
    actions = p.add_subparsers(dest="fleet_action", metavar="ACTION", parser_class=type(p))
    for name, help_text in (
        ("plan", "write the SkyPilot tasks and print them with the campaign's estimated cost"),
        ("run", "launch the tasks with SkyPilot, collect the records, tear down, report (resumable)"),
    ):
        action = actions.add_parser(name, help=help_text, description=help_text)
        add_campaign_options(action)
        if name == "run":
            action.add_argument(
                "--keep",
                action="store_true",
                help="when the run stops early (error, Ctrl-C, time or cost cap), leave what it launched up "
                "and print the `sky down` command that ends it (default: tear it down)",
            )
        action.set_defaults(func=plan_command if name == "plan" else run_command)
    report_help = "the cost table of a campaign's instances: each one's status and what its figure cost"
    shown = actions.add_parser("report", help=report_help, description=report_help)
    shown.add_argument(
        "source",
        metavar="FOLDER|CAMPAIGN.yaml",
        help="a fleet folder (the --out of `fleet run`), or the campaign file (its folder is found as "
        "`fleet run` names it, or given with --out)",
    )
    shown.add_argument("--out", default=None, metavar="DIR", help="with a campaign file: its fleet folder")
    shown.add_argument("--format", default="md", help="md (default), csv or json")
    shown.add_argument("--prices", metavar="NAME|FILE", help="price catalog (default: the campaign's)")
    shown.set_defaults(func=report_command)
    p.set_defaults(func=lambda args: p.error("give an action: plan, run or report"))


def add_campaign_options(p) -> None:
    from suite.inputs import numbers, option_types

    p.add_argument("file", nargs="?", metavar="CAMPAIGN.yaml", help="campaign file (see docs/fleet.md)")
    p.add_argument(
        "--instances", action="append", default=[], metavar="TYPE,...", help="instance types inline"
    )
    p.add_argument("--workload", default="dcgan64", help="with --instances: the workload (default dcgan64)")
    p.add_argument(
        "--set",
        dest="options",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="with --instances: a `suite run` option for every instance, e.g. --set batch-size=64",
    )
    p.add_argument(
        "--hours",
        type=option_types.quantity("--hours", numbers.HOURS),
        metavar="H",
        help="with --instances: hours each instance is held",
    )
    p.add_argument("--spot", action="store_true", help="with --instances: rent spot instances")
    p.add_argument(
        "--max-cost",
        dest="max_cost_usd",
        type=option_types.quantity("--max-cost", numbers.DOLLARS),
        metavar="USD",
        help="budget cap in $",
    )
    p.add_argument("--prices", metavar="NAME|FILE", help="with --instances: the price catalog")
    p.add_argument("--bucket", metavar="URL", help="with --instances: s3:// or gs:// bucket for records")
    p.add_argument("--name", help="with --instances: the campaign's name (cluster names start with it)")
    p.add_argument(
        "--host-image",
        dest="host_images",
        action="append",
        default=[],
        metavar="REGION=AMI",
        help="with --instances: the host AMI of the Gaudi instances in REGION, with Habana's driver and "
        "container runtime (repeat per region; docs/fleet.md, 'Gaudi host image')",
    )
    p.add_argument(
        "--habana-image",
        metavar="IMAGE",
        help="with --instances: the Gaudi tasks' Habana PyTorch container, of the release the host AMI's "
        "driver runs (default: Habana's 1.21.0 image)",
    )
    p.add_argument("--tasks", metavar="DIR", help="where the SkyPilot task files go (default: OUT/tasks)")
    p.add_argument("--out", default=None, metavar="DIR", help=f"campaign folder (default {DEFAULT_OUT}/NAME)")


def load_campaign(args):
    from suite.fleet import campaign, campaign_file, campaign_inline
    from suite.inputs.errors import UserError

    if args.file and args.instances:
        raise UserError("give a campaign file or --instances, not both")
    if args.file:
        inline = {"--set": args.options, "--hours": args.hours, "--spot": args.spot, "--prices": args.prices,
                  "--bucket": args.bucket, "--name": args.name, "--host-image": args.host_images,
                  "--habana-image": args.habana_image}  # fmt: skip
        given = [option for option, value in inline.items() if value not in (None, False, [])]
        if given:
            raise UserError(f"{', '.join(given)} go with --instances; a campaign file sets these itself")
        settings = campaign_file.load(args.file)
        if args.max_cost_usd is not None:
            settings["max_cost_usd"] = args.max_cost_usd
    else:
        settings = campaign_inline.from_inline(
            campaign_inline.InlineCampaign(
                instances=args.instances,
                workload=args.workload,
                options=args.options,
                hours=args.hours,
                spot=args.spot,
                max_cost_usd=args.max_cost_usd,
                prices=args.prices,
                bucket=args.bucket,
                name=args.name,
                host_images=args.host_images,
                habana_image=args.habana_image,
            )
        )
    return campaign.build(settings)


def prepare(args):
    """The campaign, its folder and its task files (written), as plan and run both need them."""
    from suite import run_record
    from suite.fleet import sky_tasks

    plan = load_campaign(args)
    out_dir = run_record.check_out_dir(args.out or os.path.join(DEFAULT_OUT, plan.name))
    paths = sky_tasks.write_tasks(plan, args.tasks or os.path.join(out_dir, "tasks"))
    return plan, out_dir, paths


def plan_command(args) -> int:
    from suite.fleet import campaign_prices, sky_tasks

    plan, out_dir, paths = prepare(args)
    print(
        f"campaign {plan.name}: {plan.workload} on {len(plan.targets)} instance type(s); records to {out_dir}\n"
    )
    for target, path in zip(plan.targets, paths):
        print(f"--- {os.path.relpath(path)}")
        print(sky_tasks.dump(sky_tasks.task(plan, target)).rstrip())
        print()
    print("sky commands (what `suite fleet run` does, one instance at a time):")
    for target, path in zip(plan.targets, paths):
        print(f"  {sky_tasks.sky_command(plan, target, os.path.relpath(path))}")
    print()
    print(campaign_prices.estimate_table(plan))
    return 0


def run_command(args) -> int:
    from suite.fleet import campaign_prices, sky_driver

    plan, out_dir, paths = prepare(args)
    print(campaign_prices.estimate_table(plan), file=sys.stderr)
    sky = sky_driver.import_sky()

    def log(line: str) -> None:
        print(f"fleet: {line}", file=sys.stderr, flush=True)

    try:
        outcomes = sky_driver.run_campaign(plan, paths, out_dir, sky, log=log, keep=args.keep)
    except sky_driver.FleetStopped as error:
        print(f"fleet: stopped: {error}", file=sys.stderr)
        from suite import run_record

        if isinstance(error.__cause__, run_record.RecordNotWritten):  # kept in the fallback, as any run's
            return run_record.EXIT_RECORD_NOT_WRITTEN
        return EXIT_FAILED
    failed = {name: outcome for name, outcome in outcomes.items() if not outcome.startswith("recorded")}
    for name, outcome in failed.items():
        print(f"fleet: {name}: {outcome}", file=sys.stderr)
    report(out_dir, plan.prices)
    return EXIT_FAILED if failed else 0


def report(out_dir: str, prices: str) -> None:
    """The campaign's cost table, as `suite fleet report OUT` prints it."""
    from suite.inputs.errors import UserError
    from suite.reporting import fleet_report

    try:
        sys.stdout.write(fleet_report.render_fleet(out_dir, "md", prices))
    except UserError as error:
        print(f"fleet: {error}", file=sys.stderr)


def report_command(args) -> int:
    from suite.inputs.errors import UserError
    from suite.reporting import fleet_report
    from suite.reporting.render import TABLE_FORMATS

    if args.format not in TABLE_FORMATS:
        raise UserError(f"--format {args.format!r} is not one of: {', '.join(TABLE_FORMATS)}")
    folder, prices = args.source, args.prices
    if os.path.isfile(args.source):
        from suite.fleet import campaign, campaign_file

        plan = campaign.build(campaign_file.load(args.source))
        folder, prices = args.out or os.path.join(DEFAULT_OUT, plan.name), prices or plan.prices
    elif args.out:
        raise UserError("--out goes with a campaign file; a folder is given as the argument itself")
    sys.stdout.write(fleet_report.render_fleet(folder, args.format, prices))
    return 0
