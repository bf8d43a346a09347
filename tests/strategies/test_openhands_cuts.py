"""Two OpenHands behaviours read beside the sources: V0 cuts every observation to ``max_message_chars`` before the
model sees it (All-Hands-AI/OpenHands @ 156d068 ``memory/conversation_memory.py``, ``core/config/llm_config.py``),
in every V0 strategy and the ``openhands`` composition; V1's token trigger keeps the tail that brings the view
to half the token limit, and a condensation request follows only a real context-window error
(software-agent-sdk @ 611629e ``llm_summarizing_condenser.py``, ``agent/agent.py``)."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Transcript
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, ModelLimits, Prune
from compbench.strategies import resolve
from compbench.strategies.openhands_events import truncate_content
from helpers import assistant, run, system, tool, transcript, user, view_of

V0 = ["openhands-recent-events", "openhands-amortized-forgetting", "openhands-conversation-window",
      "openhands-observation-masking", "openhands-browser-output", "openhands-llm-summarizing",
      "openhands-llm-summarizing:preset=server", "openhands"]
LIMIT = 30_000  # LLMConfig.max_message_chars


def output(n: int) -> str:
    """``n`` characters whose head and tail differ, so a middle cut shows."""
    body = "".join(f"line {k:06d}\n" for k in range(n // 12 + 1))
    return ("HEAD" + body)[: n - 4] + "TAIL"


def session(out: str, name: str = "execute_bash", args: dict[str, object] | None = None) -> Transcript:
    return transcript(system("sys", "You are OpenHands agent."), user("u0", "fix the failing test"),
                      assistant("a1", "Run it.", calls=[("c1", name, args or {"command": "pytest"})]),
                      tool("t1", "c1", out, name=name), assistant("a2", "Done."))


def seen(t: Transcript, spec: str, counter: TokenCounter, window: int = 1_000_000) -> int:
    """The prompt the model is sent at the call after the observation."""
    return run(t, resolve(spec).create(), counter, window=window).steps[1].input


@pytest.mark.parametrize("spec", V0)
@pytest.mark.parametrize(("extra", "cut"), [(-1, False), (0, False), (1, True)])
def test_every_v0_strategy_cuts_an_observation_past_max_message_chars(chars4: TokenCounter, spec: str, extra: int,
                                                                      cut: bool) -> None:
    out = output(LIMIT + extra)
    trace = run(session(out), resolve(spec).create(), chars4, window=1_000_000)
    cuts = [p for p in trace.prunes if p.reason == "max_message_chars"]
    assert bool(cuts) is cut
    expected = truncate_content(out, LIMIT)
    assert (expected != out) is cut
    # what the model is sent is exactly the recorded output cut in the middle (first and last 15,000 chars)
    assert trace.steps[1].input == seen(session(expected), "none", chars4)
    if cut:
        assert cuts[0].step == 1 and cuts[0].parts == (("t1", 0),)
        assert expected.startswith("HEAD") and expected.endswith("TAIL") and len(expected) == LIMIT + 47


@pytest.mark.parametrize("spec", ["openhands-llm-summarizing:preset=v1", "openhands-llm-summarizing:preset=v1-agent",
                                  "openhands-llm-summarizing:max_message_chars=-1"])
def test_v1_and_a_negative_limit_never_cut(chars4: TokenCounter, spec: str) -> None:
    out = output(LIMIT + 5_000)
    assert seen(session(out), spec, chars4) == seen(session(out), "none", chars4)


@pytest.mark.parametrize(("name", "args", "cut"), [
    ("browser", {"code": "goto('https://example.com')"}, False),  # a BrowserOutputObservation
    ("str_replace_editor", {"command": "view", "path": "/w/a.py"}, False),  # a FileReadObservation
    ("str_replace_editor", {"command": "create", "path": "/w/a.py"}, True),  # a FileEditObservation
    ("mcp_search", {"q": "x"}, True)])  # an MCPObservation
def test_which_observations_are_cut(chars4: TokenCounter, name: str, args: dict[str, object], cut: bool) -> None:
    out = output(LIMIT + 1_000)  # (just past the limit the cut is longer: 30,000 kept + the 47-character notice)
    t = session(out, name, args)
    assert (seen(t, "openhands", chars4) < seen(t, "none", chars4)) is cut


def test_an_overflow_is_judged_on_the_cut_prompt(chars4: TokenCounter) -> None:
    """ConversationWindow acts on the provider's context-window error, which comes from the prompt it was sent:
    the cut one. A window the uncut prompt overflows and the cut one fits: no condensation."""
    out = output(200_000)
    t = session(out)
    uncut, cut = seen(t, "none", chars4), seen(session(truncate_content(out, LIMIT)), "none", chars4)
    for window, condenses in ((cut + 1, False), (cut, False), (cut - 1, True)):
        trace = run(t, resolve("openhands-conversation-window").create(), chars4, window=window)
        assert bool(trace.compactions) is condenses, window
    assert uncut > cut + 1  # the uncut prompt would have overflowed every one of these windows


# --- V1: the token trigger and the condensation request ------------------------------------------------------


def heavy() -> list[Message]:
    """system, user, then 10 calls: the first two results large (3,000 tokens each with chars4), the rest small."""
    msgs: list[Message] = [system("sys", "S" * 40), user("u0", "fix the bug")]
    for k in range(1, 11):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "terminal", {"k": k})]),
                 tool(f"t{k}", f"c{k}", ("x" * 12_000) if k <= 2 else "ok " * 10, name="terminal")]
    return msgs


def v1_at(counter: TokenCounter, delta: int, **over: object) -> list[object]:
    """The V1 condenser's actions on :func:`heavy` with the input limit ``delta`` tokens under the prompt."""
    probe = view_of(heavy(), counter)
    limit = probe.context_tokens - delta
    spec = "openhands-llm-summarizing:preset=v1" + "".join(f",{k}={v}" for k, v in over.items())
    return list(resolve(spec).create().before_step(view_of(heavy(), counter, ModelLimits(limit, 100))))


