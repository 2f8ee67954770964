"""Published figures: throughputs others measured and published, kept as YAML files in this folder, shown
beside the suite's own rows by `suite report --published`. figures.py reads and checks them (the shipped
files, or a person's own from csv_import.py, `suite published import`); basis.py says on what basis each
stands beside a measured row; rows.py makes each a marked row of its own, priced as the measured rows are;
table.py renders the figures on other bases in a table of their own.

Part of suite.reporting: reads suite.rows, suite.prices and the shared places below them.
"""
