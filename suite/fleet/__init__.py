"""Renting instances to run the suite: campaign files, their `suite run` lines, SkyPilot tasks, the driver
that tears every instance down, and the ledger of what each cost."""
