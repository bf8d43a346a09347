"""cline (legacy ContextManager at 9ee618111d58): maxAllowedSize per window, the trigger on the previous
request's total, duplicate file-read rewrites and the 30% rule, truncation of half / three quarters with
the alternation fix, the notice, the orphaned tool results, replay."""

from __future__ import annotations

import json

import pytest

from compbench.data.transcript import Message, Text, ToolResult, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Keep, ModelLimits, Prune, SessionView
from compbench.strategies import resolve
from compbench.strategies.cline import Cline, ClineParams
from compbench.strategies.cline_context import (
    CONTEXT_TRUNCATION_NOTICE,
    DUPLICATE_FILE_READ_NOTICE,
    max_allowed_size,
)
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

NOTE = DUPLICATE_FILE_READ_NOTICE


def at(messages: list[Message], counter: TokenCounter, total: int, window: int = 1_000) -> SessionView:
    v = view_of(messages, counter, ModelLimits(window, 100))
    v.last_usage = Usage(input=total - 10, output=10)
    return v


def pairs(n: int) -> list[Message]:
    """u0 a1, then n more messages alternating u/a (u2 a3 u4 ...)."""
    msgs: list[Message] = [user("u0", "fix the parser"), assistant("a1", "looking")]
    for k in range(2, n + 2):
        msgs.append(user(f"u{k}") if k % 2 == 0 else assistant(f"a{k}"))
    return msgs


def kept(actions: object) -> list[str]:
    (c,) = [a for a in actions if isinstance(a, Compact)]  # type: ignore[attr-defined]
    return [k.id for k in c.new_view if isinstance(k, Keep)]


@pytest.mark.parametrize(("window", "allowed"), [
    (64_000, 37_000), (128_000, 98_000), (200_000, 160_000),  # the three fixed buffers
    (32_000, 25_600), (1_000_000, 960_000), (100_000, 80_000), (0, 98_000),  # max(w - 40k, 0.8 w); 0 -> 128k
])
def test_max_allowed_size(window: int, allowed: float) -> None:
    assert max_allowed_size(window) == allowed


@pytest.mark.parametrize(("total", "acts"), [(97_999, False), (98_000, True), (98_001, True)])
def test_trigger_is_the_previous_total_at_max_allowed(chars4: TokenCounter, total: int, acts: bool) -> None:
    assert bool(Cline(ClineParams()).before_step(at(pairs(8), chars4, total, 128_000))) is acts


def test_trigger_counts_cache_reads_and_writes_in_the_total(chars4: TokenCounter) -> None:
    v = view_of(pairs(8), chars4, ModelLimits(128_000, 100))
    v.last_usage = Usage(input=97_990, output=10, cache_read=90_000, cache_write=7_990)  # input holds both
    assert Cline(ClineParams()).before_step(v)
    assert Cline(ClineParams()).before_step(view_of(pairs(8), chars4)) == ()  # no previous request


@pytest.mark.parametrize(("rest", "hidden"), [
    (2, []), (3, []), (4, ["u2", "a3"]), (7, ["u2", "a3"]), (8, ["u2", "a3", "u4", "a5"]),
])
def test_half_removes_floor_rest_over_4_times_2(chars4: TokenCounter, rest: int, hidden: list[str]) -> None:
    msgs = pairs(rest)
    out = Cline(ClineParams()).before_step(at(msgs, chars4, 800))
    if not hidden:
        assert out and all(isinstance(a, Prune) for a in out)  # only the notice
        return
    assert kept(out) == [m.id for m in msgs if m.id not in hidden]


@pytest.mark.parametrize(("total", "hidden"), [
    (1_600, ["u2", "a3", "u4", "a5"]),  # total / 2 == allowed: still half
    (1_601, ["u2", "a3", "u4", "a5", "u6", "a7"]),  # total / 2 > allowed: floor(8 * 3 / 4 / 2) * 2 = 6
])
def test_three_quarters_when_half_the_total_is_over(chars4: TokenCounter, total: int, hidden: list[str]) -> None:
    msgs = pairs(8)
    out = Cline(ClineParams()).before_step(at(msgs, chars4, total))
    assert kept(out) == [m.id for m in msgs if m.id not in hidden]
    assert [a.meta["keep"] for a in out if isinstance(a, Compact)] == ["half" if total == 1_600 else "quarter"]


