"""`suite tune`: the fastest configuration of a workload on a backend, searched over the knobs the backend
declares. knobs.py says which values each knob tries and which it leaves out; search.py is the search
itself, pure (which run next, what is kept, the budget); lab.py runs each trial as a fresh `suite run`
through the grid engine and resumes from the folder's records; plan.py says what a search would try
(`--plan`); table.py prints the trials and the `suite run` line of the best.

Part of suite.exploring: imports the grid engine beside it (suite.exploring.grid, grid_options,
sweep_resume) and what suite.exploring may import.
"""
