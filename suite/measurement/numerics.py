"""Numerics parity: does the asked precision train the same model as fp32?

After the timed windows (so no throughput figure changes), the first N training steps are run again from
the same initial weights on the same reused batch, with the same noise, three times (weights, batch and
noise are drawn on the host from the seed and copied, so every device trains on the same numbers):

    reference   fp32, TF32 off, on this backend (or on --reference-backend, e.g. the CPU)
    noise       the reference again, from weights and batch rounded to the asked precision's format
                (bf16, fp16): how far a perturbation of that size alone carries the trajectory; on a
                device with non-deterministic kernels it also carries their run-to-run noise
    candidate   the asked precision on this backend

    deviation  = per loss, max over steps of |candidate − reference| ÷ |reference's first loss|
    tolerance  = K × noise floor + ε       (measured, not fixed; ε covers a noise floor of zero)

The idea is PyTorch's accuracy check for compiled models (torch/_dynamo/utils.py, `same(ref, res,
fp64_ref, ..., multiplier)`): a result passes when its error is within a multiplier of the error a trusted
lower precision makes anyway. A GAN's losses are chaotic (D and G chase each other): it runs fewer steps,
with a band per loss, and is not asked to overfit; a classifier must also overfit the reused batch (its
loss falls) in the reference and the candidate.

Losses stay on the device as tensors and are read once, after the last step of each run; for fp16 AMP the
GradScaler's scale after each step is kept the same way, giving the final scale and the skipped steps.
"""

from __future__ import annotations

import time

import torch

from suite.errors import UserError

K = 10.0  # multiples of the measured noise floor a candidate may drift
EPSILON = 1e-3  # where the noise floor is zero (a deterministic backend repeats fp32 exactly)
REFERENCE = "fp32"


def check_options(config, workload) -> None:
    """Refuse what the check cannot do, while the run is planned (exit 2, nothing built)."""
    if config.reference_backend is not None and not config.check_numerics:
        raise UserError("--reference-backend needs --check-numerics (it names what the check compares with)")
    if not config.check_numerics:
        return
    if (config.nproc or 1) > 1 or (config.world_size or 1) > 1:
        raise UserError("--check-numerics runs in one process: drop --nproc (check one device, then scale)")
    if config.reference_backend is not None:
        from suite.backends import backend_class, backend_names
        from suite.errors import one_of

        if config.reference_backend not in backend_names():
            raise one_of("--reference-backend", config.reference_backend, backend_names())
        available, why = backend_class(config.reference_backend).is_available()
        if not available:
            raise UserError(f"--reference-backend {config.reference_backend} is not available here: {why}")
        if REFERENCE not in backend_class(config.reference_backend).precisions:
            raise UserError(f"--reference-backend {config.reference_backend} cannot run {REFERENCE}")


def _reference_config(config):
    """fp32 with TF32 off, on the reference backend (the same one unless --reference-backend)."""
    if config.reference_backend in (None, config.backend):
        return config.backend, config.resolved(precision=REFERENCE, tf32=False, compile=False)
    from suite.config import RunConfig

    # Only what every backend honours: device-specific options belong to the backend under test.
    return config.reference_backend, RunConfig(
        backend=config.reference_backend,
        workload=config.workload,
        batch_size=config.batch_size,
        precision=REFERENCE,
        threads=config.threads,
        seed=config.seed,
        model_overrides=config.model_overrides,
    )


# The rounding each precision applies to what it computes on: the noise run starts from weights and a batch
# rounded so, then trains in fp32, to measure how far such a perturbation alone carries the trajectory.
ROUNDING = {"bf16": torch.bfloat16, "hmp": torch.bfloat16, "amp": torch.float16, "fp16": torch.float16}


def _round(tensor: torch.Tensor, dtype) -> None:
    with torch.no_grad():
        tensor.copy_(tensor.to(dtype).to(tensor.dtype))


def trajectory(backend, workload, steps: int, batch_size: int, seed: int, round_to=None) -> dict:
    """The first `steps` steps from the seed's initial weights on one reused batch; losses read once."""
    backend.setup()
    torch.manual_seed(seed)  # the same initial weights: every workload draws them on the host
    training = workload.build(backend)
    for optimizer in training.optimizers.values():
        for group in optimizer.param_groups:
            group["lr"] *= workload.numerics_lr_scale
    batch = workload.synthetic_batch(batch_size, backend.device, seed=seed)
    if round_to is not None:
        for module in training.modules.values():
            for parameter in module.parameters():
                _round(parameter, round_to)
        _round(batch[0], round_to)
    # The same noise (a GAN's z) in every run, on any device: drawn from one seeded host generator and
    # copied, so a CPU reference and a GPU candidate differ by arithmetic only, not by their generators
    # (CUDA's Philox and the CPU's Mersenne Twister give different numbers for one seed).
    training.host_generator = torch.Generator().manual_seed(seed)
    scaler = getattr(backend, "scaler", None)  # fp16 AMP's GradScaler, where the backend keeps one
    losses, scales = [], []
    for _ in range(steps):
        losses.append(training.train_step(batch))
        if scaler is not None:
            # GradScaler keeps its scale as a device tensor (`_scale`); get_scale() would read it (a
            # sync). A clone per step, read once below: a halved scale is a skipped step.
            scales.append(scaler._scale.detach().clone())
    backend.synchronize()
    # The one read of this run: every loss (and scale) to the host together.
    result = {"losses": torch.stack([loss.reshape(-1) for loss in losses]).float().cpu()}
    if scales:
        read = torch.stack([s.reshape(-1)[0] for s in scales]).float().cpu().tolist()
        result["grad_scaler"] = {"final_scale": read[-1], "skipped_steps": _skipped(read, scaler)}
    return result


