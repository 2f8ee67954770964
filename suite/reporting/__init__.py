"""Reporting: price catalogs, cost tables, scaling tables, plots and the terminal summary of a run.

Reads records only: everything here is a function of the JSON records a run wrote (and of a price
catalog), never of a live run. May import the shared modules (errors, run_record, sizes); never imports
suite.measurement, suite.launching, suite.exploring, suite.fleet, suite.commands, torch or a device SDK.
"""
