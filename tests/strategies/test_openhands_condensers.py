"""OpenHands' model-free condensers: recent events, amortized forgetting, conversation window, observation and
browser-output masking; and the LLM-attention condenser, refused offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.data.transcript import Message
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Keep, ModelLimits, Prune
from compbench.strategies import get, resolve, runnable
from compbench.strategies.openhands_condensers import (
    AmortizedForgetting,
    AmortizedParams,
    BrowserOutput,
    BrowserOutputParams,
    ConversationWindow,
    ConversationWindowParams,
    ObservationMasking,
    ObservationMaskingParams,
    RecentEvents,
    RecentEventsParams,
)
from helpers import assistant, main_cli, one_line_error, run, system, tool, transcript, user, view_of


def calls(n: int, name: str = "bash", first: int = 0) -> list[Message]:
    out: list[Message] = []
    for k in range(first, first + n):
        out += [assistant(f"a{k}", f"step {k}", [(f"c{k}", name, {"url": f"https://x.test/{k}"})]),
                tool(f"t{k}", f"c{k}", f"output {k}", name=name)]
    return out


def chat(n: int) -> list[Message]:
    """system + u1 (3 events with its recall) + n calls (2 events each): 4 + 2n events."""
    return [system("sys"), user("u1", "task"), *calls(n)]


def kept(act: object) -> list[str]:
    assert isinstance(act, Compact)
    return [s.id for s in act.new_view if isinstance(s, Keep)]


# --- recent events ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "acts"), [(3, False), (4, False), (5, True)])
def test_recent_events_keeps_first_and_newest(chars4: TokenCounter, n: int, acts: bool) -> None:
    # max_events 10 of 4 + 2n events: at 12, u1 and its RecallAction go, but u1 is put back (the 2nd event
    # is not a user message) and nothing else renders differently; at 14, a0 goes too and t0 cannot be sent
    out = RecentEvents(RecentEventsParams(1, 10)).before_step(view_of(chat(n), chars4))
    assert bool(out) is acts
    if out:
        assert kept(out[0]) == ["sys", "u1", "a1", "t1", "a2", "t2", "a3", "t3", "a4", "t4"]


def test_recent_events_defaults() -> None:
    assert resolve("openhands-recent-events").params == RecentEventsParams(1, 100, True)


# --- amortized forgetting -------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "acts"), [(3, False), (4, True)])
def test_amortized_forgetting_boundary_and_kept(chars4: TokenCounter, n: int, acts: bool) -> None:
    out = AmortizedForgetting(AmortizedParams(10, 1)).before_step(view_of(chat(n), chars4))  # 10 events: no
    assert bool(out) is acts
    if out:  # 12 > 10: keep system + the newest 10 // 2 - 1 = 4 events
        assert kept(out[0]) == ["sys", "u1", "a2", "t2", "a3", "t3"]  # u1 put back: the 2nd event is not a user's


def test_amortized_validation() -> None:
    with pytest.raises(UsageError, match="less than half"):
        AmortizedForgetting(AmortizedParams(10, 5))


# --- conversation window ---------------------------------------------------------------------------------


def test_conversation_window_only_on_a_condensation_request(chars4: TokenCounter) -> None:
    cw = ConversationWindow(ConversationWindowParams())
    assert cw.before_step(view_of(chat(6), chars4)) == ()
    v = view_of(chat(6), chars4, ModelLimits(20, 5))  # the prompt is over the input limit
    (c,) = cw.before_step(v)
    # 16 events, 4 essential (system, u1, its recall pair): keep 12 // 2 = 6 newest, from a3
    assert kept(c) == ["sys", "u1", "a3", "t3", "a4", "t4", "a5", "t5"]


def test_conversation_window_skips_a_dangling_observation(chars4: TokenCounter) -> None:
    msgs = [*chat(6), user("u2", "more")]  # 18 events: the newest 14 // 2 = 7 start at t3, an observation
    v = view_of(msgs, chars4, ModelLimits(20, 5))
    (c,) = ConversationWindow(ConversationWindowParams()).before_step(v)
    assert kept(c) == ["sys", "u1", "a4", "t4", "a5", "t5", "u2"]


# --- masking ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("window", "masked"), [(7, []), (6, ["t0"]), (4, ["t0", "t1"])])
def test_observation_masking_window(chars4: TokenCounter, window: int, masked: list[str]) -> None:
    # 4 + 2 x 4 = 12 events; t0 is event 5, t1 event 7: masked when i < 12 - window
    out = ObservationMasking(ObservationMaskingParams(window)).before_step(view_of(chat(4), chars4))
    got = sorted({t[0] for a in out if isinstance(a, Prune) for t in a.targets if t[2] == "<MASKED>"})
    assert got == masked


def test_a_masked_observation_takes_its_call_with_it(chars4: TokenCounter) -> None:
    (p,) = ObservationMasking(ObservationMaskingParams(6)).before_step(view_of(chat(4), chars4))
    assert isinstance(p, Prune)
    # t0 becomes <MASKED> (a user message in OpenHands); a0 can no longer be completed: its text and call go
    assert set(p.targets) == {("t0", 0, "<MASKED>"), ("a0", 0, ""), ("a0", 1, "")}


def test_masking_replayed_masks_each_observation_once(chars4: TokenCounter) -> None:
    t = transcript(*chat(8), assistant("end", "ok"))
    tr = run(t, resolve("openhands-observation-masking:attention_window=6").create(), chars4)
    masked = [pid for p in tr.prunes for pid, _ in p.parts if pid.startswith("t")]
    assert len(masked) == len(set(masked)) and masked[:2] == ["t0", "t1"]


def test_browser_output_keeps_the_newest_and_names_the_url(chars4: TokenCounter) -> None:
    msgs = [system("sys"), user("u1", "browse"), *calls(3, name="browser")]
    (p,) = BrowserOutput(BrowserOutputParams()).before_step(view_of(msgs, chars4))
    assert isinstance(p, Prune)
    masks = {t[0]: t[2] for t in p.targets if t[0].startswith("t")}
    assert masks == {"t1": "Visited URL https://x.test/1\nContent omitted",
                     "t0": "Visited URL https://x.test/0\nContent omitted"}
    (p,) = resolve("openhands-browser-output:preset=server").create().before_step(view_of(msgs, chars4))
    assert isinstance(p, Prune) and {t[0] for t in p.targets if t[0].startswith("t")} == {"t0"}
    assert BrowserOutput(BrowserOutputParams()).before_step(view_of(chat(3), chars4)) == ()  # no browser tool


# --- LLM attention --------------------------------------------------------------------------------------


def test_llm_attention_is_refused_offline_and_left_out_of_runs() -> None:
    with pytest.raises(UsageError, match=r"needs a real model .* not supported offline"):
        resolve("openhands-llm-attention")
    assert get("openhands-llm-attention").params().max_size == 100  # still listed and shown
    assert "openhands-llm-attention" not in runnable() and "openhands-llm-summarizing" in runnable()


def test_a_run_asking_for_llm_attention_ends_in_one_line(capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, _, err = main_cli(capsys, monkeypatch, "run", "--strategy", "openhands-llm-attention",
                            "--out", tmp_path / "r")
    assert one_line_error(code, err).startswith("openhands-llm-attention needs a real model")
    assert not (tmp_path / "r").exists()
