"""`suite compare`: a baseline's runs against a candidate's, matched by the rows' key, tested (Welch's
test per metric, then the family's correction), the call withheld where the hosts' load could explain
it, gated (`--fail-on`) and rendered. comparison.py runs the steps in order: matching.py (which runs
meet; the closest pair, closest_pair.py, where none do) → significance.py → host_load.py → gate.py →
render.py.

Reads records only, through suite.rows: may import suite.rows, suite.prices, suite.run_record,
suite.inputs, run_options and stats; never imports suite.reporting (the report's answer imports this
package's test and load rule, so that the report and the comparison decide alike), suite.measurement or
anything above them.
"""
