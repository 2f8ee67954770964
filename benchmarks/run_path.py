"""The modules one `suite run` passes through: every module of suite/, backends/ and workloads/ whose code runs
(a function called, not an import), in the order each was first entered, with its call count.

    python benchmarks/run_path.py run --backend cpu --workload dcgan64 --batch-size 2 --warmup 1 --steps 1 \
        --windows 1 --threads 1 --model-override ngf=8 --model-override ndf=8 --out /tmp/run-path

docs/architecture.md ("The path of one run") separates the run's spine, the modules that hand the run on,
from the parts they call (a backend's verbs, a workload's step, the number and file checks). Tracing slows
the run: the rates it prints are not measurements.
"""

from __future__ import annotations

import collections
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLACES = tuple(os.path.join(ROOT, place) + os.sep for place in ("suite", "backends", "workloads"))


def main(argv: list[str]) -> int:
    entered: collections.OrderedDict[str, int] = collections.OrderedDict()

    def on_call(frame, event, arg):
        name = frame.f_code.co_filename
        if event == "call" and name.startswith(PLACES) and frame.f_code.co_name != "<module>":
            module = os.path.relpath(name, ROOT)
            entered[module] = entered.get(module, 0) + 1

    sys.path.insert(0, ROOT)
    from suite import cli

    sys.setprofile(on_call)
    try:
        status = cli.main(argv)
    finally:
        sys.setprofile(None)
    for module, calls in entered.items():
        print(f"{calls:8,d}  {module}")
    by_place = collections.Counter(module.split(os.sep)[0] for module in entered)
    print(
        f"{len(entered)} modules ran code: " + ", ".join(f"{n} in {place}/" for place, n in by_place.items())
    )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
