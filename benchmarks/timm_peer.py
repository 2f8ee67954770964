"""A peer measurement: timm's `benchmark.py --bench train` method, reproduced for one model.

Source: huggingface/pytorch-image-models, file benchmark.py, commit 066e490605ba1d3666861096163246c885603469
(BenchmarkRunner, TrainBenchmarkRunner.run without --detail, resolve_precision, cuda_timestamp). What that
method does, and this script does the same:

- `torch.backends.cudnn.benchmark = True`; the model from `timm.create_model(name, num_classes=None,
  in_chans=3, global_pool=None, drop_rate=0.0, drop_path_rate=None, drop_block_rate=None)` (argparse's
  defaults, passed through), moved to the device in the precision's model dtype, put in train mode;
- `nn.CrossEntropyLoss()` and `timm.optim.create_optimizer_v2(model, opt="sgd", lr=1e-4)` (timm's "sgd" is
  SGD with Nesterov momentum 0.9, no weight decay);
- one input `torch.randn((batch,) + input_size)` made once on the device in the data dtype; each step draws
  new targets on the device (`torch.empty(...).random_(num_classes)`);
- a step: `zero_grad()`, then under autocast the forward, the loss and `.backward()`, then
  `optimizer.step()`; timm's amp is fp16 autocast WITHOUT a GradScaler; its `bfloat16` is the whole model and
  input cast to bf16 (not autocast); `float32` is plain fp32;
- 10 warm-up steps, then 40 timed steps; each step is timed from a clock read without a sync to one after
  `torch.cuda.synchronize()`; the figure is samples_per_sec = images ÷ (clock after the last step − clock
  before the first), not a median of windows.

One deliberate difference, named here and in the output: timm's script resolves the input size with
`use_test_size=not --use-train-size`, which for resnet50 (pretrained tag a1_in1k) is 288 px, not the 224 px
the suite trains at. This script takes --img-size (default 224, as timm's own `--img-size 224` would) so the
peer trains the same image size as the suite; pass --img-size 288 for timm's default.

    python benchmarks/timm_peer.py --device cuda --precision amp --json peer.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import suppress

import torch
from torch import nn

SOURCE = "huggingface/pytorch-image-models benchmark.py @ 066e490605ba1d3666861096163246c885603469"
PRECISIONS = ("amp", "float16", "bfloat16", "float32")


def resolve_precision(precision: str) -> tuple[bool, torch.dtype, torch.dtype]:
    """(use fp16 autocast, model dtype, data dtype), as timm's resolve_precision."""
    use_amp, model_dtype, data_dtype = False, torch.float32, torch.float32
    if precision == "amp":
        use_amp = True
    elif precision == "float16":
        model_dtype = data_dtype = torch.float16
    elif precision == "bfloat16":
        model_dtype = data_dtype = torch.bfloat16
    return use_amp, model_dtype, data_dtype


def run(
    model_name, device, precision, batch_size, img_size, warm_iter=10, bench_iter=40, num_classes=None
) -> dict:
    import timm
    from timm.data import resolve_data_config
    from timm.optim import create_optimizer_v2

    torch.backends.cudnn.benchmark = True
    use_amp, model_dtype, data_dtype = resolve_precision(precision)
    autocast = (lambda: torch.autocast(device, dtype=torch.float16)) if use_amp else suppress
    model = timm.create_model(
        model_name,
        num_classes=num_classes,
        in_chans=3,
        global_pool=None,
        drop_rate=0.0,
        drop_path_rate=None,
        drop_block_rate=None,
    )
    model.to(device=device, dtype=model_dtype)
    model.train()
    input_size = resolve_data_config({"img_size": img_size}, model=model, use_test_size=True)["input_size"]
    loss_fn = nn.CrossEntropyLoss().to(device)
    optimizer = create_optimizer_v2(model, opt="sgd", lr=1e-4)
    example = torch.randn((batch_size,) + tuple(input_size), device=device, dtype=data_dtype)

    def clock(sync=False):
        if sync and device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter()

    def step() -> float:
        optimizer.zero_grad()
        start = clock()
        with autocast():
            output = model(example)
            if isinstance(output, tuple):
                output = output[0]
            target = torch.empty((output.shape[0],), device=device, dtype=torch.long).random_(
                model.num_classes
            )
            loss_fn(output, target).backward()
        optimizer.step()
        return clock(True) - start

    for _ in range(warm_iter):
        step()
    run_start = clock()
    total_step = 0.0
    for _ in range(bench_iter):
        total_step += step()
    elapsed = clock() - run_start
    return {
        "kind": "timm_benchmark_train",
        "source": SOURCE,
        "model": model_name,
        "device": device,
        "precision": precision,
        "batch_size": batch_size,
        "img_size": int(input_size[-1]),
        "warm_iter": warm_iter,
        "bench_iter": bench_iter,
        "samples_per_sec": batch_size * bench_iter / elapsed,
        "step_time_ms": 1000 * total_step / bench_iter,
        "timm": timm.__version__,
        "torch": torch.__version__,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument(
        "--device", choices=("cpu", "cuda"), default="cuda" if torch.cuda.is_available() else "cpu"
    )
    parser.add_argument("--precision", choices=PRECISIONS, default="amp")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--img-size", type=int, default=224)
    parser.add_argument("--num-warm-iter", type=int, default=10)
    parser.add_argument("--num-bench-iter", type=int, default=40)
    parser.add_argument("--num-classes", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    if args.device == "cpu" and args.precision in ("amp", "float16"):
        parser.error(f"--precision {args.precision} is fp16 on the GPU; on the cpu use float32 or bfloat16")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is visible")
    if args.threads:
        torch.set_num_threads(args.threads)
    result = run(
        args.model,
        args.device,
        args.precision,
        args.batch_size,
        args.img_size,
        args.num_warm_iter,
        args.num_bench_iter,
        args.num_classes,
    )
    print(
        f"timm benchmark.py train method: {args.model} on {args.device}, {args.precision}, batch "
        f"{args.batch_size}, {result['img_size']} px: {result['samples_per_sec']:.2f} samples/s "
        f"({result['step_time_ms']:.1f} ms/step; {SOURCE})"
    )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
