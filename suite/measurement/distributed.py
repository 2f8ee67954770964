"""torch.distributed for one rank of a run: process group, DDP, aligned windows, failure reports.

A distributed run is started by torch's launcher (`torchrun`, or `suite run --nproc N`, which calls it),
which sets RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT for each process. With a world
size of 1 nothing here is used: the single-process path has no distributed overhead at all.

The collective library is the backend's (`Backend.dist_backend`: gloo, nccl, hccl); the backend may
import its bindings first (`Backend.init_distributed`, hccl) and decides how DDP wraps a module
(`Backend.wrap_ddp`). Every wait on another rank is bounded by the process group's timeout.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from datetime import timedelta

from suite import limits
from suite.inputs.errors import UserError
from suite.inputs.numbers import non_negative_int, positive_int

# Long enough for a slow rank's graph compilation (first steps on Gaudi / torch.compile), short
# enough that a hung peer ends the run in minutes rather than torch's default of 30 minutes.
DEFAULT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class RankInfo:
    """Where this process sits in the run. A data path shards on `rank` / `world_size`."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1
    node_rank: int = 0
    nnodes: int = 1

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1


# Open MPI's names for what torchrun calls RANK / WORLD_SIZE / LOCAL_RANK (`mpirun -np 8 suite run ...`).
MPI_TO_TORCHRUN = {
    "OMPI_COMM_WORLD_RANK": "RANK",
    "OMPI_COMM_WORLD_SIZE": "WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK": "LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE": "LOCAL_WORLD_SIZE",
}


def adopt_mpi_environment(env=None) -> None:
    """Under mpirun, set torchrun's variables from Open MPI's before anything reads RANK. Habana's hccl does
    the same at its import (all three of rank, size and local rank, or none; never over a complete set:
    habana_frameworks/torch/distributed/hccl/__init__.py, bridge v1.19.0), but that import comes after the
    run is planned, so without this every mpirun rank would plan a world of one."""
    env = os.environ if env is None else env
    required = list(MPI_TO_TORCHRUN)[:3]
    if all(MPI_TO_TORCHRUN[name] in env for name in required) or not all(name in env for name in required):
        return
    for mpi_name, name in MPI_TO_TORCHRUN.items():
        if mpi_name in env:
            env[name] = env[mpi_name]


# What torch's launcher sets for each rank (torch/distributed/elastic/agent/server/local_elastic_agent.py):
# read by the suite, by cuda's device choice (LOCAL_RANK) and by torch's env:// rendezvous (MASTER_*).
RANK_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE")


def check_launcher_environment(env=None) -> str | None:
    """At start-up: a launcher's variables are taken as a set, or not at all. RANK and WORLD_SIZE with the
    rendezvous address (MASTER_ADDR, MASTER_PORT; or Open MPI's own ranks, as mpirun sets them) are a
    launcher's: every value is checked (a UserError names the variable, its value and what is accepted).
    Rank variables without them are what an old job left in a shell (no launcher starts a rank it cannot
    rendezvous): removed from ENV; returns the line that says so. Returns None when nothing was removed."""
    env = os.environ if env is None else env
    adopt_mpi_environment(env)
    present = [name for name in RANK_VARIABLES if name in env]
    if not present:
        return None
    by_mpi = all(name in env for name in list(MPI_TO_TORCHRUN)[:3])
    if "RANK" in env and "WORLD_SIZE" in env and (by_mpi or ("MASTER_ADDR" in env and "MASTER_PORT" in env)):
        _check_rank_values(env)
        return None
    for name in present:
        del env[name]
    return (
        f"{', '.join(present)} in the environment ignored: no launcher set them (torchrun sets RANK, WORLD_SIZE, "
        "MASTER_ADDR and MASTER_PORT together); this runs as one process"
    )


def _check_rank_values(env) -> None:
    def number(name: str, least: int, most: int, default: int | None = None) -> int | None:
        if name not in env:
            return default
        value = env[name]
        text = str(value).strip()
        if not (text.isascii() and text.isdigit()) or not least <= int(text) <= most:
            raise UserError(
                f"environment variable {name}={value!r} must be a whole number from {least} to {most:,} "
                "(it is set by torch's launcher, or mpirun)"
            )
        return int(text)

    from suite.inputs.errors import COUNT_CEILING

    world = number("WORLD_SIZE", 1, COUNT_CEILING)
    number("RANK", 0, world - 1)
    local_world = number("LOCAL_WORLD_SIZE", 1, world, default=world)
    number("LOCAL_RANK", 0, local_world - 1)
    nodes = number("GROUP_WORLD_SIZE", 1, world, default=1)
    number("GROUP_RANK", 0, nodes - 1)
    if "MASTER_PORT" in env:
        number("MASTER_PORT", 1, 65535)


