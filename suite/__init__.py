"""suite: a cross-accelerator benchmark for deep-learning training.

The package's places, top down: a module imports only from a lower level or its own place
(docs/architecture.md, "Layers", holds the same table, and tests/test_layers.py holds the code to it;
each subpackage's docstring says what it owns and what it may import):

    15  suite.__main__                        `python -m suite`
    14  suite.cli                             the command line: parse, call one command, print
    13  suite.commands                        one module per sub-command; none imports another
    12  suite.exploring, suite.fleet          grids of child runs (sweep, scale, batch size, diagnose, tune) |
                                              rented instances
    11  suite.launching                       a run as a process: the child, repeats, per-device copies,
                                              torchrun's ranks; it spawns, and plans nothing
    10  suite.measurement, suite.reporting    one run: planned (priced too), warmed up, timed, its telemetry
                                              and bottleneck probe | records in, tables and plots out
     9  suite.compare, suite.diagnosis, suite.numerics   `suite compare`: match, test, the load rule,
                                              gate, render | the bottleneck verdict, from rates already
                                              measured | the numerics check after a run's windows
     8  suite.rows                            records gathered and grouped into rows, for the report and compare
     7  suite.context, suite.prices, suite.run_options   what a run records of its machine | what an
                                              instance costs (catalogs, read only) | `suite run`'s options
     6  suite.backends, suite.workloads       a device's verbs | a model and its train step
     5  suite.data                            synthetic data, image folders, the cache, a loader
     4  suite.run_record                      the record: its type, schema, reading and writing
     3  suite.limits                          what the machine can run and hold
     2  suite.spec                            the RunSpec: what a run is asked to do
     1  suite.inputs                          everything a person or a file gives, checked; one-line errors
     0  suite.atomic, suite.stats, suite.vendors   every write | throughput arithmetic | vendor modules
                                              imported with care
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