def _skipped(scales: list[float], scaler) -> int:
    """Steps whose update the scaler skipped: each one lowers the scale (backoff) at its update."""
    previous, skipped = float(getattr(scaler, "_init_scale", scales[0])), 0
    for scale in scales:
        if scale < previous:
            skipped += 1
        previous = scale
    return skipped


def deviation(candidate: torch.Tensor, reference: torch.Tensor) -> list[float]:
    """Per loss: the largest |c − r| over the steps, relative to the reference's first loss (a loss that
    falls towards 0 would make a step-by-step ratio meaningless). NaN or inf anywhere: inf."""
    scale = reference[0].abs().clamp_min(1e-6)
    gap = ((candidate - reference).abs() / scale).amax(dim=0)
    finite = torch.isfinite(candidate).all(dim=0) & torch.isfinite(reference).all(dim=0)
    return [float(g) if ok else float("inf") for g, ok in zip(gap, finite)]


def check(plan, backend_factory=None) -> dict:
    """Run the check for a planned run; the result goes in the record as `numerics`. A failure of the
    check itself is recorded as verdict `error`, never losing the throughput already measured."""
    from suite.backends import backend_class

    config, workload = plan.config, plan.workload
    make = backend_factory or (lambda name, cfg: backend_class(name)(cfg))
    steps = workload.numerics_steps
    started = time.perf_counter()
    reference_name, reference_config = _reference_config(config)
    rounding = ROUNDING.get(config.precision)
    result = {
        "reference": f"{reference_name} {REFERENCE} (TF32 off)",
        "candidate": f"{config.backend} {config.precision}",
        "noise": f"{reference_name} {REFERENCE} again"
        + (f", from weights and batch rounded to {str(rounding).replace('torch.', '')}" if rounding else ""),
        "steps": steps,
        "batch": f"synthetic, {config.batch_size} images, reused every step",
        "lr_scale": workload.numerics_lr_scale,
        "k": K,
        "epsilon": EPSILON,
    }
    try:
        runs = {}
        for role, name, run_config, round_to in (
            ("reference", reference_name, reference_config, None),
            ("noise", reference_name, reference_config, rounding),
            ("candidate", config.backend, config, None),  # last: leaves the device as the run set it
        ):
            backend = make(name, run_config)
            runs[role] = trajectory(backend, workload, steps, config.batch_size, config.seed, round_to)
    except Exception as error:  # noqa: BLE001 - the check failing must not lose the measurement
        text = str(error).strip()
        result.update(
            verdict="error", reason=f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"
        )
        result["time_s"] = time.perf_counter() - started
        return result

    reference, candidate = runs["reference"]["losses"], runs["candidate"]["losses"]
    noise_floor = deviation(runs["noise"]["losses"], reference)
    max_rel_dev = deviation(candidate, reference)
    # One band per loss (a GAN's D and G each against its own noise floor).
    tolerance = [K * noise + EPSILON for noise in noise_floor]
    reasons = [
        f"loss {i} deviates {dev:.3g} from the reference (tolerance {tol:.3g})"
        for i, (dev, tol) in enumerate(zip(max_rel_dev, tolerance))
        if not dev <= tol
    ]
    if workload.loss_must_fall:
        for role in ("reference", "candidate"):
            losses = runs[role]["losses"][:, 0]
            if not bool(losses[-1] < losses[0]):
                reasons.append(f"the {role}'s loss did not fall on the reused batch")
    result.update(
        losses={role: runs[role]["losses"].tolist() for role in ("reference", "noise", "candidate")},
        noise_floor=noise_floor,
        max_rel_dev=max_rel_dev,
        tolerance=tolerance,
        verdict="fail" if reasons else "pass",
        reason="; ".join(reasons) if reasons else None,
        time_s=time.perf_counter() - started,
    )
    if "grad_scaler" in runs["candidate"]:
        result["grad_scaler"] = runs["candidate"]["grad_scaler"]
    return result
