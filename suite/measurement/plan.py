"""A run planned: every input checked, every default filled in and the instance it is priced on named,
nothing built or measured yet. The one home of planning: `suite run`, every child run's resume check and
`suite diagnose` plan through `resolve_plan`; the price catalogs it looks an instance up in are
suite.prices', which only answer (planning writes the accelerators used and the catalog into the spec).

Planning imports no torch (the backends and workloads import it where they build or step): `suite run`
says what it will do before the seconds torch's import takes, and a sweep's dry run checks its points
without it.
"""

from __future__ import annotations

from suite.backends import Backend, backend_class, check_options, resolve_backend_name
from suite.data import check_data
from suite.inputs import input_checks
from suite.inputs.errors import UserError
from suite.inputs.numbers import non_negative_int, positive_int
from suite.measurement import distributed, sharding, window_length
from suite.numerics import check as numerics
from suite.prices.catalog import find_instance
from suite.spec import MAX_ACCELERATORS_USED, MAX_GRAD_ACCUM, MAX_SEED, RECORD_ONLY, RunSpec
from suite.workloads import Workload, get_workload


class Plan:
    """A validated run: everything resolved, nothing built or measured yet.

    The resolved spec lives in one place, the backend (which may fill in defaults of its own);
    `plan.spec` reads and replaces that one copy. What the launcher starts (the world size, the global
    batch) is the plan's, not the spec's; `record_config()` joins the two as the record's `config`."""

    def __init__(
        self,
        spec: RunSpec,
        backend: Backend,
        workload: Workload,
        backend_choice: str,
        steps_chosen_by: str | None = None,
        world_size: int = 1,
        global_batch_size: int | None = None,
    ):
        backend.spec = spec
        self.backend = backend
        self.workload = workload
        self.backend_choice = backend_choice  # why this backend (for `auto`)
        # How the steps per window are chosen (suite.measurement.window_length): as given by --steps, the
        # backend's default, or from warm-up timing (then steps_per_window is None until warm-up, and with
        # a time box the windows too).
        self.steps_chosen_by = steps_chosen_by or window_length.chosen_by(
            spec.schedule.steps_per_window, backend.schedule, spec.schedule.windows
        )
        self.world_size = world_size
        self.global_batch_size = global_batch_size  # batch_size (per process) x world_size

    @property
    def spec(self) -> RunSpec:
        return self.backend.spec

    @spec.setter
    def spec(self, spec: RunSpec) -> None:
        self.backend.spec = spec

    def record_config(self) -> dict:
        """The record's `config`: the spec's flat fields, then the world the launcher started."""
        return self.spec.to_record_config(
            world_size=self.world_size, global_batch_size=self.global_batch_size
        )


def resolve_plan(spec: RunSpec) -> Plan:
    """The one place a run's RunSpec is resolved: `plan_run` (backend, workload, data and every default),
    then the instance it is priced on. `suite run` and every resume check use this."""
    planned = plan_run(spec)
    # Checked before measuring.
    planned.spec = resolve_run_instance(with_detected_instance(planned), planned.world_size)
    return planned


def plan_run(spec: RunSpec) -> Plan:
    """Check every input and fill in defaults, raising UserError before anything is built."""
    asked = spec.workload
    shape = {
        field: None if getattr(asked, field) is None else positive_int(option, getattr(asked, field))
        for field, option in (("num_classes", "--num-classes"), ("image_size", "--image-size"))
    }
    workload = get_workload(spec.workload.name, **shape)
    if spec.workload.model_overrides:
        workload = workload.with_overrides(**spec.workload.model_overrides)
    name, why = resolve_backend_name(spec.backend)
    cls = backend_class(name)
    check_options(name, spec)
    if spec.precision is not None and spec.precision not in cls.precisions:
        raise UserError(
            f"precision {spec.precision!r} is not supported by the {name} backend "
            f"(accepted: {', '.join(cls.precisions)})"
        )
    timing, steps_chosen_by = _schedule(spec.schedule, cls.schedule)
    resolved = spec.replace(
        backend=name,
        threads=None if spec.threads is None else positive_int("--threads", spec.threads),
        precision=spec.precision or cls.precisions[0],
        **timing,
        **shape,
    )
    backend = cls(resolved)
    batch_size = (
        backend.default_batch_size(workload)
        if spec.workload.batch_size is None
        else positive_int("--batch-size", spec.workload.batch_size)
    )
    # The world the launcher starts is the plan's; the launch options it settles are the spec's.
    fields = distributed.resolved_fields(backend.spec, batch_size)
    launched = {name: fields.pop(name) for name in RECORD_ONLY}
    # From the backend's spec: a backend may fill in defaults of its own (hpu: the execution mode).
    plan = Plan(
        backend.spec.replace(batch_size=batch_size, **fields),
        backend,
        workload,
        why,
        steps_chosen_by,
        **launched,
    )
    _check_run_options(plan.spec, workload)
    check_data(plan.spec, workload, backend, plan.spec.workload.samples_per_step)
    numerics.check_options(plan.spec, workload, plan.world_size)
    sharding.check_options(plan.spec, workload, plan.world_size)
    input_checks.check_plan(plan.spec, workload)  # threads, profile folder, timeouts, overrides
    return plan


