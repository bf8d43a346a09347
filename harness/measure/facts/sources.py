"""``compbench.measure.facts.sources`` — All facts of a transcript: derived by the extractors, plus gold and planted
facts.

Planted facts (synthetic ground truth) travel inside the transcript's metadata under ``planted_facts``
(and annotated ones may too, under ``gold_facts``): a list of objects ``{"id", "kind", "text",
"anchors", "first_index"?, "meta"?}``.

Gold facts for real transcripts usually live beside the data, in a ``gold_facts.jsonl`` file next to
the dataset (or the transcript files), one object per line with the same keys plus ``transcript_id``::

    {"transcript_id": "...", "id": "g-1", "kind": "decision", "text": "Only e2e tests for AgentSession",
     "anchors": ["e2e tests for agentsession"], "note": "why this matters"}

Anchors are matched after normalization (case, whitespace, path separators folded).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compbench.data.facts import KINDS, Fact, Source, normalize
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError, UsageError
from compbench.measure.facts.derive import extract

META_KEYS: dict[str, Source] = {"gold_facts": "gold", "planted_facts": "planted"}


def fact_from_dict(d: Any, source: Source) -> Fact:
    if not isinstance(d, dict):
        raise UsageError(f"a {source} fact must be an object, got {type(d).__name__}")
    try:
        kind = d["kind"]
        if kind not in KINDS:
            raise UsageError(f"{source} fact {d.get('id')!r}: kind must be one of {', '.join(KINDS)}")
        anchors = tuple(normalize(a) for a in d["anchors"] if isinstance(a, str) and a.strip())
        if not anchors:
            raise UsageError(f"{source} fact {d.get('id')!r}: needs at least one non-empty anchor")
        return Fact(str(d["id"]), kind, str(d["text"]), anchors, int(d.get("first_index", -1)), source,
                    dict(d.get("meta", {})))
    except KeyError as e:
        raise UsageError(f"{source} fact {d.get('id')!r}: missing field {e}") from None


GOLD_FILE = "gold_facts.jsonl"


def gold_file_for(dataset: str | Path) -> Path | None:
    """The gold-facts file that belongs to a dataset path (a directory, or the folder of a file)."""
    p = Path(dataset)
    candidate = (p if p.is_dir() else p.parent) / GOLD_FILE
    return candidate if candidate.is_file() else None


def load_gold(path: Path) -> dict[str, list[Fact]]:
    """Gold facts by transcript id; a malformed line is a TranscriptError naming it."""
    from compbench.data.formats.jsonio import iter_jsonl

    out: dict[str, list[Fact]] = {}
    for lineno, rec in iter_jsonl(path):
        tid = rec.get("transcript_id")
        if not isinstance(tid, str):
            raise TranscriptError(path, lineno, "a gold fact with a string 'transcript_id'")
        try:
            out.setdefault(tid, []).append(fact_from_dict(rec, "gold"))
        except UsageError as e:
            raise TranscriptError(path, lineno, f"a valid gold fact ({e})") from None
    return out


def facts_for(t: Transcript, derived: bool = True, gold: dict[str, list[Fact]] | None = None) -> list[Fact]:
    """Derived facts (unless disabled), then the gold facts of ``t`` and the facts it carries."""
    out = extract(t) if derived else []
    out += (gold or {}).get(t.id, [])
    for key, source in META_KEYS.items():
        out += [fact_from_dict(d, source) for d in t.meta.get(key, ())]
    return out
