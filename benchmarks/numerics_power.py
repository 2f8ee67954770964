"""What can `--check-numerics` tell apart? The check against the real bf16 and a bf16 whose body never trains.

For one workload on the CPU, at each number of steps asked, the check runs once per candidate in this
process: the CPU's real bf16; `frozen`, bf16 autocast whose convolutions' weights are put back after every
optimizer step (as weights too coarse in bf16 to take the update would be): the body never trains, the rest
does; and, with `--candidates`, `lost`: fp32 whose third optimizer step never happens (one update zeroed,
as by a loss scale gone wrong). It prints every quantity the check compares: the reference's value, the run-to-run noise,
the candidate's deviation and the tolerance. The steps a workload's check runs were chosen with it
(docs/numerics.md).

    python benchmarks/numerics_power.py --workload dcgan64 --override ngf=8 --override ndf=8 --batch 2 \\
        --steps 2 4 8
    python benchmarks/numerics_power.py --workload torchvision:resnet18 --image-size 64 --batch 8 \\
        --candidates bf16 lost
"""

from __future__ import annotations

import argparse

import torch
from suite.backends.cpu import CPUBackend

from suite.measurement import runner
from suite.numerics import check as numerics
from suite.spec import RunSpec


class FrozenBody(CPUBackend):
    """bf16 autocast, but no convolution's weights change: each is put back after every optimizer step."""

    precisions = ("fp32", "bf16", "frozen", "lost")
    LOST_STEP = 3  # `lost`: this optimizer step (from 1) never happens

    def autocast(self):
        if self.precision == "frozen":
            return torch.autocast(device_type="cpu", dtype=torch.bfloat16)
        return super().autocast()

    def prepare_model(self, module):
        module = super().prepare_model(module)
        convs = [m.weight for m in module.modules() if isinstance(m, torch.nn.modules.conv._ConvNd)]
        self.convs = getattr(self, "convs", []) + convs
        return module

    def step(self, optimizer):
        self.steps_taken = getattr(self, "steps_taken", 0) + 1
        if self.precision == "lost" and self.steps_taken == self.LOST_STEP:
            return
        kept = [w.detach().clone() for w in self.convs] if self.precision == "frozen" else []
        optimizer.step()
        with torch.no_grad():
            for weight, before in zip(self.convs, kept):
                weight.copy_(before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="dcgan64")
    parser.add_argument("--override", action="append", default=[], help="KEY=VALUE, a model override")
    parser.add_argument("--batch", type=int, default=2, help="the run's batch (the check caps it)")
    parser.add_argument("--steps", type=int, nargs="+", default=[8])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--image-size", type=int, help="a named model's input size (default: its own)")
    parser.add_argument("--candidates", nargs="+", default=["bf16", "frozen"], choices=FrozenBody.precisions)
    args = parser.parse_args()
    overrides = {key: int(value) for key, value in (item.split("=", 1) for item in args.override)}
    for steps in args.steps:
        for precision in args.candidates:
            config = RunSpec().replace(
                backend="cpu",
                workload=args.workload,
                batch_size=args.batch,
                precision="fp32",
                threads=args.threads,
                check_numerics=True,
                model_overrides=overrides,
                image_size=args.image_size,
            )
            plan = runner.plan_run(config)
            plan.spec = plan.spec.replace(precision=precision)
            type(plan.workload).numerics_steps = steps
            result = numerics.check(plan, backend_factory=lambda name, cfg: FrozenBody(cfg))
            print(
                f"{args.workload}{''.join(f' {k}={v}' for k, v in overrides.items())}, batch {args.batch}, "
                f"{steps} steps, {precision}: "
                f"{result['verdict']} ({result['batch']}; {result['time_s']:.1f} s)"
            )
            for row in result["compared"]:
                reference = row["values"]["reference"]
                shown = f"{max(reference):<10.4g}" if isinstance(reference, list) else f"{reference:<10.4g}"
                at = f" (step {row['step']})" if row.get("step") else ""
                print(
                    f"    {row['name']:<28} reference {shown} noise {row['noise']:<7.3f} "
                    f"deviation {row['deviation']:<7.3f} tolerance {row['tolerance']:.3f}{at}"
                )
            if result["reason"]:
                print(f"    reason: {result['reason']}")


if __name__ == "__main__":
    main()
