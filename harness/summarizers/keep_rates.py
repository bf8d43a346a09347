"""``compbench.summarizers.keep_rates`` — What the ``calibrated`` summarizer keeps: the share of each kind of fact
real tools' own summaries kept, and their sizes, as shipped in ``keep_rates.json``.

The table is fitted on the compactions real tools recorded (:mod:`compbench.validation.summary_rates`, which
also regenerates it; a test fails when it is stale).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from compbench.data.facts import Fact, fact_key
from compbench.data.transcript import Message
from compbench.measure.facts.presence import part_match_text

TABLE = Path(__file__).with_name("keep_rates.json")


CHARS_PER_TOKEN = 4  # the size estimate of a span (the calibrated summarizer has no tokenizer)


def chars_tokens(messages: Iterable[Message]) -> int:
    return sum(len(part_match_text(p)) for m in messages for p in m.parts) // CHARS_PER_TOKEN


@cache
def table() -> Mapping[str, Any]:
    data: Mapping[str, Any] = json.loads(TABLE.read_text(encoding="utf-8"))
    return data


def keep_rate(kind: str, provenance: str, rates: Mapping[str, Any] | None = None) -> float:
    """The share of facts of this kind and provenance a real summary keeps (0 for system facts)."""
    cell = (rates if rates is not None else table()["rates"]).get(f"{kind}/{provenance}")
    return float(cell["rate"]) if cell else 0.0


def draw(f: Fact) -> float:
    """A fact's fixed uniform draw in [0, 1): kept when below its keep-rate. Fixed per fact (kind and
    anchor), so a fact a summary keeps is kept by every summary of every strategy, as a model that
    finds a fact salient does; strategies then differ by what they hand the summarizer, not by luck."""
    digest = hashlib.sha1(fact_key(f).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
