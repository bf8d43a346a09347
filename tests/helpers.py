"""Terse builders for hand-made sessions in strategy and loop tests."""

from __future__ import annotations

import json
from collections.abc import Sequence

from compbench.loop import ReplayConfig, Strategy, Trace, replay
from compbench.session import Entry, ModelLimits, SessionView
from compbench.summarizers import Summarizer
from compbench.summarizers.mock import MockSummarizer
from compbench.tokens import TokenCounter
from compbench.transcript import Message, Part, Text, ToolCall, ToolResult, Transcript, Usage


def user(id: str, text: str = "") -> Message:
    return Message(id, "user", (Text(text or f"user says {id}"),))


def system(id: str = "sys", text: str = "You are a coding agent.") -> Message:
    return Message(id, "system", (Text(text),))


def assistant(id: str, text: str = "", calls: Sequence[tuple[str, str, dict[str, object]]] = ()) -> Message:
    parts: list[Part] = [Text(text or f"assistant says {id}")]
    parts += [ToolCall(cid, name, json.dumps(args)) for cid, name, args in calls]
    return Message(id, "assistant", tuple(parts))


def tool(id: str, call_id: str, output: str, name: str = "bash", is_error: bool = False) -> Message:
    return Message(id, "tool", (ToolResult(call_id, name, output, is_error),))


def transcript(*messages: Message, id: str = "t") -> Transcript:
    return Transcript(id, "compbench", tuple(messages))


def view_of(messages: Sequence[Message], counter: TokenCounter, limits: ModelLimits | None = None,
            system_tokens: int = 0) -> SessionView:
    """A SessionView over recorded messages, as the loop would build it before the next step."""
    entries = []
    for i, m in enumerate(messages):
        counts = counter.parts(m)
        entries.append(Entry(m, counter.message(m, counts), counts, "recorded", i))
    v = SessionView(entries, limits or ModelLimits(128_000, 4_096), counter, system_tokens)
    v.context_tokens = sum(e.tokens for e in entries) + system_tokens
    return v


def run(t: Transcript, strategy: Strategy, counter: TokenCounter, window: int = 128_000, max_output: int = 4_096,
        summarizer: Summarizer | None = None, system_tokens: int = 0) -> Trace:
    return replay(t, strategy, summarizer or MockSummarizer(), ReplayConfig(ModelLimits(window, max_output),
                                                                          system_tokens), counter)


__all__ = ["Usage", "assistant", "run", "system", "tool", "transcript", "user", "view_of"]
