"""compbench.testing, the strategy author's kit: a view from messages, a replay's trace, the with-and-without-wake
check (which must find a wake one question late, and a strategy that keeps state from questions it was not asked)
and the actions-only watch (which must find a hook that changes the view, edits a message or answers with
something else)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest

from compbench.sdk import (
    NEVER,
    Action,
    Keep,
    ModelLimits,
    SessionView,
    Transcript,
    Usage,
    Wake,
    capabilities,
    param,
    resolve,
    strategy,
)
from compbench.sdk.registry import STRATEGIES
from compbench.store.columns import Table
from compbench.strategies.example_keep_last import KeepLast, KeepLastParams
from compbench.testing import (
    Watched,
    acted,
    assert_wake_exact,
    assistant,
    counter,
    replay,
    samples,
    table_differences,
    tool,
    transcript,
    untouched,
    user,
    view,
    wake_differences,
)

CHARS = counter("chars4")


def test_a_view_is_what_the_loop_shows_before_the_next_step() -> None:
    msgs = [user("u", "x" * 400), assistant("a", "y" * 40, calls=[("c", "bash", {"cmd": "ls"})]), tool("t", "c", "z")]
    v = view(msgs, counting=CHARS, system_tokens=7, limits=ModelLimits(10_000, 1_000))
    assert [e.id for e in v.entries] == ["u", "a", "t"] and [e.index for e in v.entries] == [0, 1, 2]
    assert v.context_tokens == sum(e.tokens for e in v.entries) + 7
    assert v.entries[0].tokens == CHARS.message(msgs[0])  # 400 characters: 100 tokens and the message overhead
    assert v.step == 1 and v.last_usage is None and v.limits.context_window == 10_000
    assert view([user("u")]).step == 0


def test_the_samples_are_the_bundled_dataset() -> None:
    data = samples()
    assert len(data) == 14 and len({t.source for t in data}) == 5


def test_a_replay_of_a_spec_a_configuration_or_an_instance_is_the_same() -> None:
    t = transcript(*[m for k in range(20) for m in (user(f"u{k}", "q" * 800), assistant(f"a{k}", "r" * 800))])
    limits = ModelLimits(64_000, 4_096)
    spec = "example-keep-last:preset=1.2,trigger=2000"
    by_spec = replay(spec, t, limits=limits)
    assert acted(by_spec) >= 2
    assert replay(resolve(spec), t, limits=limits) == by_spec
    assert replay(KeepLast(KeepLastParams(trigger=2000)), t, limits=limits) == by_spec


def test_table_differences_take_nan_for_nan_and_name_the_first_row_that_differs() -> None:
    a, b = Table(), Table()
    for x, y in ((1.0, 1.0), (math.nan, math.nan), (3, 4)):
        a.append({"v": x})
        b.append({"v": y})
    assert table_differences({"results": a}, {"results": b}, ("left", "right")) == ["results.v row 2: 3 left, 4 right"]
    c = Table()
    c.append({"v": 1.0})
    assert table_differences({"results": a}, {"results": c}) == ["results: 3 rows a, 1 b"]
    assert table_differences({"results": a}, {"results": a}) == []


# --- the wake check -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LateParams:
    trigger: int = param(30_000, "Context tokens at which it compacts.")
    late: int = param(0, "How many tokens after its trigger its wake says it could act.")


class LateWake(KeepLast):
    """The example with a wake ``late`` tokens after its trigger (0: exact)."""

    name = "test-late-wake"

    def __init__(self, p: LateParams) -> None:
        super().__init__(KeepLastParams(trigger=p.trigger))
        self.late = p.late

    def wake(self, s: SessionView) -> Wake:
        return Wake(tokens=self.p.trigger + self.late)


class OverAfterTheStep(KeepLast):
    """A realistic mistake: over the trigger it says never, but a wake is also asked after a step, when the
    reply may have just crossed the trigger (before_step, which acts, has not been asked yet)."""

    name = "test-never-over"

    def wake(self, s: SessionView) -> Wake:
        return Wake(tokens=self.p.trigger) if s.context_tokens < self.p.trigger else NEVER






class Counting(KeepLast):
    """Compacts at its 40th question: its state is the questions it was asked, so a wake changes it."""

    name = "test-counting"

    def __init__(self, p: KeepLastParams) -> None:
        super().__init__(p)
        self.asked = 0

    def before_step(self, s: SessionView) -> Sequence[Action]:
        self.asked += 1
        return super().before_step(s) if self.asked >= 40 else ()

    def wake(self, s: SessionView) -> Wake:
        return Wake(tokens=1_000_000)


@pytest.fixture(scope="module", autouse=True)
def _registered() -> Iterator[None]:
    """This module's strategies, registered for its tests only (registered on import, they would stay for every
    later test module, and a run of every strategy would replay them)."""
    made = {"test-late-wake": (LateParams, LateWake), "test-never-over": (KeepLastParams, OverAfterTheStep),
            "test-counting": (KeepLastParams, Counting), "test-bad": (BadParams, Bad)}
    for name, (params, cls) in made.items():
        strategy(name, params=params, source="t", summary="t")(cls)
    yield
    for name in made:
        STRATEGIES.unregister(name)


@pytest.fixture(scope="module")
def claude() -> list[Transcript]:
    """The three Claude Code samples: the example's trigger is reached on two of them."""
    return [t for t in samples() if t.source == "claude-code"]


