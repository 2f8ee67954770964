"""Numerics parity: does the asked precision train the same model as fp32?

After the timed windows (so no throughput figure changes), the workload's own recipe (its optimizer at its
real learning rate) trains for a few steps from the seed's initial weights, three times
(suite/numerics/training.py says what each run measures):

    reference   fp32, TF32 off, on this backend (or on --reference-backend, e.g. the CPU)
    noise       fp32 again, the same weights, the batches in the other order and another noise seed: two
                fp32 trainings that are equally right; how far they disagree is the run-to-run noise
    candidate   the asked precision on this backend, the reference's batches and noise

Compared (each as |candidate − reference| ÷ |reference|, and the noise run the same way):

    loss     per loss, the mean over the last pass through the batches (every run saw each batch once)
    drift    per layer group, ‖w_T − w_0‖: where the update went, relative to its own size
    grad     per layer group, the RMS gradient norm over the steps
    update   per layer group and step, ‖w_t − w_(t−1)‖ against the reference's at the same step, as a log
             ratio whose noise is its spread over the steps (suite/numerics/updates.py): one
             update that vanished or exploded fails, however noisy the whole-run quantities are

    tolerance = K × noise, K = 3; a quantity's noise is at least the median noise over all the quantities:
                one pair of runs may agree on one quantity by chance

K is the multiplier PyTorch's accuracy check gives a low precision against its reference
(torch/_dynamo/utils.py, `same(..., multiplier=3.0)` for AMP); docs/numerics.md says why, what the check
catches and what it cannot. Where fp32 itself is too noisy to judge (a drift tolerance of 1 or more, or a
classifier's loss that fp32 does not clearly lower), a candidate that did not fail is `inconclusive`.

A candidate that is the reference's own configuration (fp32, TF32 off, on the reference's backend: the
CPU's default run) equals the reference by construction: every deviation would be 0 whatever the noise, so
nothing is compared and no noise run is trained. The reference trains once, so that a recipe whose fp32 loss
is not finite still fails.
"""

from __future__ import annotations

import statistics
import time

from suite.inputs.errors import UserError
from suite.numerics import keep, updates

K = 3.0  # multiples of the measured run-to-run noise a candidate may deviate
REFERENCE = "fp32"
# Two distinct batches: the noise run visits them in the other order.
BATCHES = 2


def check_options(spec, workload, world_size: int = 1) -> None:
    """Refuse what the check cannot do, while the run is planned (exit 2, nothing built)."""
    if spec.checks.reference_backend is not None and not spec.checks.numerics:
        raise UserError("--reference-backend needs --check-numerics (it names what the check compares with)")
    if not spec.checks.numerics:
        return
    if (spec.launch.nproc or 1) > 1 or (world_size or 1) > 1:
        raise UserError("--check-numerics runs in one process: drop --nproc (check one device, then scale)")
    if spec.checks.reference_backend is not None:
        from suite.backends import backend_class, backend_names
        from suite.inputs.errors import one_of

        if spec.checks.reference_backend not in backend_names():
            raise one_of("--reference-backend", spec.checks.reference_backend, backend_names())
        available, why = backend_class(spec.checks.reference_backend).is_available()
        if not available:
            raise UserError(
                f"--reference-backend {spec.checks.reference_backend} is not available here: {why}"
            )
        if REFERENCE not in backend_class(spec.checks.reference_backend).precisions:
            raise UserError(f"--reference-backend {spec.checks.reference_backend} cannot run {REFERENCE}")


def _reference_config(spec):
    """fp32 with TF32 off, on the reference backend (the same one unless --reference-backend)."""
    if spec.checks.reference_backend in (None, spec.backend):
        return spec.backend, spec.replace(precision=REFERENCE, tf32=False, compile=False, compile_mode=None)
    from suite.spec import RunSpec

    # Only what every backend honours: device-specific options belong to the backend under test.
    return spec.checks.reference_backend, RunSpec().replace(
        backend=spec.checks.reference_backend,
        workload=spec.workload.name,
        batch_size=spec.workload.batch_size,
        precision=REFERENCE,
        threads=spec.threads,
        seed=spec.workload.seed,
        model_overrides=spec.workload.model_overrides,
    )


def relative(value: float, reference: float) -> float:
    """|value − reference| ÷ |reference|; not finite anywhere: inf (a NaN never passes)."""
    if not (abs(value) < float("inf") and abs(reference) < float("inf")):
        return float("inf")
    if reference == 0:
        return 0.0 if value == 0 else float("inf")
    return abs(value - reference) / abs(reference)


def quantities(run: dict, passes: int) -> dict[str, float]:
    """What the check compares, by name: `loss 0`, `drift generator.conv`, `grad model.linear` ..."""
    found = {f"loss {i}": value for i, value in enumerate(run["losses"][-passes:].mean(dim=0).tolist())}
    found.update({f"drift {name}": value for name, value in run["drift"].items()})
    found.update({f"grad {name}": value for name, value in run["grad"].items()})
    return found


