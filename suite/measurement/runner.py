"""The measurement loop: build, warm up, then K timed windows of M steps.

    synchronize; t0 = now; M x train_step; synchronize; t1 = now      (one window)

The device is synchronised only at window edges. Inside a window nothing reads a device value: the
step returns its loss as a tensor, and losses are checked for NaN/inf after the last window.

A distributed run (world size > 1, see suite.measurement.distributed) adds a barrier at each window's start, so
all ranks start their clocks together, and takes the slowest rank's time as the window's time; its
throughput counts the images of all ranks. With one process none of that runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from time import perf_counter as clock  # the window clock: monotonic, high resolution

import psutil
import torch

from suite import context, run_record
from suite.data import open_data
from suite.diagnosis import rules as diagnosis_rules
from suite.measurement import (
    bottleneck_probe,
    distributed,
    flops,
    profiling,
    sharding,
    units,
    window_length,
)
from suite.measurement.cpu_share import add_to_load as add_cpu_share_to_load
from suite.measurement.plan import Plan, plan_run  # noqa: F401 - callers reach the plan here too
from suite.measurement.telemetry import HostSampler, Telemetry, energy_per_image
from suite.numerics import check as numerics
from suite.run_record.record import metrics_of
from suite.run_record.windows import spread_warnings, window_metrics
from suite.workloads import Workload
from suite.workloads import user_code as guard


def process_start_time() -> float:
    """Wall-clock time this Python started the suite (for time-to-first-step): never what a shell did
    before `exec suite run` under the same pid (suite.context.interpreter_start_time)."""
    return context.interpreter_start_time()


def _noop(*_args, **_kwargs) -> None:
    pass


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM after a timed window: `record` holds the windows timed, status `interrupted`.
    A KeyboardInterrupt still, so that a caller that does not keep the record stops as before."""

    def __init__(self, record: dict):
        super().__init__()
        self.record = record


def execute(plan: Plan, progress=_noop) -> dict:
    """Measure. Returns the record; failures (OOM, errors, NaN, a sys.exit() or another BaseException from
    the model's code) are in it, not raised, with the windows timed before them. Once a window is timed a
    record exists: Ctrl-C or SIGTERM after it raises RunInterrupted with the record of the windows timed;
    before it (or in a rank of a distributed run, whose peers could not join the record's collectives),
    the KeyboardInterrupt goes on and no record is made."""
    spec, backend, workload = plan.spec, plan.backend, plan.workload
    ctx = context.collect()
    # A launcher parent (`suite run --nproc`) names the run, so that it can find rank 0's record.
    run_id = distributed.launcher_run_id() or run_record.new_run_id(
        workload.name, backend.name, ctx["utc_time"]
    )
    record = run_record.new_record(run_id, ctx, plan.record_config())
    record["backend_choice"] = plan.backend_choice
    record["workload"] = {
        "name": workload.name,
        "description": workload.description,
        "image_size": workload.image_size,
        "parameters": workload.parameter_counts(),
        **workload.provenance(),
    }
    group = distributed.process_group(backend, spec)  # does nothing for a single process
    interrupted = False
    try:
        _measure(plan, record, progress, group)
        guard.restore_environment()  # before the numerics ledger and the FLOP cache read theirs
        if spec.checks.numerics and record["status"] == "ok":
            before_s = time.time() - process_start_time()  # what the check's own time is set against
            record["numerics"] = numerics.check(plan)  # after the timed windows: no figure changes
            record["numerics"]["run_s"] = before_s
    except KeyboardInterrupt:
        if group.info.is_distributed or metrics_of(record).images_per_second is None:
            raise  # no window timed: nothing measured is lost
        _mark_interrupted(record)
        interrupted = True
    except BaseException as error:  # noqa: BLE001 - every failure becomes a record, a model's sys.exit() too
        status = "oom" if isinstance(error, Exception) and backend.is_out_of_memory(error) else "error"
        record["status"] = status
        record["error"] = (
            run_record.error_of(error) if isinstance(error, Exception) else guard.escape_error(error)
        )
        if status == "oom":
            record["error"]["hint"] = (
                f"batch size {spec.workload.batch_size} does not fit: lower --batch-size, "
                "or find the largest that fits with `suite batch-size`"
            )
        group.report_failure(record["error"], status)  # for the launcher's summary
    guard.restore_environment()  # the model's code has run: the suite's own variables as they were
    try:
        record["device"] = backend.device_info()
        record["memory"] = backend.memory_stats()
    except Exception as error:  # noqa: BLE001 - a broken device query must not lose the measurement
        record["warnings"].append(f"device query failed: {error}")
    group.finish(record)
    if metrics_of(record).images_per_second is not None:
        _add_efficiency(record, workload)
    if interrupted:
        raise RunInterrupted(record)
    return record


