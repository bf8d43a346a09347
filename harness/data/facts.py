"""``compbench.data.facts`` — The fact model: what the agent must still know later, as a dataset can ship it.

A fact has a kind (``artifact``: a file created/modified/read; ``recall``: an error, failing test,
command, URL; ``decision``: a user constraint; ``continuation``: an open task), a text, match anchors,
the message where it first appears and its source (``derived``, ``gold``, ``planted``, ``generated``).
Gold facts ship with a dataset and the synthetic generator plants them, so the model lives with the data;
:mod:`compbench.measure.facts` derives them from transcripts and tracks their presence in a view.

Every fact also carries its *provenance*, where it first appeared: ``user`` (the user's messages),
``tool`` (environment output), ``agent`` (the model's own text or call arguments) or ``system`` (the
system prompt). Task knowledge is what the agent *received* (user, tool): what it typed itself it can type
again, so only received facts make needs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Kind: TypeAlias = Literal["artifact", "recall", "decision", "continuation"]


KINDS: tuple[Kind, ...] = ("artifact", "recall", "decision", "continuation")


Source: TypeAlias = Literal["derived", "gold", "planted", "generated"]


Provenance: TypeAlias = Literal["user", "tool", "agent", "system", "unknown"]


PROVENANCES: tuple[Provenance, ...] = ("user", "tool", "agent", "system", "unknown")


RECEIVED: frozenset[str] = frozenset({"user", "tool"})  # task knowledge: what the agent was given


@dataclass(frozen=True, slots=True)
class Fact:
    id: str
    kind: Kind
    text: str
    anchors: tuple[str, ...]
    first_index: int = -1
    source: Source = "derived"
    meta: Mapping[str, Any] = field(default_factory=dict)
    provenance: Provenance = "unknown"  # set by FactIndex.build from the fact's first appearance
    boilerplate: bool = False

    @property
    def received(self) -> bool:
        """Task knowledge the agent was given (not typed by itself, not a framework's fixed text, not a
        conventional file name it would type without having seen it: package.json, README.md)."""
        return self.provenance in RECEIVED and not self.boilerplate and not self.meta.get("conventional")

    def __hash__(self) -> int:
        return hash(self.id)


def fact_id(kind: str, key: str) -> str:
    """A stable id: the same fact text gives the same id in every run."""
    return f"{kind[0]}-{hashlib.sha1(f'{kind}:{key}'.encode()).hexdigest()[:10]}"


def normalize(text: str) -> str:
    """Case, whitespace and path separators folded, so ``C:\\Src\\App.py`` matches ``c:/src/app.py``."""
    return " ".join(text.replace("\\", "/").lower().split())


PATH_TAIL_COMPONENTS = 2


def path_anchors(path: str) -> tuple[str, ...]:
    p = normalize(path).rstrip("/")
    parts = [x for x in p.split("/") if x and x != "."]
    tail = "/".join(parts[-PATH_TAIL_COMPONENTS:])
    return (p,) if tail == p or len(parts) <= PATH_TAIL_COMPONENTS else (p, tail)


def fact_key(f: Fact) -> str:
    """What makes two transcripts' facts the same fact (boilerplate detection): kind and first anchor."""
    return f"{f.kind}:{f.anchors[0]}"
