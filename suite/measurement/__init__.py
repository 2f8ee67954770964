"""Measuring one run: plan it, warm up, time the windows, sample telemetry, probe the bottleneck, and hand
the record to suite.run_record.

Owns: planning (plan.py: the one place a run is resolved, the instance it is priced on included), the
window loop, the telemetry thread and the host's sampler, the profiler schedule, FLOP counting, the
bottleneck probe (its verdict is suite.diagnosis's) and the worker side of a distributed run. May import:
suite.backends, suite.workloads, suite.data, suite.diagnosis and the shared places (context, inputs,
prices, run_record, spec, stats).
Never imports suite.launching, suite.exploring, suite.fleet, suite.reporting or suite.commands.
"""
