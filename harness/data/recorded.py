"""``compbench.data.recorded`` — The tool's own compactions as its log recorded them.

A log that records its tool's compactions (:class:`compbench.data.transcript.RecordedCompaction`: where,
the real summary, what was kept) says what the tool's context was after each one. :func:`segment` rebuilds
it, so that a strategy can be compared with the tool's k-th compaction from the state the tool was in, and
an early difference does not shift every later comparison.
"""

from __future__ import annotations

from dataclasses import replace

from compbench.data.transcript import Message, Text, Transcript


def segment(t: Transcript, n: int) -> tuple[Transcript, int]:
    """The transcript as the tool saw it after its (n−1)-th compaction, and the offset of its messages.

    Its first message is the recorded summary (a user message; what a summary-less compaction left instead,
    ``meta["stand_in"]``: a truncation marker, or nothing), then the messages the tool kept, then everything
    recorded after that compaction.
    """
    if n == 0:
        return t, 0
    prev = t.compactions[n - 1]
    kept = set(prev.kept_ids)
    stand_in = prev.meta.get("stand_in")
    text = prev.summary or (stand_in if isinstance(stand_in, str) else "(summary not recorded)")
    # a kept call's recorded usage measured the context before the compaction, not the one it rebuilt
    head = [replace(m, usage=None) if m.usage is not None else m for m in t.messages[: prev.index] if m.id in kept]
    if text:
        summary = Message(f"recorded-summary-{n}", "user", (Text(text),), meta={"recorded_summary": True})
        offset = prev.meta.get("summary_offset")  # where the tool put it among what it kept (OpenHands); else first
        at = offset if isinstance(offset, int) and not isinstance(offset, bool) and 0 <= offset <= len(head) else 0
        head.insert(at, summary)
    tail = [m for m in t.messages[prev.index:] if not m.meta.get("compaction")]
    # a later compaction's position among the messages kept: the tool's own artifacts (a summary record) are
    # dropped from the tail, so they are not counted either
    later = tuple(replace(c, index=len(head) + sum(1 for m in t.messages[prev.index: c.index]
                                                   if not m.meta.get("compaction"))) for c in t.compactions[n:])
    return replace(t, messages=(*head, *tail), compactions=later), prev.index - len(head)
