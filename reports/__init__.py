"""``compbench.reports`` — the HTML report of a run: its page, charts, data and the fidelity report."""
