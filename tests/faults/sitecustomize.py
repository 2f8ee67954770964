"""Fault injection for tests of distributed runs, loaded at start-up by every process of a run whose
PYTHONPATH holds this folder (Python imports `sitecustomize` by itself).

SUITE_FAULT_RANK=1 SUITE_FAULT_STEP=3 [SUITE_FAULT_KIND=raise|exit|hang]: that rank fails at that step
(counting warm-up from 1), to show that one failing rank ends the whole run. The production step path
knows nothing of it: the fault wraps the training step when the process group wraps the workload.

SUITE_FAULT_HOLD_DIR=DIR [SUITE_FAULT_HOLD_AT=N]: the Nth `suite run` process started with these (counted
by the files each makes in DIR: started-1, started-2, ...; default the first) holds as its run starts
(when it collects the run's context, its stop handlers in place): it writes DIR/held, then waits until
DIR/release exists or it is stopped. A test that stops a sweep mid-point, or changes its disk there,
synchronises on DIR/held instead of sleeping and hoping the point is still running. With
SUITE_FAULT_HOLD_IN=probe it holds instead as its bottleneck probe starts (after its timed windows).

SUITE_FAULT_DECODE_S=S: every image the image folder's loader decodes takes S seconds more (a sleep, in
the process that decodes it): a loader slow by construction, so a test of an input-bound verdict does not
depend on how busy the host is (decoding itself slows with the host's load, and with it the margin).
"""

import os
import sys
import time


class InjectedFault(RuntimeError):
    pass


def faulty(train_step, at_step: int, kind: str):
    steps = 0

    def faulty_step(batch):
        nonlocal steps
        steps += 1
        if steps == at_step:
            if kind == "exit":
                os._exit(3)  # as if killed: no clean-up, no error file
            if kind == "hang":
                time.sleep(3600)
            raise InjectedFault(f"injected fault at step {at_step}")
        return train_step(batch)

    return faulty_step


def install(env=os.environ) -> None:
    from suite.measurement import distributed

    wrap = distributed.ProcessGroup.wrap

    def wrap_with_fault(self, training):
        wrap(self, training)
        if int(env["SUITE_FAULT_RANK"]) == self.info.rank:
            at_step, kind = int(env.get("SUITE_FAULT_STEP", "1")), env.get("SUITE_FAULT_KIND", "raise")
            training.train_step = faulty(training.train_step, at_step, kind)

    distributed.ProcessGroup.wrap = wrap_with_fault


def _arrival(folder: str) -> int:
    """This process's place among the runs started with the hold (1 for the first)."""
    place = 1
    while True:
        try:
            os.close(os.open(os.path.join(folder, f"started-{place}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return place
        except FileExistsError:
            place += 1


def _hold(folder: str) -> None:
    """DIR/held written (atomically), then wait for DIR/release; a stop arrives as KeyboardInterrupt."""
    with open(os.path.join(folder, "held.tmp"), "w") as handle:
        handle.write(str(os.getpid()))
    os.rename(os.path.join(folder, "held.tmp"), os.path.join(folder, "held"))
    while not os.path.exists(os.path.join(folder, "release")):
        time.sleep(0.05)  # polls for the test's release


def _hold_in_probe(folder: str) -> None:
    from suite.measurement import bottleneck_probe

    measure = bottleneck_probe.measure

    def held_measure(*args, **kwargs):
        _hold(folder)
        return measure(*args, **kwargs)

    bottleneck_probe.measure = held_measure


def install_hold(env=os.environ) -> None:
    from suite import context

    folder, at = env["SUITE_FAULT_HOLD_DIR"], int(env.get("SUITE_FAULT_HOLD_AT", "1"))
    where = env.get("SUITE_FAULT_HOLD_IN", "start")
    collect, counted = context.collect, []

    def held_collect(*args, **kwargs):
        if not counted and sys.argv[1:2] == ["run"]:  # a `suite run` process, once
            counted.append(_arrival(folder))
            if counted[0] == at:
                (_hold_in_probe if where == "probe" else _hold)(folder)
        return collect(*args, **kwargs)

    context.collect = held_collect


def install_slow_decode(env=os.environ) -> None:
    from suite.data import imagefolder

    delay, load = float(env["SUITE_FAULT_DECODE_S"]), imagefolder.load_image

    def slow_load(path: str):
        time.sleep(delay)  # the loader's own wait, not the CPU's: the same on an idle or a busy host
        return load(path)

    imagefolder.load_image = slow_load


if "SUITE_FAULT_RANK" in os.environ:
    install()
if "SUITE_FAULT_HOLD_DIR" in os.environ:
    install_hold()
if "SUITE_FAULT_DECODE_S" in os.environ:
    install_slow_decode()
