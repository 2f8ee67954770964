"""Prices: what an instance costs per hour and on whose word. The shipped catalogs (catalogs/*.yaml), the
strict reading of a catalog and its dates, the lookup of an instance, and `suite prices import` from a public
price list.

Beneath everything that prices a run: planning names the instance a run is priced on (suite.measurement.plan),
and the report, `suite compare` and the fleet read the same catalogs. Reads catalogs only, never a run or a
record's rows: may import suite.inputs and suite.run_record; never imports suite.measurement,
suite.reporting, suite.fleet or anything above them.
"""
