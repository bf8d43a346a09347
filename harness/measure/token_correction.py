"""``compbench.measure.token_correction`` — Token corrections per model family, and hidden-overhead defaults per agent,
shipped as data.

We count with ``o200k_base`` (OpenAI's tokenizer); Claude and Gemini count the same text with their own
tokenizers, which spend more tokens on it. Fitted on the usage their APIs recorded (``token_fit``), a
family's :class:`~compbench.measure.tokens.Correction` scales our counts to theirs; a run applies the correction
of each transcript's recorded model family by default (``mode="auto"``), ``"none"`` turns it off and a
family name forces one. OpenAI's models use ``o200k_base`` itself: no correction.

The fitted values ship as ``data/token_correction.json`` with the files and calls they were fitted on,
the errors before and after (in-sample and leaving each transcript out) and, per agent, the medians of its
sessions' hidden overhead (fixed part and growth rate, :mod:`compbench.measure.overhead`). Regenerate (a
test fails when stale)::

    python -m compbench.measure.token_fit ../shared/transcripts ../shared/real-compactions
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from compbench.data.transcript import Transcript
from compbench.errors import UsageError

DATA = Path(__file__).with_name("token_correction.json")


@dataclass(frozen=True, slots=True)
class Correction:
    """A model family's tokenizer against ours, fitted on recorded usage (this module).

    ``factor`` (per mille) scales every counted part and the per-message overhead: the family's
    tokenizer spends that many tokens where ours spends a thousand. ``reasoning`` (per mille) is what a
    message's readable reasoning adds to the context (0: the family's APIs do not resend it). It rides on
    the message, not on a part: the loop counts a message's output from its parts plus its thinking, which
    stays right; a prune recounts a message from its parts, so pruning any part of a message with thinking
    drops the thinking from the context (right for a cleared thinking block).
    """

    family: str
    factor: int
    reasoning: int = 0

    @property
    def label(self) -> str:
        extra = f", thinking x{self.reasoning / 1000:.3f}" if self.reasoning else ""
        return f"{self.family} x{self.factor / 1000:.3f}{extra}"


REGENERATE = "python -m compbench.measure.token_fit ../shared/transcripts ../shared/real-compactions"
MODES = ("auto", "none")  # or a family name
# model name (lower case, provider prefix and a "[1m]" suffix removed) -> family; first match wins
FAMILY_PATTERNS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    # (family, substrings, prefixes): Claude Code's aliases (opus, sonnet[1m], haiku) name Claude models
    ("claude", ("claude",), ("opus", "sonnet", "haiku")),
    ("gemini", ("gemini",), ()),
    ("openai", (), ("gpt-", "gpt5", "o1", "o3", "o4", "codex", "chatgpt")),
)


def family_of(model: str) -> str | None:
    """The tokenizer family of a model name, or None when it is not one we know."""
    name = model.lower().strip().split("/")[-1].removesuffix("[1m]")
    for family, parts, prefixes in FAMILY_PATTERNS:
        if any(p in name for p in parts) or name.startswith(prefixes):
            return family
    return None


def recorded_model(t: Transcript) -> str:
    """The model that recorded ``t``: its own, else its first assistant message's ('' when none)."""
    model = str(t.meta.get("model") or "")
    if model and model != "<synthetic>":
        return model
    for m in t.messages:
        name = m.meta.get("model")
        if m.role == "assistant" and isinstance(name, str) and name and name != "<synthetic>":
            return name
    return ""


@cache
def table() -> Mapping[str, Any]:
    data: Mapping[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def family_correction(family: str, tokenizer: str, data: Mapping[str, Any] | None = None) -> Correction | None:
    """The shipped correction of ``family`` for counts made with ``tokenizer`` (None: none fitted)."""
    data = table() if data is None else data
    entry = data["families"].get(family)
    if tokenizer != data["tokenizer"] or not entry or not entry.get("fitted"):
        return None
    return Correction(family, round(entry["factor"] * 1000), round(entry["reasoning"] * 1000))


def check_mode(mode: str) -> str:
    """``mode`` if it names a correction mode or a family with a shipped correction, else a UsageError."""
    known = [*MODES, *sorted(f for f, e in table()["families"].items() if e.get("fitted"))]
    if mode not in known:
        raise UsageError(f"unknown token correction {mode!r}; known: {', '.join(known)}")
    return mode


def correction_for(t: Transcript, tokenizer: str, mode: str = "auto") -> Correction | None:
    """The correction a run applies to ``t``: its recorded model family's (``auto``), none, or a family's."""
    if check_mode(mode) == "none":
        return None
    family = family_of(recorded_model(t)) if mode == "auto" else mode
    return family_correction(family, tokenizer) if family else None


def in_use(tokenizer: str, mode: str) -> dict[str, str]:
    """For a manifest: family -> the correction label a run with ``mode`` applies to that family."""
    if check_mode(mode) == "none":
        return {}
    families = sorted(table()["families"]) if mode == "auto" else [mode]
    out = {}
    for f in families:
        c = family_correction(f, tokenizer)
        out[f] = c.label if c else "none"
    return out


def overhead_default(source: str) -> tuple[int, int, str] | None:
    """The shipped hidden-overhead defaults of an agent (format): its fixed part, its growth rate (per mille)
    and the sentence saying where they come from (:mod:`compbench.measure.overhead`)."""
    d = table()["overhead_defaults"].get(source)
    if not d:
        return None
    return (int(d["tokens"]), int(d["rate"]), f"no recorded usage: {source} defaults, fixed {d['tokens']:,}, "
            f"growth x{d['rate'] / 1000:.3f} (medians of {d['sessions']} sessions)")
