"""Robustness measured like speed: the hostile-client suite (hostile, probes) and the soak with
faults; each workload's protocol part is its `robustness.py` adapter. docs/robustness.md."""
