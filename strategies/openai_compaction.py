"""``compbench.strategies.openai_compaction`` — ``openai-compaction``: the OpenAI Responses API's server-side
compaction, its summary opaque.

Sources: OpenAI's compaction guide (developers.openai.com/api/docs/guides/compaction): with
``context_management: [{type: "compaction", compact_threshold: N}]`` on ``POST /responses``, "when the
rendered token count crosses the configured threshold, the server runs server-side compaction", emits the
encrypted compaction item in the same response and continues with the reduced context; the item "is opaque
and not intended to be human-interpretable". ``POST /responses/compact`` returns the same thing on demand:
openai-python ``types/responses/compacted_response.py`` — "a list of all user messages, followed by a
single compaction item". openai/codex ``codex-rs/core/src/compact_remote.rs`` @ 683f0a6 is the client side
(it drops developer and contextual user messages from that output, keeps the item) and
``context_manager`` estimates an encrypted item at (len x 3 / 4 - 650) bytes, 4 bytes a token.

Modelled: before a call whose prompt (s.context_tokens) is over ``compact_threshold``, the view becomes the
leading system messages (the ``instructions``, not items), every user message verbatim, in order, then one
item standing for the encrypted one. What the item carries cannot be read, so it is modelled by its size:
it is asked of the run's summarizer with a budget of ``compression_ratio`` x the tokens it replaces (the
offline ``calibrated`` summarizer writes to that budget on large spans, so the item has the real items'
size and keeps facts at the rate real summaries keep them: an assumption, not a measurement of the
encrypted content). An earlier item is not a user message: it is compacted into the next one.

``compression_ratio`` = 0.015, measured on the five remote compactions of Codex 0.140/0.142 in
``../shared/real-compactions/codex``: their rollouts keep no encrypted content, but after each compaction
Codex's ``recompute_token_usage`` records its estimate of the new history; minus the base instructions
(21,335 bytes: 5,337 tokens) and the kept items (each ceil(JSON bytes / 4)) it leaves the compaction item's
estimate — 4,657, 3,392, 2,221, 2,296 and 3,188 tokens for 222,146, 228,500, 222,103, 213,921 and 213,133
tokens compacted: 2.1%, 1.5%, 1.0%, 1.1%, 1.5%; the median is 1.48% (tests/strategies/test_openai_compaction.py
recomputes it when the files are there). ``compact_threshold`` is required by the API and has no default:
0 takes 90% of the input limit, Codex's default auto-compact limit (``window * 9 / 10``). "Crosses" is read
as strictly over. The server's compaction prompt is not public: the request carries Codex's
``templates/compact/prompt.md`` as a stand-in (offline summarizers read only the span).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.errors import UsageError
from compbench.sdk import Action, Compact, Insert, Keep, Message, SessionView, Slot, SummaryRequest, Text, Usage, Wake
from compbench.sdk.registry import param, strategy
from compbench.strategies.codex import CURRENT_COMPACT_PROMPT

COMPRESSION_RATIO = 0.015  # ../shared/real-compactions/codex: median item estimate / tokens compacted (1.48%)
AUTO_COMPACT_PERCENT = 90  # codex openai_model_info.rs: auto_compact_token_limit = window * 9 / 10


@dataclass(frozen=True)
class OpenAICompactionParams:
    compact_threshold: int = param(0, "context_management compact_threshold: compact when a request's tokens are over it (0: 90% of the input limit, Codex's default).")
    compression_ratio: float = param(COMPRESSION_RATIO, "The opaque item's size as a share of the tokens it replaces (measured on real Codex remote compactions).", hi=1)


class OpenAICompaction:
    name = "openai-compaction"

    def __init__(self, p: OpenAICompactionParams) -> None:
        if not 0 < p.compression_ratio <= 1:
            raise UsageError("openai-compaction: compression_ratio must be in (0, 1]")
        self.p = p

    def threshold(self, s: SessionView) -> int:
        return self.p.compact_threshold or s.limits.input_limit * AUTO_COMPACT_PERCENT // 100

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.context_tokens <= self.threshold(s):
            return ()
        return (self.compact(s, "rendered tokens over compact_threshold"),)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        return Wake(tokens=self.threshold(s) + 1)

    def manual(self, s: SessionView) -> Compact:
        """``POST /responses/compact`` on the current history."""
        return self.compact(s, "/responses/compact")

    def compact(self, s: SessionView, reason: str) -> Compact:
        entries = s.entries
        head = 0
        while head < len(entries) and entries[head].role == "system":
            head += 1
        users = [e for e in entries[head:] if e.role == "user" and e.origin == "recorded"]
        kept = {e.id for e in users}
        replaced = [e for e in entries[head:] if e.id not in kept]
        items = [e for e in replaced if e.origin == "summary"]
        budget = max(1, math.ceil(self.p.compression_ratio * sum(e.tokens for e in replaced)))
        instructions = "\n\n".join(e.message.text for e in entries[:head])
        prompt = (*s.rendered(head), Message("openai-compaction-prompt", "user", (Text(CURRENT_COMPACT_PROMPT),)))
        request = SummaryRequest(instructions, prompt, tuple(e.rendered() for e in replaced), budget,
                                 items[-1].message.text if items else None, meta={"opaque": True})
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in entries[:head]), *(Keep(e.id) for e in users),
                                  Insert("assistant", with_summary=True, origin="summary",
                                         meta={"compaction_item": "encrypted"}))
        return Compact(reason, view, request, on_failure="unchanged",
                       meta={"threshold": self.threshold(s), "budget": budget})


@strategy("openai-compaction", params=OpenAICompactionParams,
          upstream="OpenAI Responses API compaction (docs; openai-python CompactedResponse) + openai/codex "
                 "compact_remote.rs @ 683f0a6",
          summary="over compact_threshold: all user messages verbatim + one opaque item sized 1.5% of what it "
                  "replaces (a modelled ratio)")
def openai_compaction(p: OpenAICompactionParams) -> OpenAICompaction:
    return OpenAICompaction(p)