@pytest.mark.parametrize(("delta", "acts"), [(-1, False), (0, False), (1, True)])
def test_v1_token_trigger_keeps_what_halves_the_tokens_not_half_the_events(chars4: TokenCounter, delta: int,
                                                                           acts: bool) -> None:
    actions = v1_at(chars4, delta)
    assert bool(actions) is acts
    if acts:
        (c,) = actions
        assert isinstance(c, Compact) and c.reason == "condensation: tokens"
        # forgetting the two large results (4 events of 22) brings the view under half the limit; half the
        # events (a request's rule: 22 // 2 - 2 - 1 = 8 kept) would also have forgotten calls 3-7
        assert c.meta["forgotten"] == 4
        kept = [getattr(x, "id", "") for x in c.new_view]
        assert "a3" in kept and "t3" in kept and "a2" not in kept


def test_v1_requests_only_after_a_real_context_window_error(chars4: TokenCounter) -> None:
    # the agent LLM's limit unknown to the condenser (no max_input_tokens, no model info): the call is sent,
    # refused, and the CondensationRequest keeps half the view
    (c,) = v1_at(chars4, 1, model_limit="false")
    assert isinstance(c, Compact) and c.reason == "condensation: request"
    assert c.meta["forgotten"] == 22 - (22 // 2 - 2 - 1) - 2
    assert v1_at(chars4, 0, model_limit="false") == []
    # a max_tokens of its own still triggers before any error: tokens alone
    (c,) = v1_at(chars4, 1, model_limit="false", max_tokens=view_of(heavy(), chars4).context_tokens - 1)
    assert isinstance(c, Compact) and c.reason == "condensation: tokens" and c.meta["forgotten"] == 4


def test_the_cut_is_a_prune_the_first_time_only(chars4: TokenCounter) -> None:
    strat = resolve("openhands-llm-summarizing:preset=seed").create()
    msgs = list(session(output(LIMIT + 1)).messages[:4])
    first = list(strat.before_step(view_of(msgs, chars4, ModelLimits(1_000_000, 100))))
    assert len(first) == 1 and isinstance(first[0], Prune) and first[0].targets[0][2] == truncate_content(
        msgs[3].tool_results()[0].output, LIMIT)


def test_a_cut_observation_is_still_masked_later(chars4: TokenCounter) -> None:
    """The cut is what the model is sent while the observation is in the attention window; outside it, the
    observation is masked like any other (a prune that replaces the cut)."""
    msgs = list(session(output(LIMIT + 5_000)).messages[:4])
    for k in range(2, 6):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "execute_bash", {"k": k})]), tool(f"t{k}", f"c{k}", "ok")]
    trace = run(transcript(*msgs, assistant("end", "done")),
                resolve("openhands-observation-masking:attention_window=4").create(), chars4, window=1_000_000)
    cut = next(p for p in trace.prunes if p.reason == "max_message_chars")
    masked = next(p for p in trace.prunes if ("t1", 0) in p.parts and p.reason == "observation-masking")
    assert cut.step < masked.step and masked.tokens_hidden > 7_000  # the cut's ~7,500 tokens go with the mask
    assert trace.steps[-1].input < 200
