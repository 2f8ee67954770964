"""Step by step: was each step's update the size fp32 gives it?

The whole-run quantities (a loss over the last pass, ‖w_T − w_0‖, the RMS gradient) dilute one bad step
among the rest: on a real network one update that vanished (a loss scale that zeroed it, an optimizer step
that never ran) or exploded moves them by less than two fp32 trainings disagree. So each run also keeps,
per step t and layer group, the size of that step's update, u_t = ‖w_t − w_(t−1)‖, and the check compares
the candidate's with the reference's at the same step, on a log scale so that a vanished update and an
exploded one are equally far from 1:

    deviation_t = |ln(u_t(candidate) ÷ u_t(reference))|      (a vanished update: inf)
    noise_t     = |ln(u_t(noise run) ÷ u_t(reference))|      (the other fp32 training, same step)

The noise of a layer group is the root mean square of noise_t over the steps: the spread of the log ratio
of two equally right fp32 trainings, estimated from every step rather than from one number (each step is
a sample of how far two fp32 updates differ; docs/numerics.md). A row's deviation is its worst step's.
"""

from __future__ import annotations

import math

PREFIX = "update "


def log_ratio(value: float, reference: float) -> float:
    """|ln(value ÷ reference)|: 0 where both are 0, inf where only one is or either is not finite."""
    if not (abs(value) < math.inf and abs(reference) < math.inf):
        return math.inf
    if value == 0 or reference == 0:
        return 0.0 if value == reference else math.inf
    return abs(math.log(abs(value) / abs(reference)))


def rows(runs: dict, skipped: list[int]) -> list[dict]:
    """One row per layer group: `update model.conv` with the three runs' per-step sizes, its deviation (the
    worst step's), that step (from 1), and its noise. SKIPPED: the steps (from 1) whose update the
    candidate's GradScaler skipped by design (inf or NaN in fp16 gradients); they are not compared, and the
    record names them."""
    found = []
    for group, reference in runs["reference"]["updates"].items():
        candidate = runs["candidate"]["updates"].get(group, [math.nan] * len(reference))
        noise = runs["noise"]["updates"].get(group, [math.nan] * len(reference))
        steps = [t for t in range(len(reference)) if t + 1 not in skipped]
        deviations = [log_ratio(candidate[t], reference[t]) for t in steps]
        noises = [log_ratio(noise[t], reference[t]) for t in steps]
        worst = max(range(len(steps)), key=lambda i: deviations[i]) if steps else None
        found.append(
            {
                "name": PREFIX + group,
                "values": {"reference": reference, "noise": noise, "candidate": candidate},
                "deviation": deviations[worst] if steps else 0.0,
                "step": steps[worst] + 1 if steps else None,
                "noise": math.sqrt(sum(n * n for n in noises) / len(noises)) if steps else 0.0,
            }
        )
    return found


def reason(row: dict) -> str:
    """`update model.conv vanished at step 3 (0 × the reference's; within e^±0.31 passes)`."""
    step = row["step"]
    candidate = row["values"]["candidate"][step - 1]
    reference = row["values"]["reference"][step - 1]
    band = f"tolerance: within e^±{row['tolerance']:.3g} of the reference's"
    if candidate == 0 and reference != 0:
        return f"{row['name']} vanished at step {step} (0 × the reference's; {band})"
    if not (abs(candidate) < math.inf and abs(reference) < math.inf) or reference == 0:
        return f"{row['name']} at step {step} is {candidate:.3g} where the reference's is {reference:.3g} ({band})"
    return f"{row['name']} at step {step} is {candidate / reference:.3g} × the reference's ({band})"
