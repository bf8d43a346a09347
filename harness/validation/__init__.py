"""``compbench.validation`` — Validation against what real tools did: each strategy beside the compactions its tool
recorded in real logs (``fidelity``), with what the logs leave out filled from the tool's own figures
(:mod:`compbench.run.missing_usage`)."""
