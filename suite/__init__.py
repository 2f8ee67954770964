"""suite: a cross-accelerator benchmark for deep-learning training.

The package's parts, in the order the imports run (each subpackage's docstring says what it owns and what
it may import):

    suite.cli, suite.commands    the command line: parse, call one entry of the packages below, print
    suite.exploring, suite.fleet grids of child runs (sweep, scale, batch size, diagnose) | rented instances
    suite.launching              a run as a process: the child, repeats, per-device copies, torchrun's ranks
    suite.measurement            one run: plan, warm-up, timed windows, telemetry, the bottleneck probe
    suite.backends, suite.workloads, suite.data   what a run is made of: a device, a model, its input
    suite.reporting              records in, tables and plots out (reads records only)

Beneath them, what every layer may import: suite.inputs (everything a person or a file gives, checked:
numbers, sizes, option types, strict YAML, the one bounded file reader, one-line errors), suite.spec (the
RunSpec), suite.run_record (the record: its type, schema, reading and writing), suite.vendors (vendor modules
imported with care), and at this level atomic (every write), context (what a run records of its machine),
limits (what the machine can run and hold), run_options (`suite run`'s options, declared once) and stats
(throughput arithmetic).
"""

import time as _time

# When this interpreter first imported the suite: the start of a run's time to first step, taken before
# anything else the package does. A process's creation time (psutil) is not it: a shell line that ends in
# `exec suite run` passes its pid, and all it did before (an install, a sleep), to this interpreter.
IMPORTED_AT = _time.time()

import os as _os  # noqa: E402 - after the clock is read

__version__ = "0.1.0"

# backends/ and workloads/ sit at the top of the repository and install as suite.backends and
# suite.workloads (pyproject's package-dir). In a checkout that is not installed, look for them beside this
# folder, so `python -m suite` and the benchmarks run from a clone as they do from an install.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "pyproject.toml")) and _os.path.isfile(
    _os.path.join(_checkout, "backends", "base.py")
):
    __path__.append(_checkout)
