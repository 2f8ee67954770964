"""Reporting: cost tables, comparisons, scaling tables, plots and the terminal summary of a run.

Reads records only: everything here is a function of the JSON records a run wrote (and of a price
catalog, read through suite.prices), never of a live run, and nothing here writes to a run. May import
the shared places (suite.prices, suite.run_record, suite.inputs, stats); never imports suite.measurement,
suite.launching, suite.exploring, suite.fleet, suite.commands, torch or a device SDK.
"""
