"""``compbench.decide`` — Decisions over a run's results: intervals, the ranking rule, the verdict, compare, gate and
tune.

Pure over the rows the run store holds: ``stats`` and ``bootstrap`` give the intervals, ``ranking`` the one
rule every table follows, ``verdict`` puts it in words, ``compare``, ``gate`` and ``tune`` are the commands'
cores, ``summary`` the plain-text table ``run`` prints.
"""