def launched(env=None) -> bool:
    """True inside a process started by torch's launcher (it sets RANK and WORLD_SIZE) or by mpirun."""
    env = os.environ if env is None else env
    adopt_mpi_environment(env)
    return "RANK" in env and "WORLD_SIZE" in env


def rank_info(env=None) -> RankInfo:
    """This process's rank and world size, from the launcher's environment (torchrun sets these;
    GROUP_RANK / GROUP_WORLD_SIZE are its node rank and node count). Outside a launcher: rank 0 of 1."""
    env = os.environ if env is None else env
    if not launched(env):
        return RankInfo()

    def number(name, default):
        value = env.get(name, default)
        try:
            return int(value)
        except (TypeError, ValueError):
            raise UserError(
                f"environment variable {name}={value!r} is not a whole number (it is set by torch's launcher)"
            ) from None

    world_size = number("WORLD_SIZE", 1)
    return RankInfo(
        rank=number("RANK", 0),
        world_size=world_size,
        local_rank=number("LOCAL_RANK", 0),
        local_world_size=number("LOCAL_WORLD_SIZE", world_size),
        node_rank=number("GROUP_RANK", 0),
        nnodes=number("GROUP_WORLD_SIZE", 1),
    )


class ProcessGroup:
    """The default process group of one rank, on the backend's collective library."""

    def __init__(self, backend, info: RankInfo, timeout_s: float | None = None, fsdp: bool = False):
        self.backend = backend
        self.info = info
        self.timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s)
        self.fsdp = fsdp  # shard the parameters (suite run --fsdp) rather than replicate them (DDP)

    def start(self) -> None:
        import torch.distributed as dist

        # hccl must be importable as a torch.distributed backend before init_process_group.
        self.backend.init_distributed()
        # env:// rendezvous: MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE from the launcher.
        # The timeout bounds every collective: a rank that hangs ends the others' wait.
        dist.init_process_group(
            backend=self.backend.dist_backend,
            rank=self.info.rank,
            world_size=self.info.world_size,
            timeout=timedelta(seconds=self.timeout_s),
        )

    def wrap(self, training) -> None:
        """Wrap each module of a built workload in DDP. Optimizers keep working: DDP shares the
        module's parameters. Workloads look their modules up in `training.modules` every step. Under
        --fsdp the modules are sharded instead, and the optimizer rebuilt (suite.measurement.sharding)."""
        if self.fsdp:
            from suite.measurement import sharding

            sharding.shard(training)
            return
        training.modules = {name: self.backend.wrap_ddp(module) for name, module in training.modules.items()}

    def barrier(self) -> None:
        import torch.distributed as dist

        dist.barrier()

    def slowest(self, elapsed_s: float) -> float:
        """The largest of every rank's `elapsed_s`. A collective: call it outside timed windows."""
        import torch
        import torch.distributed as dist

        # On the backend's device: nccl and hccl reduce device tensors only. float32 holds seconds to
        # about a microsecond per second, far below a window's length.
        value = torch.tensor([elapsed_s], dtype=torch.float32, device=self.backend.device)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return float(value.cpu()[0])

    def gather(self, obj) -> list:
        """Every rank's `obj` (picklable), in rank order, on every rank."""
        import torch.distributed as dist

        gathered = [None] * self.info.world_size
        dist.all_gather_object(gathered, obj)
        return gathered

    def close(self) -> None:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()

    def finish(self, record: dict) -> None:
        finish(self, record)

    def report_failure(self, error: dict, status: str = "error") -> None:
        report_failure(self.info, error, status)  # for the launcher's summary