def _mark_interrupted(record: dict) -> None:
    """The record of a run stopped by Ctrl-C or SIGTERM after its windows or some of them were timed."""
    metrics = metrics_of(record)
    timed = len(metrics.window_time_s or ())
    windows = metrics.get("windows_planned") or timed
    where = (
        f"during timed window {timed + 1} of {windows}"
        if timed < windows
        else f"after its {windows} timed windows"
    )
    record["status"] = "interrupted"
    record["error"] = {
        "type": "Interrupted",
        "message": f"interrupted (Ctrl-C or SIGTERM) {where}: the {timed} window(s) timed are this record's figures",
    }


def _add_efficiency(record: dict, workload: Workload) -> None:
    """MFU (where the device's peak is known) and energy per image (where the device reports power)."""
    metrics, measured = record["metrics"], metrics_of(record)
    # MFU is per device: a distributed run's throughput is all ranks', each on its own device.
    per_device = measured.images_per_second / (record["config"].get("world_size") or 1)
    try:
        metrics.update(flops.mfu_metrics(workload, per_device, record["device"].get("peak_tflops")))
    except Exception as error:  # noqa: BLE001 - counting FLOPs must not lose the measurement
        record["warnings"].append(f"FLOP count failed, MFU left blank: {error}")
    # This rank's telemetry saw this rank's device only: divide its energy by this rank's images.
    world_size = record["config"].get("world_size") or 1
    energy, method = energy_per_image(
        record["telemetry"], measured.images_timed / world_size, measured.time_timed_s
    )
    metrics["energy_per_image_j"] = energy
    metrics["energy_method"] = method
    if metrics.get("unit"):  # a token workload: the same figures per token
        metrics["flops_per_token"] = units.per_unit(metrics, "flops_per_image")
        metrics["energy_per_token_j"] = units.per_unit(metrics, "energy_per_image_j")


@dataclass(frozen=True)
class _Stepping:
    """What each training step reads and writes: the step, the batches it draws, the losses it leaves."""

    train_step: Callable
    batches: Iterator
    losses: list


def _measure(plan: Plan, record: dict, progress, group) -> None:
    spec, backend, workload = plan.spec, plan.backend, plan.workload
    training = _build_training(plan, group)
    if spec.launch.fsdp:  # what this rank holds of the sharded model
        record["sharding"] = sharding.describe(training.modules.values())
    data = open_data(spec, workload, backend, spec.workload.samples_per_step)  # one step's micro-batches
    record["data"] = data.describe()
    losses: list[torch.Tensor] = []
    stepping = _Stepping(training.train_step, iter(data), losses)
    warmup, length = _warm_up_and_choose_steps(
        plan, stepping.train_step, stepping.batches, losses, progress, group, _batches_ahead(record["data"])
    )
    steps = length.steps
    telemetry = Telemetry([HostSampler(), *backend.telemetry_samplers()])
    profiler = profiling.open_profiler(spec, backend, steps * length.windows)
    window_times: list[float] = []  # each window's time as it ends (the slowest rank's), and this rank's
    rank_window_times: list[float] = []
    try:
        try:
            _timed_windows(
                plan,
                length,
                stepping,
                group,
                (telemetry, profiler, progress),
                window_times,
                rank_window_times,
            )
            probed = _probe(plan, stepping, data, steps, group)
        finally:
            _close_instruments(record, telemetry, profiler, data)
    except BaseException:
        if window_times:  # once a window is timed, its figures are the record's, whatever ended the run
            _record_metrics(plan, record, warmup, length, window_times, rank_window_times, group)
            record["metrics"]["windows_planned"] = length.windows  # beside the windows it timed
        raise
    _record_metrics(plan, record, warmup, length, window_times, rank_window_times, group)
    if probed:
        record["diagnosis"] = _diagnosis(probed, record, plan.backend)
    _check_losses(losses, record, workload.loss_names)


def _probe(plan: Plan, stepping: _Stepping, data, steps: int, group) -> dict | None:
    """Real data, one process: where is the bottleneck? Measured after the windows, outside them."""
    if data.kind == "synthetic" or group.info.is_distributed:
        return None
    return bottleneck_probe.measure(
        stepping.train_step,
        data,
        stepping.batches,
        plan.backend,
        steps,
        plan.workload.images_per_step(plan.spec.workload.samples_per_step),
    )


