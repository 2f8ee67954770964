"""Renting instances to run the suite: campaign files, their `suite run` lines, SkyPilot tasks, the driver
that tears every instance down, the ledger of what each cost, and SkyPilot's own catalog, read offline."""
