"""A campaign's runs, planned as `suite run` plans them, before anything is rented.

Each instance's `suite run` line (sky_tasks.run_argv: the line its task will run) is parsed by `suite run`'s
own parser and planned as far as this machine can plan it without the instance: the options the backend
would refuse (runner.plan_run's backends.check_options), the workload with its --num-classes, --image-size
and --model-override values (runner.plan_run's get_workload and with_overrides). An override the run would
refuse (an unknown field, text or a fraction for a size, a size below 1) is refused here, by `suite fleet
plan`, rather than on an instance that is already billing.

What needs the device or torch is left to the instance: whether the backend is there, a precision it
supports, the model built with its overrides (input_checks.check_model_builds), and workloads named by
a module path (resolved where they run).
"""

from __future__ import annotations

import dataclasses

from suite.inputs.errors import UserError


def check_runs(campaign) -> None:
    """Refuse the campaign if `suite run` would refuse any of its runs (a UserError naming the instance)."""
    from suite.fleet import sky_tasks

    for target in campaign.targets:
        where = f"instance {target.instance_type}"
        check_run(sky_tasks.run_argv(campaign, target), where)


def check_run(argv: list[str], where: str) -> None:
    """Plan the run of `suite run ARGV` as far as it can be planned without its machine."""
    from suite import backends
    from suite.inputs.numbers import positive_int
    from suite.run_options import run_parser, spec_from_args

    try:
        spec = spec_from_args(run_parser().parse_args(argv))
        backends.check_options(spec.backend, spec)
        if ":" in spec.workload.name:  # torchvision:, timm:, module:factory: resolved on the instance
            return
        from suite.workloads import get_workload

        shape = {
            field: None
            if getattr(spec.workload, field) is None
            else positive_int(option, getattr(spec.workload, field))
            for field, option in (("num_classes", "--num-classes"), ("image_size", "--image-size"))
        }
        workload = get_workload(spec.workload.name, **shape)
        if spec.workload.model_overrides:
            check_overrides(workload, spec.workload.model_overrides)
            workload.with_overrides(**spec.workload.model_overrides)
    except UserError as error:
        raise UserError(f"{where}: `suite run` would refuse this run: {error}") from None


def check_overrides(workload, overrides: dict) -> None:
    """Each override's value is of its field's type: a whole number of at least 1 for a size (a field
    whose default is a positive whole number), a number for a number, true/false for a switch, text for
    text. A value of another type cannot build the model (input_checks.check_model_builds refuses it on
    the machine)."""
    fields = {f.name: getattr(workload, f.name) for f in dataclasses.fields(workload)}
    for key, value in overrides.items():
        if key not in fields:
            continue  # with_overrides names the unknown ones with the known
        default = fields[key]
        flag = f"--model-override {key}={value}"
        if isinstance(default, bool):
            wanted = isinstance(value, bool)
            what = "true or false"
        elif isinstance(default, int):
            wanted = isinstance(value, int) and not isinstance(value, bool) and (value >= 1 or default < 1)
            what = "a whole number of at least 1" if default >= 1 else "a whole number"
        elif isinstance(default, float):
            wanted = isinstance(value, (int, float)) and not isinstance(value, bool)
            what = "a number"
        elif isinstance(default, str):
            wanted = isinstance(value, str)
            what = "text"
        else:
            continue
        if not wanted:
            raise UserError(f"{flag}: {workload.name}'s {key} must be {what} (its default is {default!r})")