def compare(runs: dict, passes: int) -> list[dict]:
    """One row per quantity: the three runs' values, the candidate's deviation, the noise (the noise run's
    deviation) and the tolerance. A loss is measured against the reference's loss over the first pass (its
    scale before training: a loss that falls towards 0 would make its own end a meaningless yardstick);
    drift and grad against themselves."""
    values = {role: quantities(run, passes) for role, run in runs.items()}
    start = runs["reference"]["losses"][:passes].mean(dim=0).tolist()

    def gap(role: str, name: str, reference: float) -> float:
        value = values[role].get(name, float("nan"))
        if name.startswith("loss "):
            scale = start[int(name.split()[1])]
            return relative(value - reference + scale, scale)
        return relative(value, reference)

    rows = [
        {
            "name": name,
            "values": {role: values[role].get(name, float("nan")) for role in values},
            "deviation": gap("candidate", name, reference),
            "noise": gap("noise", name, reference),
        }
        for name, reference in values["reference"].items()
    ]
    skipped = runs["candidate"].get("grad_scaler", {}).get("skipped_at", [])
    rows += updates.rows(runs, skipped)
    # One pair of fp32 runs may agree on any one quantity by chance: no quantity's noise is taken below the
    # median over all of them, the typical disagreement of two equally right trainings.
    typical = statistics.median(row["noise"] for row in rows)
    for row in rows:
        row["tolerance"] = K * max(row["noise"], typical)
    return rows


def _share(row: dict) -> float:
    """deviation ÷ tolerance: over 1 fails."""
    if row["tolerance"]:
        return row["deviation"] / row["tolerance"]
    return 0.0 if row["deviation"] == 0 else float("inf")


def _loss_falls(runs: dict) -> tuple[dict[str, bool], str | None]:
    """Per run, whether its first loss fell from the first pass through the batches to the last; and why
    fp32 itself leaves that undecided (None: it does not). A classifier learns its few batches, so where
    fp32's loss clearly falls the candidate's must fall too; but a real network at the check's small batch
    can swing its loss by more than it falls (BatchNorm over a few images), and a fall that two fp32 runs
    do not agree on, or that is within K × their disagreement on the last pass, is no yardstick."""
    first = {role: float(run["losses"][:BATCHES, 0].mean()) for role, run in runs.items()}
    last = {role: float(run["losses"][-BATCHES:, 0].mean()) for role, run in runs.items()}
    fell = {role: last[role] < first[role] for role in runs}
    drop = min(first[role] - last[role] for role in ("reference", "noise"))
    spread = abs(last["reference"] - last["noise"])
    if not fell["noise"] or not drop > K * spread:
        return fell, (
            f"the candidate's loss did not fall, but fp32's own fall is not clear: its two runs fell "
            f"{first['reference'] - last['reference']:.3g} and {first['noise'] - last['noise']:.3g} over "
            f"the check and end {spread:.3g} apart (a fall must exceed {K:g} × that)"
        )
    return fell, None


def check(plan, backend_factory=None) -> dict:
    """Run the check for a planned run; the result goes in the record as `numerics`. A failure of the
    check itself is recorded as verdict `error`, never losing the throughput already measured."""
    from suite.backends import backend_class

    spec, workload = plan.spec, plan.workload
    make = backend_factory or (lambda name, cfg: backend_class(name)(cfg))
    steps, batch_size = workload.numerics_steps, min(spec.workload.batch_size, workload.numerics_batch)
    started = time.perf_counter()
    reference = _reference_config(spec)
    result = _described(spec, reference[0], steps, batch_size, _samples_word(workload))
    alone = is_the_reference(spec, reference)
    result["trained_runs"] = 1 if alone else 3
    if alone:
        result["candidate"] += " (the reference's own configuration: nothing to compare, trained once)"
        result["noise"] = None
    batches = [
        workload.synthetic_batch(batch_size, "cpu", seed=spec.workload.seed + i) for i in range(BATCHES)
    ]
    try:
        runs = _trained_runs(spec, workload, make, reference, steps, batches, alone)
    except Exception as error:  # noqa: BLE001 - the check failing must not lose the measurement
        text = str(error).strip()
        result.update(
            verdict="error", reason=f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"
        )
        result["time_s"] = time.perf_counter() - started
        keep.keep(plan, result)  # every verdict is kept, keyed by its configuration
        return result

    if alone:
        rows, worst = [], None
        verdict, reasons = _judged_alone(runs["reference"])
    else:
        rows = compare(runs, BATCHES)
        verdict, reasons = _judged(runs, rows, workload, batch_size)
        worst = max(rows, key=_share)["name"]
    # Alone, the reference's run is the candidate's.
    candidate_run = runs["reference" if alone else "candidate"]
    result.update(
        learning_rate=candidate_run["lr"],
        losses={role: runs[role]["losses"].tolist() for role in runs},
        compared=rows,
        worst=worst,
        verdict=verdict,
        reason="; ".join(reasons) if reasons else None,
        time_s=time.perf_counter() - started,
    )
    if "grad_scaler" in candidate_run:
        result["grad_scaler"] = candidate_run["grad_scaler"]
    keep.keep(plan, result)  # the ledger: report and compare find it beside any folder's records
    return result


