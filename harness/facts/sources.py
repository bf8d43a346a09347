"""All facts of a transcript: derived by the extractors, plus gold or planted facts it carries.

Gold (annotated) and planted (synthetic ground truth) facts travel inside the transcript's metadata
under ``gold_facts`` / ``planted_facts``: a list of objects ``{"id", "kind", "text", "anchors",
"first_index"?, "meta"?}``, so a dataset stays one self-contained file and the run needs no side files.
"""

from __future__ import annotations

from typing import Any

from compbench.errors import UsageError
from compbench.facts import KINDS, Fact, Source, normalize
from compbench.facts.derive import extract
from compbench.transcript import Transcript

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


def fact_to_dict(f: Fact) -> dict[str, Any]:
    return {"id": f.id, "kind": f.kind, "text": f.text, "anchors": list(f.anchors),
            "first_index": f.first_index, "meta": dict(f.meta)}


def facts_for(t: Transcript, derived: bool = True) -> list[Fact]:
    """Derived facts (unless disabled) followed by the gold and planted facts ``t`` carries."""
    out = extract(t) if derived else []
    for key, source in META_KEYS.items():
        out += [fact_from_dict(d, source) for d in t.meta.get(key, ())]
    return out