def _build_training(plan: Plan, group):
    """The workload's modules on the backend, seeded, wrapped for the process group, then compiled."""
    spec, backend = plan.spec, plan.backend
    torch.manual_seed(spec.workload.seed)
    backend.setup()
    group.start()
    training = plan.workload.build(backend)
    training.use_run_options(spec.workload.grad_accum, spec.workload.activation_checkpointing)
    group.wrap(training)  # DDP copies rank 0's weights to every rank here
    torch.manual_seed(spec.workload.seed + group.info.rank)  # each rank draws its own noise from now on
    # Compiled after the DDP wrap, never before (Backend.compile_model).
    training.modules = {name: backend.compile_model(module) for name, module in training.modules.items()}
    return training


def _close_instruments(record: dict, telemetry, profiler, data) -> None:
    """After the windows, however they ended: telemetry and the profile into the record, the loader shut."""
    record["telemetry"] = telemetry.close()
    add_cpu_share_to_load(record)  # the CPU this run got in its windows, beside the host's load
    record["warnings"].extend(
        f"telemetry '{name}' off: {why}" for name, why in record["telemetry"]["failed"].items()
    )
    data.close()
    profile = profiler.close()
    if profile:
        record["profile"] = profile
        record["warnings"].append(profiling.PERTURBED)


def _record_metrics(
    plan: Plan, record: dict, warmup: dict, length, window_times: list, rank_window_times: list, group
) -> None:
    """The windows' throughput and its spread, the warm-up's figures and the window length's, with the
    warnings they call for."""
    spec, backend, workload = plan.spec, plan.backend, plan.workload
    steps = length.steps
    images_per_window = _images_per_window(plan, steps)
    figures = window_metrics(images_per_window, steps, window_times)
    metrics = figures.to_json()
    metrics.update(
        {
            **warmup,
            **length.metrics(),
            "images_per_step": workload.images_per_step(spec.workload.samples_per_step) * plan.world_size,
            "steps_timed": steps * len(window_times),
        }
    )
    if spec.workload.grad_accum > 1:  # a step of several micro-batches: both batches by name (per process)
        metrics["micro_batch_size"] = spec.workload.batch_size
        metrics["accumulated_batch_size"] = spec.workload.samples_per_step
    metrics.update(units.unit_metrics(metrics, workload.unit, workload.units_per_sample()))
    record["metrics"] = metrics
    if group.info.is_distributed:
        metrics["rank_window_time_s"] = rank_window_times
    record["warnings"].extend(spread_warnings(figures))
    record["warnings"].extend(window_length.short_window_warnings(length, window_times, backend.name))


def _images_per_window(plan: Plan, steps: int) -> int:
    # Every rank consumes its own batch each step (all its micro-batches): a window holds world_size x the
    # images of one.
    spec = plan.spec
    return plan.workload.images_per_step(spec.workload.samples_per_step) * steps * plan.world_size


def _batches_ahead(data: dict) -> int:
    """Batches a loader's workers can have ready before the first step asks: up to workers x prefetch."""
    workers = data.get("workers") or 0
    return workers * (data.get("prefetch") or 2) if workers else 0


def _warm_up_and_choose_steps(
    plan: Plan, train_step, batches, losses: list, progress, group, batches_ahead: int
) -> tuple[dict, window_length.WindowLength]:
    """Warm-up, then the steps each timed window holds: from the last warm-up steps' time where the
    backend declares a minimum window and no --steps was given (suite.measurement.window_length)."""
    spec, backend = plan.spec, plan.backend
    steps_timed = window_length.steps_to_time(plan.steps_chosen_by, spec.schedule.warmup_steps, batches_ahead)
    warmup, step_time_s = _warm_up(plan, train_step, batches, losses, progress, batches_ahead, steps_timed)
    if step_time_s is not None:
        # A collective, in warm-up (outside every window): each rank timed its own steps, and all ranks must
        # run windows of the same steps, so each takes the slowest rank's step time.
        step_time_s = group.slowest(step_time_s)
    length = window_length.decide(
        backend.schedule,
        plan.steps_chosen_by,
        spec.schedule.steps_per_window,
        step_time_s,
        steps_timed,
        spec.schedule.windows,
    )
    return warmup, length


