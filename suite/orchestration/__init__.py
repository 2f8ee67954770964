"""Orchestrating child runs: the grid engine (`grid`) and its strategies (a sweep over a grid, the
batch-size search, diagnose's interleaved arms), and the launcher that starts torchrun for a
multi-process run; `child` is the one place a child run is handed its RunSpec (as JSON),
started with a timeout, and turned into a failure record when it leaves none. Each child is a fresh `suite run` process, so one failure (an
out-of-memory error, a crash) cannot spoil the next measurement.

May import: suite.measurement, suite.reporting (to render what its children recorded, and to price the instance a run names) and the shared
modules. Never imports suite.commands.
"""