def test_range_moves_back_to_end_on_an_assistant_message(chars4: TokenCounter) -> None:
    # a view that starts with an assistant message: odd positions are user messages
    msgs = [assistant("a0"), user("u1"), assistant("a2"), user("u3"), assistant("a4"), user("u5"), assistant("a6")]
    out = Cline(ClineParams()).before_step(at(msgs, chars4, 800))
    # rest = 5 -> remove 2 -> range [2, 3] ends on u3 (a user message) -> [2, 2]
    assert kept(out) == ["a0", "u1", "u3", "a4", "u5", "a6"]


def test_notice_on_the_first_assistant_once_and_orphaned_results_emptied(chars4: TokenCounter) -> None:
    msgs = [system(), user("u0", "task"), assistant("a1", "plan"),
            user("u2", "more"), assistant("a3", calls=[("c3", "bash", {"cmd": "ls"})]),
            Message("t4", "user", (ToolResult("c3", "bash", "a.py"), Text("env details"))),
            assistant("a5"), user("u6"), assistant("a7"), user("u8"), assistant("a9")]
    strat = Cline(ClineParams())
    p, c = strat.before_step(at(msgs, chars4, 800))
    assert isinstance(p, Prune) and p.targets == (("a1", 0, CONTEXT_TRUNCATION_NOTICE),)
    assert isinstance(c, Compact) and c.reason == "cline: truncation (half)" and c.request is None
    # rest = 8 groups (u2 .. a9): remove 4 -> u2 a3 t4 a5; the first message after is u6 (no results)
    assert c.new_view == (Keep("sys"), Keep("u0"), Keep("a1"), Keep("u6"), Keep("a7"), Keep("u8"), Keep("a9"))
    # after an earlier truncation, the first message after the range loses its tool results
    again = Cline(ClineParams())
    again.state.truncated = True
    later = [system(), user("u0", "task"), assistant("a1", "plan"),
             Message("t4", "user", (ToolResult("c3", "bash", "a.py"), Text("env details"))), assistant("a5")]
    (p2,) = again.before_step(at(later, chars4, 800))  # rest = 2: nothing removed, t4 emptied, notice set
    assert isinstance(p2, Prune) and p2.targets == (("a1", 0, CONTEXT_TRUNCATION_NOTICE), ("t4", 0, ""))
    (p3,) = again.before_step(at(later, chars4, 800))  # this hand-made view never got t4's mark applied
    assert isinstance(p3, Prune) and p3.targets == (("t4", 0, ""),)  # the notice is set once


def read_turn(k: int, path: str, body: str, header: bool = True) -> list[Message]:
    out = f"[read_file for '{path}'] Result:\n{body}" if header else body
    name = "read_file" if header else "Read"
    return [assistant(f"a{k}", calls=[(f"c{k}", name, {"file_path": path})]), tool(f"t{k}", f"c{k}", out, name)]


def test_duplicate_reads_rewritten_and_enough_savings_skip_truncation(chars4: TokenCounter) -> None:
    big = "x" * 4_000
    msgs = [user("u0", "task"), assistant("a1"), user("u2", "go"),
            *read_turn(3, "a.py", big), *read_turn(5, "b.py", "short"), *read_turn(7, "a.py", big + "y")]
    (p,) = Cline(ClineParams()).before_step(at(msgs, chars4, 800))
    assert isinstance(p, Prune) and p.targets == (("t3", 0, "[read_file for 'a.py'] Result:\n" + NOTE),)


def test_small_savings_rewrite_then_truncate(chars4: TokenCounter) -> None:
    msgs = [user("u0", "task " * 400), assistant("a1"), user("u2", "go"),
            *read_turn(3, "a.py", "x", header=False), *read_turn(5, "a.py", "y", header=False),
            user("u7"), assistant("a8")]
    p, notice, c = Cline(ClineParams()).before_step(at(msgs, chars4, 800))
    assert isinstance(p, Prune) and p.targets == (("t3", 0, NOTE),)  # Read tool: the notice alone
    assert isinstance(notice, Prune) and notice.reason == "cline: truncation notice"
    assert isinstance(c, Compact) and c.meta["percent_saved"] < 0.3