def _warm_up(
    plan: Plan, train_step, batches, losses: list, progress, batches_ahead: int = 0, steps_timed: int = 0
) -> tuple[dict, float | None]:
    """Warm-up: excluded from throughput, reported on its own. The first step is synchronised so
    that time-to-first-step (process start -> first step done) includes compilation.

    Real data adds `batches_ahead` steps: the batches the workers made while the model was being built.
    Timed, they would be served at compute speed and make an input-bound run look faster than its loader
    (16 workers x 2 prefetched = 32 free batches, more than a 10-step window). After them the queue is in
    its steady state: empty when the loader is the bottleneck, full when it keeps up.

    With `steps_timed`, the last that many steps are timed as well, the device synchronised at both edges
    (warm-up ends with a synchronisation anyway): the time of one of them is returned beside the figures,
    else None."""
    spec, backend = plan.spec, plan.backend
    total = spec.schedule.warmup_steps + batches_ahead
    timed_from = total - steps_timed if steps_timed else None
    warmup_start = clock()
    first_step_done_at = timed_start = None
    idle = False  # whether the device has nothing queued (just synchronised)
    for step in range(total):
        if step == timed_from:
            if not idle:
                # sync point, in warm-up (no window is open): the timed steps start on an idle device
                backend.synchronize()
            timed_start = clock()
        losses.append(train_step(next(batches)))
        idle = False
        if step == 0:
            backend.synchronize()  # sync point: only to timestamp the first step
            first_step_done_at = time.time()
            idle = True
        progress("warmup", step=step + 1, of=total)
        guard.end_if_a_copy()  # a copy the model's code forked stops here, before it measures anything
    backend.synchronize()
    warmup_end = clock()
    backend.reset_peak_memory()
    figures = {
        "warmup_steps": spec.schedule.warmup_steps,
        "warmup_loader_drain_steps": batches_ahead,
        "warmup_time_s": warmup_end - warmup_start,
        "time_to_first_step_s": (first_step_done_at - process_start_time()) if first_step_done_at else None,
    }
    return figures, (warmup_end - timed_start) / steps_timed if timed_start is not None else None


def _timed_windows(
    plan: Plan,
    length,
    stepping: _Stepping,
    group,
    watchers: tuple,
    window_times: list[float],
    rank_window_times: list[float],
) -> None:
    """The timed windows of LENGTH (its windows of its steps), each window's time (the slowest rank's)
    appended to WINDOW_TIMES and this rank's own to RANK_WINDOW_TIMES as the window ends: what ends the run
    later leaves them there. WATCHERS: the telemetry, the profiler and the progress callback."""
    backend, steps, windows = plan.backend, length.steps, length.windows
    telemetry, profiler, progress = watchers
    # Locals, read once here: the steps inside a window look up nothing more than they did.
    train_step, batches, losses = stepping.train_step, stepping.batches, stepping.losses
    images_per_window = _images_per_window(plan, steps)
    unit = {
        "unit": plan.workload.unit,
        "units_per_sample": plan.workload.units_per_sample(),
    }  # for progress lines
    for window in range(windows):
        backend.synchronize()  # window edge: all earlier work is done before the clock starts
        group.barrier()  # window edge: every rank starts its clock together (blocks the host)
        telemetry.window_open()
        start = clock()
        for _ in range(steps):
            losses.append(train_step(next(batches)))
            profiler.step()
        backend.synchronize()  # window edge: all of this window's work is done
        elapsed = clock() - start
        telemetry.window_closed()
        guard.end_if_a_copy()  # after the clock: a copy the model's code forked measures no window
        # A collective, after the clock stopped: the window lasts until its slowest rank is done.
        slowest = group.slowest(elapsed)
        rank_window_times.append(elapsed)
        window_times.append(slowest)
        progress(
            "window",
            window=window + 1,
            of=windows,
            images_per_second=images_per_window / slowest,
            **unit,
        )


def _diagnosis(probed: dict, record: dict, backend) -> dict:
    """The bottleneck verdict of a run on real data, from the probe, the run's own figures and settings,
    and the backend's capabilities."""
    return diagnosis_rules.from_probe(record, probed, backend, cores=psutil.cpu_count(logical=True))


def _check_losses(losses: list, record: dict, loss_names: tuple[str, ...] = ()) -> None:
    """After the windows, where reading device values costs nothing measured: NaN/inf is a divergence."""
    all_losses = torch.stack([loss.reshape(-1) for loss in losses]).float().cpu()
    record["metrics"]["final_loss"] = all_losses[-1].tolist()
    if loss_names:  # which loss is which (a DCGAN's discriminator's, then its generator's)
        record["metrics"]["final_loss_names"] = list(loss_names)
    if not torch.isfinite(all_losses).all():
        record["status"] = "diverged"
        bad_step = int((~torch.isfinite(all_losses)).any(dim=1).nonzero()[0])
        record["error"] = {
            "type": "Diverged",
            "message": f"loss became NaN/inf at step {bad_step + 1} (counting warm-up)",
        }
    else:
        record["status"] = "ok"
