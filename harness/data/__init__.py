"""``compbench.data`` — Data in: the normalized transcript, the importers of every tool's logs, datasets, synthetic
sessions.

Files become :class:`~compbench.data.transcript.Transcript` values here (``formats/`` reads each tool's own
files, ``importing`` is the one path every command reads through, ``dataset`` stores and streams them);
nothing in this package knows about strategies or metrics.
"""
