"""The numerics check (`--check-numerics`): does the asked precision train the same model as fp32? After a
run's timed windows, check.py trains the workload's own recipe a few steps three times (training.py: fp32,
fp32 again for the noise, the asked precision) and compares their losses, drifts, gradients and each step's
update (updates.py) against the noise between the two fp32 trainings; keep.py puts the verdict into the
numerics ledger, which suite.run_record holds because the report and `suite compare` read it too.

May import suite.backends, suite.context and the shared places below them (inputs, run_record, spec); never
suite.measurement (which calls the check) or anything above it.
"""