def test_an_exact_wake_has_no_differences(claude: list[Transcript]) -> None:
    assert wake_differences("test-late-wake:late=0", claude) == []


@pytest.mark.parametrize("late", [0, 1, 2_000])
def test_a_wake_late_by_a_token_at_a_context_reached_is_found(claude: list[Transcript], late: int) -> None:
    """The trigger exactly at a context the replay reaches before a step: a wake one token later misses it."""
    t = claude[1]
    steps = replay("none", t).steps
    reached = steps[len(steps) // 2].input
    spec = f"test-late-wake:trigger={reached},late={late}"
    found = wake_differences(spec, [t])
    if late == 0:
        assert found == []
        assert_wake_exact(spec, [t])
        return
    assert found and all(d.startswith(t.id) and "asked every question" in d and "with its wake" in d for d in found)
    with pytest.raises(AssertionError, match="the wake is not exact"):
        assert_wake_exact(spec, [t])


def test_a_wake_that_forgets_the_question_after_a_step_is_found(claude: list[Transcript]) -> None:
    assert wake_differences("test-never-over", claude)


def test_state_kept_from_questions_it_was_not_asked_is_found(claude: list[Transcript]) -> None:
    assert wake_differences("test-counting:trigger=1000", claude)


# --- the actions-only watch -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class BadParams:
    how: str = param("none", "What it does wrong: none, view, message, answer.")


class Bad:
    """Acts on its 3rd question the wrong way."""

    name = "test-bad"

    def __init__(self, p: BadParams) -> None:
        self.how, self.asked = p.how, 0

    def before_step(self, s: SessionView) -> Sequence[Action]:
        self.asked += 1
        if self.asked != 3:
            return ()
        if self.how == "view":
            s.context_tokens = 0  # a strategy that "frees" tokens by editing the view
        elif self.how == "message":
            s.entries[-1].message.meta["seen"] = True  # type: ignore[index]  # a Mapping that is a dict
        elif self.how == "answer":
            return [Keep(s.entries[0].id)]  # type: ignore[list-item]  # a slot, not an action
        return ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


def hand_made() -> list[Transcript]:
    return [transcript(*[m for k in range(6) for m in (user(f"u{k}"), assistant(f"a{k}"))], id="hand-made")]


@pytest.mark.parametrize(("how", "said"), [
    ("none", None), ("view", "test-bad.before_step changed the view it was shown"),
    ("message", "the recorded messages changed during the replay"),
    ("answer", "test-bad.before_step answered list, not a sequence of Compact or Prune")])
def test_untouched_finds_what_is_not_an_action(how: str, said: str | None) -> None:
    found = untouched(f"test-bad:how={how}", hand_made(), limits=ModelLimits(64_000, 4_096))
    if said is None:
        assert found == []
    else:
        assert found and all(x.startswith("hand-made:") for x in found) and any(said in x for x in found)


def test_a_watched_strategy_keeps_its_capabilities_and_its_stages_are_watched() -> None:
    plain = resolve("example-keep-last").create()
    assert capabilities(Watched(plain, [], "")) == capabilities(plain) == {"wake"}
    composed = resolve("gemini-cli").create()
    problems: list[str] = []
    stages = Watched(composed, problems, "").stages
    assert stages and all(isinstance(s, Watched) for s in stages)
    assert capabilities(Watched(composed, [], "")) == capabilities(composed)
