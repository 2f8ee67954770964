"""Fully sharded data parallelism (`suite run --nproc N --fsdp`): torch's FSDP2 `fully_shard`.

Each rank keeps 1/N of every parameter (a DTensor sharded on its first dimension), so its gradients and its
AdamW state are 1/N too; a block's parameters are all-gathered for its forward and again for its backward,
and its gradients reduce-scattered. `fully_shard` is applied to each decoder block, then to the root, as
torch's docstring says ("fully_shard should be called bottom-up"; torch 2.14,
torch/distributed/fsdp/_fully_shard/_fully_shard.py). Where it lives depends on the release:
`torch.distributed.fsdp.fully_shard` from torch 2.6, `torch.distributed._composable.fsdp.fully_shard` in
2.4 and 2.5 (pytorch/pytorch torch/distributed/_composable/fsdp/fully_shard.py, commit 012c62d62004:
`fully_shard(module, *, mesh, reshard_after_forward, mp_policy, offload_policy)`, the same call). Older
torch has only FSDP1's wrapper class, which this does not use.

Precision stays the backend's autocast, not FSDP's MixedPrecisionPolicy: the same ops run in the same
precision as in a DDP or single-device run of the same options (so their rates compare), the backend's
own autocast and op lists (Gaudi's) still apply, and no device-specific choice is made outside backends/.
The cost is that the all-gathers carry fp32 parameters, twice the bytes of bf16 ones.
"""

from __future__ import annotations

from suite.inputs.errors import UserError

FIRST_RELEASE = "2.4"


def fully_shard_function():
    """torch's `fully_shard`, from where this torch keeps it; a UserError naming the version needed."""
    try:
        from torch.distributed.fsdp import fully_shard  # torch 2.6 and newer

        return fully_shard
    except ImportError:
        pass
    try:
        from torch.distributed._composable.fsdp import fully_shard  # torch 2.4 and 2.5

        return fully_shard
    except ImportError:
        import torch

        raise UserError(
            f"--fsdp needs torch {FIRST_RELEASE} or newer (FSDP2's fully_shard); this is torch {torch.__version__}"
        ) from None


def check_options(spec, workload, world_size: int) -> None:
    """Refuse --fsdp where it cannot run, while the run is planned (exit 2, nothing built)."""
    if not spec.launch.fsdp:
        return
    if not workload.shards_parameters:
        raise UserError(
            f"--fsdp does not apply to {workload.name}: only the language models (gpt2-small, llama-1b) "
            "shard their parameters; use --nproc alone (DDP)"
        )
    if (world_size or 1) < 2:
        raise UserError("--fsdp shards across processes: it needs --nproc 2 or more")
    fully_shard_function()


def shard(training) -> None:
    """The workload's modules sharded across the process group (it must be started), its optimizer
    rebuilt on the sharded parameters (Training.shard)."""
    training.shard(fully_shard_function())


def describe(modules) -> dict:
    """The record's `sharding`: how many parameter elements the model has, and how many this rank holds
    (its local shards; rank 0's, and each rank's in its `ranks` entry)."""
    total = held = 0
    for module in modules:
        for parameter in module.parameters():
            total += parameter.numel()
            local = getattr(parameter, "to_local", None)  # a DTensor: this rank's shard
            held += local().numel() if local is not None else parameter.numel()
    return {"method": "fsdp2", "parameter_elements": total, "parameter_elements_held": held}
