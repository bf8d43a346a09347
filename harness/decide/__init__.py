"""``compbench.decide`` — Decisions over a run's results: intervals, the ranking rule, the verdict, compare, gate and
tune.

Pure over the rows the run store holds: ``stats`` and ``bootstrap`` give the intervals, ``headline`` names the
figure everything leads with (and its per-transcript median), ``ranking`` and ``objective`` the one rule every
table and the verdict follow, ``verdict`` puts it in words, ``breakdown`` does it per agent, model or project,
``compare``, ``gate`` and ``tune`` are the commands' cores, ``summary`` the plain-text table ``run`` prints.
"""
