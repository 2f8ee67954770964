"""`suite run --nproc N [--nnodes K --node-rank R --rdzv-endpoint HOST:PORT]`: run through torch's launcher.

The command re-executes itself under torch.distributed.run (torchrun) in a subprocess; each worker is
`python -m suite run --spec FILE ...`, FILE holding the run's RunSpec as JSON (removed when the launcher
ends), and sees RANK / WORLD_SIZE / LOCAL_RANK. Rank 0 writes
the record. If a rank fails, torchrun stops the others (it polls its workers every 0.1 s) and this parent
writes the record instead, naming the failed rank and its error from torchrun's failure report.

The subprocess is `python -m suite.launching.launch <torchrun options> -m suite -- run --spec FILE ...`:
torchrun's own `run()`,
with its ChildFailedError (rank -> exit code, error file, message) saved as JSON for this parent.
`torchrun -m suite run ...` works too; then rank 0 writes whatever record it has.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile

from suite.launching import child

INTERRUPTED = 130  # the launcher subprocess's exit status after Ctrl-C


def torchrun_options(spec) -> list[str]:
    launch = spec.launch
    nnodes = int(launch.nnodes or 1)
    options = [
        "--nproc-per-node",
        str(int(launch.nproc)),
        "--nnodes",
        str(nnodes),
        "--max-restarts",
        "0",
        "--monitor-interval",
        "0.1",
    ]
    if launch.rdzv_endpoint:
        # Static rendezvous: node ranks as given, node 0's address as the master (RANK 0's store).
        options += [
            "--rdzv-backend",
            "static",
            "--rdzv-endpoint",
            str(launch.rdzv_endpoint),
            "--node-rank",
            str(int(launch.node_rank or 0)),
        ]
    # One node without an endpoint: torchrun picks a free local port (c10d on localhost:0).
    return options


def worker_argv(args, spec_path: str) -> list[str]:
    """What each rank runs: the RunSpec in SPEC_PATH, with the options of ARGS that are not part of a run
    (--out, --json, --quiet) as typed."""
    return ["run", "--spec", spec_path, *child.other_options(args)]


def launch(args, plan) -> int:
    """Run `plan` under torchrun with `args`; return the exit status (0: every rank finished)."""
    from suite import context, limits, run_options, run_record
    from suite.measurement import distributed
    from suite.reporting import summary

    spec = plan.spec  # launch options already checked by plan_run
    out_dir = run_record.check_out_dir(args.out)
    ctx = context.collect()
    # `suite scale` names the run itself, to find its record.
    run_id = distributed.launcher_run_id() or run_record.new_run_id(
        plan.workload.name, plan.backend.name, ctx["utc_time"]
    )
    fd, failures_path = tempfile.mkstemp(prefix="suite-launch-", suffix=".json")
    os.close(fd)
    # Workers import this same suite, wherever the parent was started from.
    env = context.child_env(SUITE_RUN_ID=run_id, SUITE_LAUNCH_FAILURES=failures_path)
    try:
        # The ranks run the spec as asked, each planning it as one process would.
        with child.spec_file(run_options.spec_from_args(args)) as spec_path:
            command = [
                sys.executable,
                "-m",
                "suite.launching.launch",
                *torchrun_options(spec),
                "-m",
                "suite",
                "--",
                *worker_argv(args, spec_path),
            ]
            # SIGTERM when this process ends however it ends (kill -9 too): torchrun then stops its ranks.
            agent = subprocess.Popen(command, env=env, preexec_fn=limits.end_with_parent())
            try:
                status = agent.wait()
            except KeyboardInterrupt:
                stop_agent(agent)
                if os.path.exists(os.path.join(out_dir, f"{run_id}.json")):
                    run_record.note_written(os.path.join(out_dir, f"{run_id}.json"))
                raise
        failures = _read_failures(failures_path)
    finally:
        os.unlink(failures_path)
    record_path = os.path.join(out_dir, f"{run_id}.json")
    if status == INTERRUPTED:
        if os.path.exists(record_path):  # rank 0 wrote it before the stop reached it: said, and kept
            run_record.note_written(record_path)
        raise KeyboardInterrupt  # as for one process: a stopped rank writes no record of its own
    if status == 0 or os.path.exists(record_path) or (spec.launch.node_rank or 0) != 0:
        return status  # rank 0 wrote the record (or lives on another node)
    record = failure_record(run_id, ctx, plan, status, failures)
    summary.show(record, run_record.write_record_or_stop(record, out_dir), as_json=args.json)
    return 1


def stop_agent(agent, grace_s: float = 10.0) -> None:
    """After Ctrl-C (or SIGTERM) here. Ctrl-C at a terminal, or a signal to the whole process group,
    reached torchrun too, and it is stopping its workers: let it, rather than orphan them by killing it. A
    signal sent to this process alone did not: after `grace_s`, pass it on as SIGTERM, which torchrun
    answers by stopping its workers (torch.distributed.elastic's SignalException)."""
    try:
        agent.wait(timeout=grace_s)
        return
    except subprocess.TimeoutExpired:
        agent.send_signal(signal.SIGTERM)
    try:
        agent.wait(timeout=60)
    except subprocess.TimeoutExpired:
        agent.kill()  # the last resort, once torchrun has had a minute to stop its workers
        agent.wait()


def _read_failures(path: str) -> dict:
    from suite.inputs.files import NotAFile, read_text

    try:  # the bounded reader: the file is this launcher's own, but its folder is /tmp, anyone's
        text = read_text(path)
        return json.loads(text) if text.strip() else {}
    except (NotAFile, ValueError, RecursionError):  # ValueError: bad JSON or UTF-8
        return {}


def _rank_failure(rank: int, failure: dict) -> dict:
    """One rank's failure as torchrun reported it, in words."""
    info = failure.get("extra") or {}
    exitcode = failure.get("exitcode")
    if info.get("suite_rank") is not None:
        message = failure.get("message", "")
    elif exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name if -exitcode in signal.valid_signals() else str(-exitcode)
        message = f"rank {rank}: killed by signal {name}"
    else:
        message = (
            f"rank {rank}: exited with status {exitcode} without reporting an error "
            "(killed, or it crashed outside Python)"
        )
    return {
        "rank": rank,
        "local_rank": failure.get("local_rank"),
        "pid": failure.get("pid"),
        "exitcode": exitcode,
        "message": message,
        "status": info.get("suite_status", "error"),
        "time": info.get("suite_time") or failure.get("timestamp"),
    }


def _first_failure_order(failure: dict):
    """Earliest first; a rank the launcher stopped itself (SIGTERM, nothing reported) is never the cause."""
    stopped = failure["exitcode"] == -signal.SIGTERM and "killed by signal" in failure["message"]
    return (stopped, failure["time"] is None, failure["time"] or 0.0)


def failure_record(run_id: str, ctx: dict, plan, status: int, failures: dict) -> dict:
    """The record of a run that a rank ended: which rank failed first and why, and every failure seen."""
    from suite import run_record

    record = run_record.new_record(run_id, ctx, plan.record_config())
    record["workload"] = {"name": plan.workload.name, "image_size": plan.workload.image_size}
    ranks = sorted((_rank_failure(int(r), f) for r, f in failures.items()), key=_first_failure_order)
    if ranks:
        first = ranks[0]
        record["status"] = first["status"] if first["status"] in run_record.STATUSES else "error"
        record["error"] = {
            "type": "RankFailed",
            "rank": first["rank"],
            "message": f"{first['message']} — the run was ended (launcher exit status {status})",
        }
        if "timed out" in first["message"].lower():
            record["error"]["hint"] = (
                "a rank waited longer than --dist-timeout for the others: one of them "
                "hung or is far slower (see `ranks`)"
            )
    else:
        record["error"] = {
            "type": "LaunchFailed",
            "message": f"torch's launcher exited with status {status} before any rank reported",
        }
    record["ranks"] = ranks
    return record


# -- the launcher subprocess ----------------------------------------------------------------------


def agent_main(argv: list[str]) -> int:
    """torchrun's `run()`, saving its ChildFailedError as JSON at $SUITE_LAUNCH_FAILURES."""
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    # Worker arguments come after "--" and are not shown to torchrun's parser: it would take (or
    # refuse as ambiguous) worker options that look like its own, such as --nproc.
    split = argv.index("--") if "--" in argv else len(argv)
    launcher_args = parse_args(argv[:split])
    launcher_args.training_script_args = argv[split + 1 :]
    # torch starts each rank in a session of its own (no signal to this group reaches it): each rank asks
    # the kernel for SIGTERM when this agent ends (limits.end_with_launcher, at the rank's start-up).
    from suite import limits

    os.environ[limits.LAUNCHER_PID_ENV] = str(os.getpid())
    try:
        run(launcher_args)
    except ChildFailedError as error:
        failures = {}
        for rank, failure in error.failures.items():
            # The error file's "message" is {"message": text, "extraInfo": {...}} (or, older, a string).
            message = failure.error_file_data.get("message", {})
            text = message.get("message", "") if isinstance(message, dict) else str(message)
            extra = message.get("extraInfo", {}) if isinstance(message, dict) else {}
            extra.pop("py_callstack", None)
            failures[rank] = {
                "local_rank": failure.local_rank,
                "pid": failure.pid,
                "exitcode": failure.exitcode,
                "message": text or str(failure.message),
                "timestamp": failure.timestamp,
                "extra": extra,
            }
        path = os.environ.get("SUITE_LAUNCH_FAILURES")
        if path:
            from suite import atomic

            atomic.write_atomic(path, json.dumps(failures))
        return 1  # the parent says which rank failed first, and why
    except (SignalException, KeyboardInterrupt):
        return INTERRUPTED  # torchrun has stopped the workers
    return 0


if __name__ == "__main__":
    raise SystemExit(agent_main(sys.argv[1:]))
