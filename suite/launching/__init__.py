"""Starting runs as processes: one child `suite run` (its spec, its timeout, its failure record), repeats,
one copy per device, and torchrun's ranks. It spawns what suite.measurement.plan planned; it plans nothing."""
