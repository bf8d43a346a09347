"""Task facts: what the agent must still know later, and whether a view still contains it.

A fact has a kind (``artifact``: a file created/modified/read; ``recall``: an error, failing test,
command, URL; ``decision``: a user constraint; ``continuation``: an open task), a text, match anchors,
the message where it first appears and its source (``derived``, ``gold``, ``planted``, ``generated``).

Presence is deterministic anchor matching on normalized text. It is an *upper bound* on what a model
retains (a summary can mention a path without the model being able to use it), and reports call it
presence, not recall by the model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Kind: TypeAlias = Literal["artifact", "recall", "decision", "continuation"]
KINDS: tuple[Kind, ...] = ("artifact", "recall", "decision", "continuation")
Source: TypeAlias = Literal["derived", "gold", "planted", "generated"]


@dataclass(frozen=True, slots=True)
class Fact:
    id: str
    kind: Kind
    text: str
    anchors: tuple[str, ...]
    first_index: int = -1
    source: Source = "derived"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(self.id)


def fact_id(kind: str, key: str) -> str:
    """A stable id: the same fact text gives the same id in every run."""
    return f"{kind[0]}-{hashlib.sha1(f'{kind}:{key}'.encode()).hexdigest()[:10]}"


def normalize(text: str) -> str:
    """Case, whitespace and path separators folded, so ``C:\\Src\\App.py`` matches ``c:/src/app.py``."""
    return " ".join(text.replace("\\", "/").lower().split())
