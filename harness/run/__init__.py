"""``compbench.run`` — A benchmark: every transcript under every configuration, replayed, measured and stored.

The layer above the replay, the measures and the store: ``spec`` what determines a run (its manifest),
``engine`` one transcript's replays (shared trajectories, the ``none`` reference, rows), ``executors``
where transcripts run (in process, ``--workers`` processes, Ray), ``write`` a run directory written batch by
batch through :mod:`compbench.store` (which never drives a replay), ``judge`` the optional judged track.
"""
