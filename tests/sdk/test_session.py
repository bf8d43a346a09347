"""compbench.sdk.session's Wake, named: ``Wake.never()`` is ``Wake()`` (asked once, then never while the view only
grows), ``Wake.next_question()`` is ``Wake(step=0)`` (asked every question, as without a wake), and
``asking_every_question()`` replays as if no strategy had one. Counted on a replay of a hand-made session."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from compbench.sdk import (
    NEVER,
    NEXT_QUESTION,
    Action,
    ModelLimits,
    SessionView,
    Usage,
    Wake,
    asking_every_question,
    capabilities,
    wake_of,
)
from compbench.testing import assistant, replay, transcript, user

STEPS = 5
SESSION = transcript(*[m for k in range(STEPS) for m in (user(f"u{k}"), assistant(f"a{k}"))])


class Asked:
    """Answers nothing; counts the questions it is asked; its wake is ``answer`` (None: it has none)."""

    name = "asked"

    def __init__(self, answer: Wake | None) -> None:
        self.before = self.after = 0
        if answer is not None:
            self.wake = lambda s: answer

    def before_step(self, s: SessionView) -> Sequence[Action]:
        self.before += 1
        return ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        self.after += 1
        return ()


def asked(answer: Wake | None) -> tuple[int, int]:
    s = Asked(answer)
    replay(s, SESSION, limits=ModelLimits(64_000, 4_096))
    return s.before, s.after


def test_the_named_wakes_are_the_constants() -> None:
    assert Wake.never() == Wake() == NEVER and Wake.never().is_never
    assert Wake.next_question() == Wake(step=0) == NEXT_QUESTION and not Wake.next_question().is_never
    assert not Wake(tokens=0).is_never and not Wake(user=True).is_never


@pytest.mark.parametrize(("answer", "questions"), [
    (None, (STEPS, STEPS)),  # no wake: asked before and after every step
    (Wake.next_question(), (STEPS, STEPS)),  # the same, with a wake
    (Wake.never(), (1, 0)),  # asked before the first step, then never
    (Wake(step=3), (3, 2)),  # before step 0, then every question from step 3 on (steps 3 and 4 of 0-4)
])
def test_a_wake_decides_the_questions_asked(answer: Wake | None, questions: tuple[int, int]) -> None:
    assert asked(answer) == questions


def test_asking_every_question_ignores_every_wake_inside_the_block_only() -> None:
    s = Asked(Wake.never())
    assert "wake" in capabilities(s) and wake_of(s) is not None
    with asking_every_question():
        assert wake_of(s) is None
        assert asked(Wake.never()) == (STEPS, STEPS)
    assert wake_of(s) is not None and asked(Wake.never()) == (1, 0)
    with pytest.raises(RuntimeError), asking_every_question():
        raise RuntimeError("a failing test inside the block")
    assert wake_of(s) is not None  # restored on the way out
