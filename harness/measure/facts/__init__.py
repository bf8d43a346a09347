"""``compbench.measure.facts`` — Task facts: deriving them from a transcript, and whether a view still contains them.

The fact model itself (:class:`compbench.data.facts.Fact`) lives with the data: a dataset ships gold facts.

A fact has a kind (``artifact``: a file created/modified/read; ``recall``: an error, failing test,
command, URL; ``decision``: a user constraint; ``continuation``: an open task), a text, match anchors,
the message where it first appears and its source (``derived``, ``gold``, ``planted``, ``generated``).

Every fact also carries its *provenance*, where it first appeared: ``user`` (the user's messages),
``tool`` (environment output), ``agent`` (the model's own text or call arguments) or ``system`` (the
system prompt). Task knowledge is what the agent *received* (user, tool): what it typed itself it can type
again, so only received facts make needs. A fact is *boilerplate* when it first appears in the system
prompt or recurs in most transcripts of one agent (a framework's fixed instructions); boilerplate is left
out of headline figures and reported as a count.

Presence is deterministic anchor matching on normalized text. It is an *upper bound* on what a model
retains (a summary can mention a path without the model being able to use it), and reports call it
presence, not recall by the model.
"""
