"""Rows: run records gathered and grouped into the rows every table is made of, the report's and
`suite compare`'s alike. Records are read and checked (gather.py), grouped by one key (identity.py:
`row_key`), combined into a typed row with its median, spread and prices (build.py, row.py,
row_prices.py, row_figures.py), its cells formatted (cells.py) and its settings said in words (labels.py).

Reads records and price catalogs only: may import suite.prices, suite.run_record, suite.inputs, stats and
context; never imports suite.compare, suite.reporting or anything above them, torch or a device SDK.
"""