def _schedule(asked, schedule) -> tuple[dict, str]:
    """The warm-up, steps and windows of a run (the spec's fields), the ones not ASKED the backend's
    SCHEDULE's; and how the steps are chosen. Warm-up decides what a time box leaves (None here)."""
    windows = None if asked.windows is None else positive_int("--windows", asked.windows)
    steps_per_window, steps_chosen_by = window_length.planned(
        schedule,
        None if asked.steps_per_window is None else positive_int("--steps", asked.steps_per_window),
        windows,
    )
    if windows is None and steps_chosen_by != window_length.TIME_BOX:
        windows = schedule.windows
    warmup_steps = (
        schedule.warmup_steps
        if asked.warmup_steps is None
        else non_negative_int("--warmup", asked.warmup_steps)
    )
    timing = {"warmup_steps": warmup_steps, "steps_per_window": steps_per_window, "windows": windows}
    return timing, steps_chosen_by


def _check_run_options(spec: RunSpec, workload: Workload) -> None:
    """--grad-accum within its bounds (a spec file's too), and both training options only where the
    workload's step honours them; the spec's own fields that no option sets (seed, accelerators used), as
    an option would check them."""
    grad_accum = positive_int("--grad-accum", spec.workload.grad_accum, MAX_GRAD_ACCUM)
    workload.check_run_options(grad_accum, spec.workload.activation_checkpointing)
    non_negative_int("workload.seed", spec.workload.seed, MAX_SEED)
    if spec.cost.accelerators_used is not None:  # a report divides the rate by it: 0 or -3 was skipped there
        positive_int("cost.accelerators_used", spec.cost.accelerators_used, MAX_ACCELERATORS_USED)


# -- the instance a run is priced on -------------------------------------------------------------------


def with_detected_instance(planned: Plan) -> RunSpec:
    """The spec to price: as given, or, with no --instance, named after the instance this machine says it
    is (context.detected_instance) where a price catalog lists it and the run could be priced as it: not
    a host-only run on an instance rented for its accelerators, nor one using more of them than it has."""
    from suite import context

    spec = planned.spec
    detected = None if spec.cost.instance is not None else context.detected_instance()
    if detected is None:
        return spec
    try:
        instance, _ = find_instance(detected["instance"], spec.cost.prices)
        resolve_run_instance(spec.replace(instance=instance.name), planned.world_size)
    except UserError:
        return spec  # not in the catalogs asked, or the run cannot be that instance's: left unpriced
    if instance.accelerator_count and not getattr(planned.backend, "copies_to_device", True):
        return spec
    return spec.replace(instance=instance.name)


def resolve_run_instance(spec: RunSpec, world_size: int = 1) -> RunSpec:
    """`suite run --instance`: check the name before anything is measured and record how many of the
    instance's accelerators the run used (one per process of the WORLD_SIZE the launcher starts)."""
    instance = spec.cost.instance
    if instance is not None and not str(instance).strip():
        raise UserError(
            "--instance is empty: give an instance name (see `suite prices list`), or leave it out"
        )
    prices = spec.cost.prices
    if prices is not None and not str(prices).strip():
        raise UserError(
            "--prices is empty: give a catalog name or file (see `suite prices list`), or leave it out"
        )
    if prices and not instance:
        # Said, not ignored: the person meant the run to be priced, and a report would show it unpriced.
        raise UserError(
            f"--prices {prices!r} names the catalog --instance is looked up in, and no --instance is given: "
            "add --instance NAME (see `suite prices list`), or leave --prices out"
        )
    if not instance:
        return spec
    instance, catalog = find_instance(instance, prices)
    # Per instance: a run over several nodes rents one instance per node.
    per_node = max(1, (world_size or 1) // (spec.launch.nnodes or 1))
    used = spec.cost.accelerators_used if spec.cost.accelerators_used is not None else per_node
    if instance.accelerator_count and used > instance.accelerator_count:
        raise UserError(
            f"the run uses {used} accelerators but {instance.name} has "
            f"{instance.accelerator_count} ({instance.accelerator})"
        )
    return spec.replace(accelerators_used=used, prices=prices or catalog.name)