def _samples_word(workload) -> str:
    """What one sample of the workload is, in the check's words: images, or a language model's sequences."""
    return (
        "images"
        if workload.unit == "images"
        else f"sequences of {workload.units_per_sample():,} {workload.unit}"
    )


def _described(spec, reference_name: str, steps: int, batch_size: int, samples: str = "images") -> dict:
    """What the check compares, in words, before anything has run."""
    return {
        "reference": f"{reference_name} {REFERENCE} (TF32 off)",
        "candidate": f"{spec.backend} {spec.precision}",
        "noise": f"{reference_name} {REFERENCE} again, the batches in the other order, another noise seed",
        "steps": steps,
        "batch": f"synthetic, {BATCHES} batches of {batch_size} {samples}, in turn",
        "recipe": "the workload's optimizer at its own learning rate",
        "k": K,
    }


def is_the_reference(spec, reference: tuple) -> bool:
    """Whether the candidate is the reference's own configuration (fp32, TF32 off, not compiled, on the
    reference's backend): its run would be the reference's run again, step for step."""
    return (spec.backend, spec) == reference


def _trained_runs(spec, workload, make, reference: tuple, steps: int, batches: list, alone: bool) -> dict:
    """fp32 twice (the second in the other order, with another noise seed), then the candidate; ALONE (the
    candidate is the reference's own configuration), the reference only: the candidate's run would repeat
    it step for step (on the CPU bit for bit; tests/test_numerics.py), so every deviation would be 0, and a
    noise run would measure the yardstick of a comparison that cannot differ."""
    seed = spec.workload.seed
    reference_name, reference_config = reference
    forward, backward = list(range(BATCHES)), list(reversed(range(BATCHES)))
    planned = (
        ("reference", reference_name, reference_config, forward, seed),
        ("noise", reference_name, reference_config, backward, seed + 1),
        ("candidate", spec.backend, spec, forward, seed),  # last: leaves the device as the run set it
    )
    from suite.numerics import training  # torch: imported here, never while a run is planned

    runs = {}
    for role, name, run_config, order, noise_seed in planned[:1] if alone else planned:
        backend = make(name, run_config)
        runs[role] = training.run(backend, workload, steps, batches, order, noise_seed, seed)
    return runs


def _judged_alone(reference: dict) -> tuple[str, list[str]]:
    """The reference's own configuration: it fails only where its own loss is not finite (the recipe
    diverges in fp32 itself); otherwise it passes, and says why there was nothing to compare."""
    finite = reference["losses"].isfinite().all(dim=1)
    if not bool(finite.all()):
        return "fail", [f"the reference's loss is not finite from step {int((~finite).nonzero()[0]) + 1}"]
    return "pass", [
        "the candidate is the reference's own configuration, equal to it by construction: nothing compared; "
        "its loss was finite at every step"
    ]


def _judged(runs: dict, rows: list[dict], workload, batch_size: int) -> tuple[str, list[str]]:
    """The verdict and its reasons: fail on a deviation past its tolerance, a loss not finite, or a loss
    that did not fall where both fp32 runs' fell clearly; inconclusive where fp32's own noise leaves the
    check unable to judge."""
    reasons = [
        updates.reason(row)
        if row["name"].startswith(updates.PREFIX)
        else f"{row['name']} deviates {row['deviation']:.3g} from the reference (tolerance {row['tolerance']:.3g})"
        for row in rows
        if not row["deviation"] <= row["tolerance"]
    ]
    for role in ("reference", "candidate"):
        finite = runs[role]["losses"].isfinite().all(dim=1)
        if not bool(finite.all()):
            reasons.append(f"the {role}'s loss is not finite from step {int((~finite).nonzero()[0]) + 1}")
    unsure = []
    if workload.loss_must_fall:
        fell, unclear = _loss_falls(runs)
        if not fell["candidate"] and fell["reference"]:
            if unclear:
                unsure.append(unclear)  # fp32 itself does not say the loss must fall: not a fail
            else:
                reasons.append("the candidate's loss did not fall where both fp32 runs' fell clearly")
    if reasons:
        return "fail", reasons
    # A layer group that never moved deviates by exactly 1 in drift: where fp32's own noise gives a drift a
    # tolerance of 1 or more, a pass would not rule that out, and the check says it cannot judge.
    blind = [row for row in rows if row["name"].startswith("drift") and row["tolerance"] >= 1]
    if blind:
        unsure.insert(
            0,
            f"two fp32 runs disagree by {blind[0]['noise']:.0%} on how far {blind[0]['name'][6:]} moved: at "
            f"batch {batch_size} the check cannot tell a layer group that never trains (a larger "
            f"--batch-size, up to {workload.numerics_batch}, calms fp32)",
        )
    return ("inconclusive", unsure) if unsure else ("pass", [])