class SingleProcess:
    """The process group of a run of one process: every collective is this process's own answer,
    so the runner has one path and a single process pays nothing for it."""

    info = RankInfo()

    def start(self) -> None:
        pass

    def wrap(self, training) -> None:
        pass

    def barrier(self) -> None:
        pass

    def slowest(self, elapsed_s: float) -> float:
        return elapsed_s

    def gather(self, obj) -> list:
        return [obj]

    def finish(self, record: dict) -> None:
        pass

    def report_failure(self, error: dict, status: str = "error") -> None:
        pass


def process_group(backend, spec) -> ProcessGroup | SingleProcess:
    """The process group for this run; for a single process (world size 1), one that does nothing."""
    info = rank_info()
    if not info.is_distributed:
        return SingleProcess()
    return ProcessGroup(backend, info, spec.launch.dist_timeout_s, spec.launch.fsdp)


def resolved_fields(spec, batch_size: int) -> dict:
    """The launch fields as they will run (flat names), with the world size and global batch (the
    record's, not the spec's: suite.spec.RECORD_ONLY); under a launcher, what it started."""
    fields = {}
    if spec.launch.dist_timeout_s is not None:
        try:
            fields["dist_timeout_s"] = float(spec.launch.dist_timeout_s)
        except (TypeError, ValueError):
            fields["dist_timeout_s"] = 0.0
        if not fields["dist_timeout_s"] > 0:
            raise UserError(
                f"--dist-timeout must be a positive number of seconds, got {spec.launch.dist_timeout_s!r}"
            )
    if launched():
        info = rank_info()
        return {
            **fields,
            "world_size": info.world_size,
            "global_batch_size": batch_size * info.world_size,
            "nproc": info.local_world_size,
            "nnodes": info.nnodes,
            "node_rank": info.node_rank,
        }
    if spec.launch.nproc is None:
        given = [
            option
            for option, value in (
                ("--nnodes", spec.launch.nnodes),
                ("--node-rank", spec.launch.node_rank),
                ("--rdzv-endpoint", spec.launch.rdzv_endpoint),
            )
            if value is not None
        ]
        if given:
            raise UserError(f"{', '.join(given)} needs --nproc N (processes on this node)")
        return {**fields, "world_size": 1, "global_batch_size": batch_size}
    # Before launching (`suite run --nproc`): the world the launcher is about to start.
    launch = check_launch_options(spec)
    world_size = launch["nproc"] * launch["nnodes"]
    return {**fields, **launch, "world_size": world_size, "global_batch_size": batch_size * world_size}


def launcher_run_id(env=None) -> str | None:
    """The run id chosen by a `suite run --nproc` parent (or `suite scale`), so that it can find the
    record. Only for that parent's own descendants: SUITE_RUN_ID_OWNER must name an ancestor (a run
    id left in a shell or inherited by anything else is ignored), and the id must be a plain file name."""
    from suite import context, run_record

    env = os.environ if env is None else env
    run_id = env.get("SUITE_RUN_ID")
    if not run_id or not context.handed_by_an_ancestor(env):
        return None
    return run_record.check_run_id(run_id, "SUITE_RUN_ID")


def rank_figures(info: RankInfo, record: dict) -> dict:
    """What one rank tells rank 0 about itself, for the record's `ranks` list."""
    import socket
    import statistics

    from suite.run_record.parts import Rank
    from suite.run_record.record import RunRecord

    typed = RunRecord.of(record)
    metrics = typed.metrics
    times = metrics.get("rank_window_time_s") or []  # this rank's own times: the record keeps the slowest's
    images = (metrics.images_per_window or 0) / info.world_size
    figures = Rank.with_every_field(
        rank=info.rank,
        local_rank=info.local_rank,
        node_rank=info.node_rank,
        host=socket.gethostname(),
        pid=os.getpid(),
        status=typed.status,
        error=None if typed.error is None else typed.error.to_json(),
        window_time_s=times,
        images_per_second=images / statistics.median(times) if times else None,
        final_loss=metrics.final_loss,
        peak_memory_bytes=typed.memory.peak_memory_bytes,
        device=typed.device.name,
    ).to_json()
    sharding = record.get("sharding")
    if sharding:  # --fsdp: the parameter elements this rank holds, its shard of the model
        figures["parameter_elements_held"] = sharding.get("parameter_elements_held")
    return figures


