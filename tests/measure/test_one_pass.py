"""One pass per transcript: what the engine derives once from a transcript's parts answers as the per-part
work it replaces did (the same facts found, the same text a summarizer saw, the same token counts), and what no
replay needs is never built.

Hand-made parts, each at and around the edges the shared pass takes: an anchor at the start and end of a part,
one that would span two parts, an empty text and one of whitespace, an empty anchor, a pruned call."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compbench.data.facts import Fact, normalize
from compbench.data.transcript import Media, Message, Reasoning, Text, ToolCall, ToolResult, Transcript
from compbench.measure.facts.presence import EventOutcome, FactIndex, Matcher, PresenceTracker, _placed
from compbench.measure.reacquire import ContentTracker, Trackers
from compbench.measure.token_correction import Correction
from compbench.measure.tokens import TokenCounter
from compbench.measure.workset import WorkingSet, later
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Entry, ModelLimits
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, tool, transcript, user


def _fact(fid: str, *anchors: str) -> Fact:
    return Fact(fid, "artifact", fid, anchors)


TEXTS = ["src/app.py at the start", "it ends in src/app.py", "", "   \n\t ", "SRC\\APP.PY twice src/app.py",
         "split src/", "app.py over two", "nothing here", "line one\nline two", "app.py"]
FACTS = [_fact("path", "src/app.py"), _fact("tail", "app.py"), _fact("spans", "src/ app.py"),
         _fact("newline", "one\nline"), _fact("words", "one line two"), _fact("ends", "two"),
         _fact("whole", "split src/")]


def test_facts_found_over_the_parts_joined_are_each_parts_own() -> None:
    """One search per anchor over the parts joined finds what a search per part found: a newline joins them and
    no normalized text holds one, so nothing is found across two parts (``src/ app.py`` spans parts 5 and 6)."""
    matcher = Matcher(FACTS)
    joined = matcher.facts_in_parts(TEXTS, [normalize(x) for x in TEXTS])
    alone = [Matcher(FACTS).facts_in(x) for x in TEXTS]
    assert joined == alone
    assert joined[0] == {"path", "tail"} and joined[5] == {"whole"} and joined[6] == {"tail", "ends"}
    assert joined[2] == joined[3] == frozenset() and "spans" not in set().union(*joined)
    assert joined[8] == {"words", "ends"}  # the newline folded: "line one line two"


def test_an_empty_anchor_is_in_every_text_but_an_empty_one_as_before() -> None:
    facts = [_fact("empty", ""), _fact("path", "src/app.py")]
    joined = Matcher(facts).facts_in_parts(TEXTS, [normalize(x) for x in TEXTS])
    assert joined == [Matcher(facts).facts_in(x) for x in TEXTS]
    assert joined[2] == frozenset() and joined[3] == {"empty"}  # whitespace is a text; nothing is none


def test_without_facts_nothing_is_found_and_the_parts_are_still_normalized_once() -> None:
    t = transcript(user("u", "Look at SRC\\App.py"), assistant("a", "ok", [("c", "read", {"path": "x.py"})]))
    index = FactIndex.build(t, [])
    assert index.part_facts == ((frozenset(),), (frozenset(), frozenset()))
    assert index.part_norms == (("look at src/app.py",), ("ok", "read x.py"))


def _entries(messages: list[Message], counter: TokenCounter) -> list[Entry]:
    return [Entry(m, counter.message(m), counter.parts(m), index=i) for i, m in enumerate(messages)]


MESSAGES = [user("u0", "Look at SRC\\Auth\\Login.py please"),
            assistant("a1", "src/auth/ then", [("c1", "grep", {"pattern": "secret_token in src/keys.py"})]),
            tool("t1", "c1", "login.py found"), user("u2", "   "),
            Message("a2", "assistant", (Reasoning("thinking of ghost.py"), Text("and ghost_two.py"))),
            tool("t2", "c1", "old/output.py was here")]
WANTED = {"src/auth/login.py", "then login.py", "src/auth/ then", "ghost.py", "ghost_two.py", "src/keys.py",
          "old/output.py", "[pruned]", "[args pruned]", "grep [args pruned]", "auth/ then\nlogin", ""}


@pytest.mark.parametrize("pruned", [{}, {(2, 0): "[pruned]"}, {(5, 0): "[pruned]", (1, 1): "[args pruned]"},
                                    {(4, 1): "[text pruned]", (4, 0): "x"}])
def test_what_the_summarizer_saw_is_read_from_the_parts_normalized_once(chars4: TokenCounter,
                                                                         pruned: dict[tuple[int, int], str]) -> None:
    """With the transcript's normalized parts (``norms``) the answer is the one the view rendered and normalized
    gives, pruned parts (an output, a call's arguments, a text) read as their placeholders; an inserted text and
    the empty text (found in any text at all) too."""
    entries = _entries(MESSAGES, chars4)
    for (i, j), placeholder in pruned.items():
        entries[i] = replace(entries[i], pruned={**entries[i].pruned, j: placeholder})
    inserted = Entry(Message("s", "user", (Text("Summary: SRC/keys.py"),)), 5, (5,), "summary", -1)
    entries.insert(3, inserted)
    t = Transcript("t", "test", {}, tuple(MESSAGES))
    norms = FactIndex.build(t, []).part_norms
    texts = {"s": "Summary: SRC/keys.py"}
    fast = EventOutcome(1, frozenset(), before_entries=entries, inserted_text=texts, norms=norms)
    slow = EventOutcome(1, frozenset(), before_entries=entries, inserted_text=texts)
    whole = normalize(slow.seen_text)
    expected = {w for w in WANTED if w in whole}
    assert fast.saw(WANTED) == slow.saw(WANTED) == expected
    assert ("old/output.py" in expected) == ((5, 0) not in pruned)
    assert ("grep [args pruned]" in expected) == ((1, 1) in pruned)


def test_a_placed_fact_is_the_fact_replaced() -> None:
    """FactIndex places facts by constructing them field by field: a field added to Fact must be carried."""
    f = Fact("f", "recall", "text", ("anchor",), 3, "gold", {"what": "error"})
    moved = _placed(f, (7, "tool"), {"recall:anchor"})
    assert moved == replace(f, first_index=7, provenance="tool", boilerplate=True)
    assert _placed(f, (3, "unknown"), ()) is f


def _old_index(counter: TokenCounter, t: Transcript) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """The index as it was computed before the one pass: remember, then parts, then messages."""
    for m in t.messages:
        counter.remember(m)
    parts = tuple(counter.parts(m) for m in t.messages)
    return parts, tuple(counter.message(m, c) for m, c in zip(t.messages, parts, strict=True))


MIXED = Transcript("mix", "test", {}, (
    user("u", "hello there, general"),
    Message("a", "assistant", (Reasoning("a long thought " * 20), Reasoning("secret", encrypted=True),
                               Text("the answer"), ToolCall("c", "read", '{"path": "a.py"}'))),
    Message("t", "tool", (ToolResult("c", "read", "print('hi')\n" * 9), Media("image", b"x"))),
))


@pytest.mark.parametrize("correction", [None, Correction("claude", 1180), Correction("claude", 1180, 900),
                                        Correction("gemini", 1000, 1000)])
@pytest.mark.parametrize("scoped", [False, True])
def test_the_index_in_one_pass_counts_as_remember_parts_and_message_did(correction: Correction | None,
                                                                        scoped: bool) -> None:
    base = TokenCounter("o200k_base", correction=correction)
    one, old = (base.scoped(), base.scoped()) if scoped else (base, base)
    index = one.index(MIXED)
    assert (index.part_tokens, index.message_tokens) == _old_index(old, MIXED)
    if scoped:  # and the memo holds the same parts
        assert one._memo is not None and old._memo is not None and one._memo.keys() == old._memo.keys()


def test_a_scoped_counter_indexes_its_transcript_once() -> None:
    base = TokenCounter("chars4")
    scoped = base.scoped()
    first = scoped.index(MIXED)
    assert scoped.index(MIXED) is first  # asked again (the fit, the triggers, the replay): the same index
    other = replace(MIXED, id="other")
    assert scoped.index(other) is not first and scoped.index(other) == first  # another transcript, counted
    assert base.index(MIXED) is not base.index(MIXED)  # the run's shared counter keeps nothing


READ = "\n".join(f"    def handler_{i}(request):  # route number {i} of the service" for i in range(30))


def _session() -> Transcript:
    msgs: list[Message] = [user("u1", "fix the routes in src/app/main.py"),
                           assistant("a1", "reading", [("c1", "Read", {"file_path": "/p/src/app/main.py"})]),
                           tool("t1", "c1", READ, "Read")]
    for k in range(2, 7):
        msgs += [assistant(f"a{k}", f"step {k}", [(f"c{k}", "Bash", {"command": f"echo {k}"})]),
                 tool(f"t{k}", f"c{k}", f"output {k}")]
    msgs.append(assistant("a9", "fix", [("c9", "Edit", {"file_path": "/p/src/app/main.py", "old_string": "x"})]))
    return transcript(*msgs)


class _CompactAt:
    name = "compact-at"

    def __init__(self, step: int) -> None:
        self.at = step

    def before_step(self, s):  # type: ignore[no-untyped-def]
        from compbench.sdk.session import Compact, Insert, Keep, SummaryRequest

        if s.step != self.at:
            return ()
        view = (Keep(s.entries[0].id), Insert("user", "Summary: ", with_summary=True, origin="summary"))
        return (Compact("test", view, SummaryRequest("", s.rendered(), s.rendered(1), 1000)),)

    def after_step(self, s, u):  # type: ignore[no-untyped-def]
        return ()


@pytest.mark.parametrize("step", [0, 1, 4, 5, 6, 99])
def test_a_working_set_built_when_first_needed_gives_the_same_reacquisitions(o200k: TokenCounter, step: int) -> None:
    """The content tracker given what builds the working set keeps the recorded messages until the view first
    loses one, then counts them: the same re-acquisitions as with the working set given, compacting before the
    first call, before the read, just after it, late, and never (then nothing is built)."""
    t = _session()
    index = o200k.index(t)
    built: list[int] = []
    build = later(t, index.part_tokens)

    def counted() -> WorkingSet:
        built.append(1)
        return build()

    out = []
    for source in (WorkingSet.build(t, index.part_tokens), counted):
        content = ContentTracker(source)
        replay(t, _CompactAt(step), MockSummarizer("worked on it"), ReplayConfig(ModelLimits(128_000, 4_096)),
               o200k, index, Trackers(PresenceTracker(FactIndex.build(t, [])), content))
        woke = bool(built)
        assert content.ws is not None  # asked for it, a dormant tracker counts what it kept
        out.append((content.events, content.visible, content._read_at, woke))
    assert out[0][:3] == out[1][:3] and out[0][0] == out[1][0]
    assert out[1][3] == (0 < step < 99) and bool(out[0][0]) == (0 < step < 99)
    assert build() is build()  # every replay of the transcript shares one


def test_a_compaction_shared_by_two_trajectories_is_evaluated_once(o200k: TokenCounter,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluations that share what they found (one Shared per transcript) give each trajectory the rows it gets
    alone, and a compaction event they both carry (a trajectory forked after it) is scored once."""
    from compbench.measure import retention

    t = _session()
    index = o200k.index(t)
    facts = FactIndex.build(t, retention_facts(t))
    tracker = PresenceTracker(facts)
    trace = replay(t, _CompactAt(4), MockSummarizer("edited src/app/main.py and made_up_name.py"),
                   ReplayConfig(ModelLimits(128_000, 4_096)), o200k, index, tracker)
    alone = retention.evaluate(t, trace, facts, tracker, index.part_tokens)
    calls: list[int] = []
    scored = retention.compaction_facts

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return scored(*args, **kwargs)

    monkeypatch.setattr(retention, "compaction_facts", counting)
    shared = retention.Shared()
    first = retention.evaluate(t, trace, facts, tracker, index.part_tokens, shared=shared)
    second = retention.evaluate(t, trace, facts, tracker, index.part_tokens, shared=shared)
    assert first == second == alone
    assert len(calls) == 1 and alone[1][0].fabricated == ("made_up_name.py",)


def retention_facts(t: Transcript) -> list[Fact]:
    from compbench.measure.facts.sources import facts_for

    return facts_for(t)
