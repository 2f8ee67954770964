"""Fault injection for tests of distributed runs, loaded at start-up by every process of a run whose
PYTHONPATH holds this folder (Python imports `sitecustomize` by itself).

SUITE_FAULT_RANK=1 SUITE_FAULT_STEP=3 [SUITE_FAULT_KIND=raise|exit|hang]: that rank fails at that step
(counting warm-up from 1), to show that one failing rank ends the whole run. The production step path
knows nothing of it: the fault wraps the training step when the process group wraps the workload.
"""

import os
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


if "SUITE_FAULT_RANK" in os.environ:
    install()
