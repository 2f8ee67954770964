"""The bottleneck diagnosis: which pipe is the narrowest (the loader, the copy or the device), judged from
rates already measured. rules.py gives the verdict and renders it, on one frozen `BottleneckEvidence`;
cases.py holds the cases a verdict can meet, each with its sentence and the changes it proposes;
loader_limits.py reads what limits a loader slower than compute; repeated.py judges arms measured in
several processes by the intervals of their ratios (`suite diagnose`).

Everything here is a function of numbers: the measuring is elsewhere (a run's own probe,
suite/measurement/bottleneck_probe.py; `suite diagnose`'s arms, suite/exploring/diagnose_arms.py). May
import suite.run_record and the shared places below it; never suite.measurement, suite.compare or anything
above them (the caller hands in `suite compare`'s interval).
"""
