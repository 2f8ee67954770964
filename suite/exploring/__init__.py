"""Grids of child runs through one engine (grid.py): sweeps, scaling over process counts, the batch-size
search and the bottleneck diagnosis's interleaved arms; each point a child run, resumable, their options
declared once (grid_options.py)."""
