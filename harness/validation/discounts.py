"""``compbench.validation.discounts`` — Which facts an agent reconstructs without looking, measured at the real
compactions: the evidence behind the needs that retention discounts.

At each compaction a log records, take the needs after it whose fact the tool's post-compaction view lacked
(not in its summary, not in a message it kept) and ask how the recorded agent met each: *without looking*
(its first use came before any tool output brought the fact back) or by *re-acquiring* it. A class of facts
an agent types from convention or from its neighbours is met without looking far more often than the rest;
only such a class earns a discount. Run it on logs with compactions::

    python -m compbench.validation.discounts ../shared/transcripts ../shared/real-compactions

The classes: a conventional file name (``package.json``), a sibling of a path the post-compaction view names
(same directory), another path, a command or address the agent had typed itself before the compaction, and
the other kinds. The discounts are lifted to measure them (conventional names and retyped commands are no
needs otherwise). What an instructions file states needs no measurement: every tool
re-sends its instructions each call (:data:`compbench.measure.facts.presence.INSTRUCTION_MARKS`).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

from compbench.data.facts import Fact, normalize
from compbench.data.transcript import Transcript
from compbench.measure.facts.presence import FactIndex
from compbench.measure.retention import lacked_after

DIRECTORY = re.compile(r"[\w.\-\[\]@]*/[\w./\-\[\]@]+")


def directories(text: str) -> set[str]:
    """The parent directories (last component) of the paths ``text`` names."""
    out = set()
    for m in DIRECTORY.finditer(normalize(text)):
        path = m.group(0).rstrip("/")
        head = path.rsplit("/", 1)[0].rsplit("/", 1)[-1]
        if head:
            out.add(head)
    return out


def category(f: Fact, named_dirs: set[str], typed: bool) -> str:
    if f.meta.get("conventional"):
        return "conventional name"
    if f.kind == "artifact":
        return "sibling of a named path" if directories(f.text) & named_dirs else "other path"
    if f.kind == "recall":
        return "recall the agent had typed" if typed else "other recall"
    return f"other {f.kind}"


def tally(ts: Iterable[Transcript]) -> Counter[tuple[str, bool]]:
    """(class, met without looking) -> needs, over every compaction of ``ts``."""
    from compbench.measure.facts.sources import facts_for

    out: Counter[tuple[str, bool]] = Counter()
    for t in ts:
        if not t.compactions:
            continue
        # conventional names are measured as if they were needs: lift the discount for this count
        derived = facts_for(t)
        conventional = {f.id for f in derived if f.meta.get("conventional")}
        facts = [replace(f, meta={k: v for k, v in f.meta.items() if k != "conventional"}) for f in derived]
        index = FactIndex.build(t, facts, retyped=False)
        out.update(_tally(t, index, conventional))
    return out


def _tally(t: Transcript, index: FactIndex, conventional: set[str]) -> Counter[tuple[str, bool]]:
    by_id = {f.id: f for f in index.facts}
    out: Counter[tuple[str, bool]] = Counter()
    own = [set().union(*ids) if m.role == "assistant" and ids else set()
           for m, ids in zip(t.messages, index.part_facts, strict=True)]
    views: dict[int, tuple[set[str], set[str]]] = {}  # compaction -> (directories its view names, facts typed)
    seen: set[tuple[int, str]] = set()  # each fact counted at its first need after a compaction
    for n, _, fid, back in lacked_after(t, index):
        if (n, fid) in seen:
            continue
        seen.add((n, fid))
        if n not in views:
            rc = t.compactions[n]
            kept = set(rc.kept_ids)
            text = [rc.summary or "", *(m.text for m in t.messages[:rc.index] if m.id in kept)]
            views[n] = directories("\n".join(text)), set().union(*own[:rc.index])
        named, typed = views[n]
        f = by_id[fid]
        if fid in conventional:
            f = replace(f, meta={**f.meta, "conventional": True})
        out[(category(f, named, fid in typed), not back)] += 1
    return out


def table(counts: Counter[tuple[str, bool]]) -> list[str]:
    lines = [f"{'class':26} {'without looking':>16} {'re-acquired':>12} {'share':>6}"]
    for c in sorted({c for c, _ in counts}):
        w, r = counts[(c, True)], counts[(c, False)]
        lines.append(f"{c:26} {w:16,} {r:12,} {w / (w + r):6.0%}")
    return lines


def main(argv: Sequence[str]) -> int:
    from compbench.data.importing import transcripts

    if not argv:
        print("usage: python -m compbench.validation.discounts PATH...", file=sys.stderr)
        return 2
    print("\n".join(table(tally(transcripts(argv, on_error="skip")))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