def test_file_mentions_and_final_file_content(chars4: TokenCounter) -> None:
    mention = '<file_content path="src/x.ts">\nconst a = 1\n</file_content>'
    write = ("[write_to_file for 'src/x.ts'] Result:\nsaved\n\n"
             '<final_file_content path="src/x.ts">\nconst a = 2\n</final_file_content>')
    msgs = [user("u0", "task"), assistant("a1"), user("u2", "see " + mention),
            assistant("a3", calls=[("c3", "write_to_file", {"path": "src/x.ts"})]), tool("t4", "c3", write),
            assistant("a5", calls=[("c5", "write_to_file", {"path": "src/x.ts"})]), tool("t6", "c5", write)]
    targets = {(t[0], t[1]): t[2] for a in Cline(ClineParams(min_percent_saved=0.0)).before_step(at(msgs, chars4, 800))
               if isinstance(a, Prune) and a.reason == "cline: duplicate file reads" for t in a.targets}
    assert targets == {
        ("u2", 0): f'see <file_content path="src/x.ts">{NOTE}</file_content>',
        ("t4", 0): write.replace("\nconst a = 2\n", f" {NOTE} "),
    }


def test_read_tools_parameter_and_no_dedupe(chars4: TokenCounter) -> None:
    msgs = [user("u0", "task"), assistant("a1"), user("u2", "go"),
            *read_turn(3, "a.py", "x" * 900, header=False), *read_turn(5, "a.py", "y", header=False)]
    assert isinstance(Cline(ClineParams()).before_step(at(msgs, chars4, 800))[0], Prune)
    out = Cline(ClineParams(read_tools=("cat",))).before_step(at(msgs, chars4, 800))
    assert not any(isinstance(a, Prune) and a.reason.endswith("file reads") for a in out)
    out = resolve("cline:dedupe=false").create().before_step(at(msgs, chars4, 800))
    assert [a.reason for a in out] == ["cline: truncation notice", "cline: truncation (half)"]


def test_replay_truncates_and_never_summarizes(chars4: TokenCounter) -> None:
    msgs: list[Message] = [user("u0", "fix it")]
    for k in range(1, 30):
        msgs += [assistant(f"a{k}", "w" * 40, calls=[(f"c{k}", "bash", {"cmd": json.dumps(k)})]),
                 tool(f"t{k}", f"c{k}", "o" * 200)]
    summ = MockSummarizer()
    tr = run(transcript(*msgs, assistant("end")), resolve("cline").create(), chars4, window=1_000,
             max_output=100, summarizer=summ)
    assert tr.compactions and summ.requests == []
    assert all(c.reason.startswith("cline: truncation") and c.phase == "before" for c in tr.compactions)
    assert tr.final_view[:2] == ("u0", "a1")
    assert max(s.input for s in tr.steps) < 1_000


@pytest.mark.parametrize(("rest", "hidden"), [
    (6, ["a2"]),  # floor(6 / 4) * 2 = 2 -> [a2, u3] ends on a user message -> [a2]
    (10, ["a2", "u3", "a4", "u5", "a6"]),  # quarter: floor(10 * 3 / 4 / 2) * 2 = 6 -> [a2 .. u7] -> [a2 .. a6]
])
def test_rounding_when_the_view_starts_with_an_assistant(chars4: TokenCounter, rest: int, hidden: list[str]) -> None:
    msgs = [assistant("a0"), user("u1")] + [assistant(f"a{k}") if k % 2 == 0 else user(f"u{k}")
                                           for k in range(2, rest + 2)]
    out = Cline(ClineParams()).before_step(at(msgs, chars4, 800 if rest == 6 else 1_601))
    assert kept(out) == [m.id for m in msgs if m.id not in hidden]


def saving_view(chars4: TokenCounter, first_read: int) -> SessionView:
    """Two reads of a.py, the first ``first_read`` characters long; 43 other characters of text."""
    msgs = [Message("u0", "user", (Text("t" * 13),)), Message("a1", "assistant", (Text("a" * 10),)),
            Message("u2", "user", (Text("g" * 10),))]
    for k, body in ((3, "x" * first_read), (5, "y" * 10)):
        call, result = read_turn(k, "a.py", body, header=False)
        msgs += [Message(call.id, "assistant", call.parts[1:]), result]  # the call alone, no text
    return at(msgs, chars4, 800)


def test_thirty_percent_saved_is_enough_to_skip_truncation(chars4: TokenCounter) -> None:
    # total = 43 + L, saved = L - len(NOTE) = L - 153: saved / total == 0.3 at L = 237
    assert (237 - len(NOTE)) / (43 + 237) == 0.3
    assert ClineParams().min_percent_saved == 0.3
    assert [type(a) for a in Cline(ClineParams()).before_step(saving_view(chars4, 237))] == [Prune]
    assert [type(a) for a in Cline(ClineParams()).before_step(saving_view(chars4, 236))] == [Prune, Prune, Compact]
