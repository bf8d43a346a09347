"""``compbench.store`` — The run store: a run directory written atomically and resumably, its typed manifest and
declared tables, and the one reader every command uses."""
