"""The stand-in for Codex's redacted reasoning blobs (compbench.run.missing_usage): one blob an item, cumulative items
(each summary begins with the one before) each at the share of the call's reasoning its summary reached, and the
trigger counting each of them (hand-made sessions)."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Part, Reasoning, Text, ToolCall, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.run.missing_usage import blob_chars, complete, item_blobs
from compbench.sdk.session import ModelLimits
from compbench.strategies import resolve
from compbench.strategies.codex import reasoning_item_tokens
from helpers import tool, user, view_of

REDACTED = Reasoning("", encrypted=True)  # the importer's placeholder where a checkpoint tool wrote REDACTED


def call(id: str, *summaries: str | None, reasoning: int = 0, usage: Usage | None = None) -> Message:
    """A model call whose response holds one reasoning item a summary (None: an item with no summary), each
    followed by a preamble message, then a tool call."""
    parts: list[Part] = []
    for s in summaries:
        parts += [Reasoning(s)] if s else []
        parts += [REDACTED, Text(f"preamble {id}")]
    parts.append(ToolCall(f"c{id}", "exec", "tools.exec_command({cmd: 'ls'})"))
    return Message(id, "assistant", tuple(parts), usage or Usage(input=1_000, output=100, reasoning=reasoning))


@pytest.mark.parametrize(("summaries", "shares"), [
    (("**A**", "**A**\n**B**"), (5 / 11, 1.0)),  # cumulative: the first reached 5 of the second's 11 characters
    (("**A**\n**B**", "**A**\n**B**"), (1.0, 1.0)),  # the same summary twice: each carries it all
    (("**A**", "**A**\n**B**", "**A**\n**B**\n**C**"), (5 / 17, 11 / 17, 1.0)),
    (("**A**", "**B**"), (1.0, 0.0)),  # not repeated: a slice each, the first stands for the call
    (("**A**", None), (1.0, 0.0)),  # the later item has no summary: nothing says it repeats
    ((None, "**A**"), (1.0, 0.0)),  # an earlier item without a summary
    ((None, None), (1.0, 0.0)),
    (("**A**",), (1.0,)),
    ((), (1.0,)),  # no item recorded at all (0.140-0.142): one blob for the call's reasoning
])
def test_item_blobs_follow_the_summaries(summaries: tuple[str | None, ...], shares: tuple[float, ...]) -> None:
    m = call("a", *summaries, reasoning=600)
    assert item_blobs(m, 600) == [blob_chars(round(600 * s)) for s in shares]


def test_completion_stands_in_each_item_of_a_cumulative_call() -> None:
    t = Transcript("t", "codex", (user("u1"), call("a1", "**A**", "**A**\n**B**", reasoning=440)),
                   meta={"reasoning_redacted": 2})
    filled, _ = complete(t)
    blobs = [len(p.text) for p in filled.messages[1].parts if isinstance(p, Reasoning) and p.encrypted and p.text]
    assert blobs == [blob_chars(200), blob_chars(440)]


# --- the trigger: an earlier turn's cumulative call, then a call at, just below and just above the limit ------------


def session(reported: int) -> list[Message]:
    """An earlier turn with one cumulative call (440 reasoning tokens, its first item at 5/11), a new prompt, then a
    call whose reported total is ``reported`` and its exec output (pending)."""
    return [user("u1"), call("a1", "**A**", "**A**\n**B**", reasoning=440), tool("t1", "ca1", "ok", name="exec"),
            user("u2"), call("a2", usage=Usage(input=reported, output=0)), tool("t2", "ca2", "o" * 400, name="exec")]


def counted_extra(chars4: TokenCounter) -> tuple[int, int]:
    """(the reasoning estimate of the earlier turn, the pending output) as today's Codex counts them."""
    filled, _ = complete(Transcript("t", "codex", tuple(session(0)), meta={"reasoning_redacted": 2}))
    c = resolve("codex:preset=current").create()
    v = view_of(filled.messages, chars4, ModelLimits(272_000, 128_000))
    return c.reasoning_tokens(v, c.held_from(v)), c.pending_tokens(v)


def test_the_cumulative_call_counts_both_items(chars4: TokenCounter) -> None:
    reasoning, _ = counted_extra(chars4)
    both = reasoning_item_tokens("A" * blob_chars(200)) + reasoning_item_tokens("A" * blob_chars(440))
    sliced = reasoning_item_tokens("A" * blob_chars(440)) + reasoning_item_tokens("A" * blob_chars(0))
    # the first item at 200 reasoning tokens (255 counted), not at its envelope (16)
    assert (reasoning, both, sliced) == (796, 255 + 541, 541 + 16)


@pytest.mark.parametrize(("offset", "fires"), [(-1, False), (0, True), (1, True)])
def test_the_counted_items_push_the_count_over_the_limit(chars4: TokenCounter, offset: int, fires: bool) -> None:
    """244,800 = 90% of 272,000: the call's reported total + every earlier item's blob + the pending output."""
    reasoning, pending = counted_extra(chars4)
    reported = 244_800 - reasoning - pending + offset
    filled, _ = complete(Transcript("t", "codex", tuple(session(reported)), meta={"reasoning_redacted": 2}))
    v = view_of(filled.messages, chars4, ModelLimits(272_000, 128_000))
    v.last_usage = Usage(input=reported, output=0)
    assert bool(resolve("codex:preset=current").create().before_step(v)) is fires