def _fail_as_first_bad_rank(record: dict) -> None:
    """A run whose own rank succeeded fails as the first rank that did not, naming it."""
    from suite.run_record.record import RunRecord

    bad = [rank for rank in RunRecord.of(record).ranks if rank.status != "ok"]
    if bad and record["status"] == "ok":
        first = bad[0]
        error = first.error or {}
        record["status"] = first.status
        record["error"] = {
            **error,
            "rank": first.rank,
            "message": f"rank {first.rank}: {error.get('message', '')}",
        }


def finish(group: ProcessGroup, record: dict) -> None:
    """Rank 0 gathers every rank's figures into its record, then the group is closed.

    Only a rank that finished its windows enters the gather: a rank that failed leaves at once, its
    peers' pending collectives fail (or time out), and the launcher ends the run."""
    try:
        if record["status"] in ("ok", "diverged"):
            ranks = group.gather(rank_figures(group.info, record))
            if group.info.rank == 0:
                record["ranks"] = ranks
                _fail_as_first_bad_rank(record)
    except Exception as error:  # noqa: BLE001 - a peer that died during the gather
        record["status"] = "error"
        record["error"] = {
            "type": type(error).__name__,
            "message": f"gathering per-rank figures failed: {error}",
        }
        report_failure(group.info, record["error"])
    finally:
        group.close()


# -- failure reports ------------------------------------------------------------------------------
# torch's launcher gives each worker an error file (TORCHELASTIC_ERROR_FILE); what a worker writes
# there becomes that rank's message in the launcher's failure summary (ChildFailedError). Format as
# written by torch.distributed.elastic.multiprocessing.errors.ErrorHandler.record_exception.


def report_failure(info: RankInfo, error: dict, status: str = "error", env=None) -> None:
    """Write this rank's failure (`record["error"]`) to the launcher's error file, if there is one."""
    env = os.environ if env is None else env
    path = env.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        if info.rank != 0:  # no launcher collects it (mpirun, or a launcher's variables set by hand): say it
            print(
                f"suite: error: rank {info.rank} of {info.world_size}: {error.get('type', 'Error')}: "
                f"{(str(error.get('message') or '').splitlines() or [''])[0]} (rank 0 writes the record)",
                file=sys.stderr,
                flush=True,
            )
        return
    data = {
        "message": {
            "message": f"rank {info.rank}: {error.get('type', 'Error')}: {error.get('message', '')}",
            "extraInfo": {
                "py_callstack": error.get("traceback") or traceback.format_exc(),
                "timestamp": str(int(time.time())),
                # torch's timestamp is whole seconds; ours orders failures within one second.
                "suite_time": time.time(),
                "suite_rank": info.rank,
                "suite_status": status,
            },
        }
    }
    from suite import atomic

    atomic.write_atomic(path, json.dumps(data))


def check_launch_options(spec) -> dict:
    """The launch options, checked and as numbers: nproc, nnodes, node_rank, rdzv_endpoint."""
    nproc = positive_int("--nproc", spec.launch.nproc)
    # Each of them a training process on this machine, at once: held to what it can run and hold.
    limits.check_processes(f"--nproc {nproc}", nproc, limits.TRAINING_PROCESS_BYTES, "training process")
    nnodes = positive_int("--nnodes", spec.launch.nnodes) if spec.launch.nnodes is not None else 1
    if nnodes > 1 and (spec.launch.node_rank is None or not spec.launch.rdzv_endpoint):
        raise UserError(
            f"--nnodes {nnodes} needs --node-rank (0 … {nnodes - 1}) and --rdzv-endpoint "
            "HOST:PORT (the address of node 0, reachable from every node)"
        )
    rank = None
    if spec.launch.node_rank is not None:
        rank = non_negative_int("--node-rank", spec.launch.node_rank)
        if rank >= nnodes:
            raise UserError(
                f"--node-rank {rank} is out of range for --nnodes {nnodes} (accepted: 0 … {nnodes - 1})"
            )
    if spec.launch.rdzv_endpoint:
        host, _, port = str(spec.launch.rdzv_endpoint).rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UserError(
                f"--rdzv-endpoint {spec.launch.rdzv_endpoint!r} is not HOST:PORT (for example 10.0.0.1:29500)"
            )
    return {"nproc": nproc, "nnodes": nnodes, "node_rank": rank, "rdzv_endpoint": spec.launch.rdzv_endpoint}
