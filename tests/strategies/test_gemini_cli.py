"""gemini-cli-compression: Gemini CLI's chat compression as chatCompressionService.ts @ 5411f11 has it."""

from __future__ import annotations

import math

import pytest

from compbench.data.transcript import Message, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import PREVIOUS_ANSWER, Compact, Insert, Keep, ModelLimits, Prune, SessionView
from compbench.strategies import gemini_cli_prompts as P
from compbench.strategies import resolve
from compbench.strategies.gemini_cli import GeminiCli, GeminiCliParams, find_split, truncate_chars, truncate_lines
from compbench.strategies.gemini_cli_history import contents, estimate, estimate_text
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

LIMIT = 1_000  # token_limit: the trigger is 0.5 x 1,000 = 500 prompt tokens


def gem(**kw: object) -> GeminiCli:
    return GeminiCli(GeminiCliParams(**{"token_limit": LIMIT, **kw}))  # type: ignore[arg-type]


def with_usage(v: SessionView, prompt: int) -> SessionView:
    v.last_usage = Usage(input=prompt, output=10)
    return v


def chat() -> list[Message]:
    """Three user turns; the last one's tool response is the request being sent."""
    return [system("sys", "be brief"),
            user("u1", "fix src/app.py please " + "x" * 400), assistant("a1", "reading"),
            user("u2", "also the tests " + "y" * 400), assistant("a2", "ok"),
            user("u3", "and then docs"), assistant("a3", "", [("c1", "read_file", {"path": "README.md"})]),
            tool("t1", "c1", "readme text")]


# --- trigger ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("prompt", "acts"), [(499, False), (500, True), (501, True)])
def test_trigger_is_last_prompt_at_threshold_times_token_limit(chars4: TokenCounter, prompt: int, acts: bool) -> None:
    out = gem().before_step(with_usage(view_of(chat(), chars4), prompt))
    assert bool(out) is acts


def test_no_usage_yet_no_compression_and_window_is_the_default_limit(chars4: TokenCounter) -> None:
    assert gem().before_step(view_of(chat(), chars4)) == ()
    g = GeminiCli(GeminiCliParams())
    v = view_of(chat(), chars4, ModelLimits(2_000, 100))
    assert g.before_step(with_usage(v, 999)) == () and g.before_step(with_usage(v, 1_000))


# --- split point, kept part, placement, prompts ----------------------------------------------------------


def test_split_before_a_user_text_message_and_what_is_kept(chars4: TokenCounter) -> None:
    (c,) = gem().before_step(with_usage(view_of(chat(), chars4), 600))
    assert isinstance(c, Compact)
    # history = u1 a1 u2 a2 u3 a3 (t1 is the request); u1+a1+u2+a2 hold over 70% of the characters, so
    # the first user text at or after the mark is u3
    assert c.new_view == (Keep("sys"), Insert("user", with_summary=True, origin="summary"),
                          Insert("assistant", "Got it. Thanks for the additional context!", origin="synthetic"),
                          Keep("u3"), Keep("a3"), Keep("t1"))
    assert [m.id for m in c.request.source] == ["u1", "a1", "u2", "a2"]  # type: ignore[union-attr]


def test_prompt_texts_anchor_and_verification(chars4: TokenCounter) -> None:
    (c,) = gem().before_step(with_usage(view_of(chat(), chars4), 600))
    assert isinstance(c, Compact) and c.request is not None
    assert c.request.system == P.SYSTEM_PROMPT and c.request.system.startswith(
        "You are a specialized system component responsible for distilling chat history")
    assert c.request.prompt[-1].text == (
        "Generate a new <state_snapshot> based on the provided history.\n\n"
        "First, reason in your scratchpad. Then, generate the updated <state_snapshot>.")
    (f,) = c.followups
    assert f.replaces and f.request.system == P.SYSTEM_PROMPT
    answer, verify = f.request.prompt[-2:]
    assert answer.role == "assistant" and answer.meta[PREVIOUS_ANSWER]
    assert verify.text.startswith("Critically evaluate the <state_snapshot> you just generated.")
    assert [m.id for m in f.request.prompt[:-2]] == ["u1", "a1", "u2", "a2"]


def test_a_previous_summary_is_folded_with_the_anchor(chars4: TokenCounter) -> None:
    summ = MockSummarizer("<state_snapshot>old</state_snapshot>")
    msgs = chat()
    t = transcript(*msgs, assistant("a4", "done"), user("u4", "next " + "z" * 2000), assistant("a5", "ok"),
                   user("u5", "more"), assistant("a6", "fine"))
    tr = run(t, gem(threshold=0.001), chars4, summarizer=summ)
    assert summ.requests[0].prompt[-1].text.startswith(P.ANCHOR_NEW) and summ.requests[0].previous_summary is None
    folded = [r for r in summ.requests if r.prompt[-1].text.startswith(P.ANCHOR_PREVIOUS)]
    assert folded and folded[0].previous_summary == "<state_snapshot>old</state_snapshot>"
    assert tr.compactions[0].ok


def test_split_rules() -> None:
    counter = TokenCounter("chars4", message_overhead=0)
    v = view_of([user("u1", "a" * 100), assistant("a1", "b" * 100), user("u2", "c"), assistant("a2", "d")], counter)
    assert find_split(contents(v.entries), 0.7) == 2  # u2 is past 70% of the characters
    v = view_of([user("u1", "a"), assistant("a1", "b" * 300), user("u2", "c"), assistant("a2", "d" * 300)], counter)
    assert find_split(contents(v.entries), 0.7) == 4  # no user text past the mark, last is a model turn without calls
    v = view_of([user("u1", "a" * 100), assistant("a1", "b" * 100, [("c", "ls", {})]), tool("t", "c", "x"),
                 assistant("a2", "d", [("c2", "ls", {})])], counter)
    assert find_split(contents(v.entries), 0.7) == 0  # only u1 (at 0) qualifies: compress nothing
    v = view_of([user("u1", "a"), assistant("a1", "b"), user("u2", "c" * 300), assistant("a2", "d", [("c", "ls", {})]),
                 tool("t", "c", "x"), user("u3", "e")], counter)
    hist = contents(v.entries)
    assert [c.role for c in hist] == ["user", "model", "user", "model", "user", "user"]
    assert find_split(hist, 0.7) == 5  # u3: the tool response (index 4) is never a split point


def test_estimator_is_gemini_clis(chars4: TokenCounter) -> None:
    assert estimate_text("abcd") == 1.0 and estimate_text("é") == 1.5 and estimate_text("𝄞") == 3.0
    assert estimate_text("é" * 100_001) == 100_001 / 4  # past 100,000 UTF-16 units: length / 4
    fr = {"functionResponse": {"id": "c", "name": "ls", "response": {"output": "abc"}}}
    assert estimate([fr, {"text": "ab"}]) == math.floor((2 + len('{"output":"abc"}')) / 4 + 0.5)


# --- truncateHistoryToBudget ----------------------------------------------------------------------------


def test_truncation_formats_are_the_sources() -> None:
    text = "0123456789" * 10
    assert truncate_chars(text, "/p/f.txt", 100) == text
    out = truncate_chars(text, "/p/f.txt", 50)
    assert out == ("Output too large. Showing first 10 and last 40 characters. For full output see: /p/f.txt\n"
                   "0123456789\n\n... [50 characters omitted] ...\n\n" + "0123456789" * 4)
    big = truncate_chars("a" * 100_000, "/p", 40_000)
    assert big.startswith("Output too large. Showing first 8,000 and last 32,000 characters.")
    assert "... [60,000 characters omitted] ..." in big
    lines = "\n".join(f"l{i}" for i in range(40))
    assert truncate_lines(lines, "/p/f.txt") == ("Output too large. Showing the last 30 of 40 lines. For full output "
                                                 "see: /p/f.txt\n...\n" + "\n".join(f"l{i}" for i in range(10, 40)))
    assert truncate_lines("x" * 5000, "/p").endswith("...\n" + "x" * 4000) is False
    assert truncate_lines("x" * 5000, "/p") == ("Output too large. Showing the last 4,000 characters of the output. "
                                                "For full output see: /p\n..." + "x" * 4000)


def budget_chat(big: int) -> list[Message]:
    """Two old tool outputs of ``big`` characters each, then a newer turn."""
    return [system("sys"), user("u0", "hi"), assistant("a0", "hello"), user("u1", "go"),
            assistant("a1", "", [("c1", "run_shell_command", {})]), tool("t1", "c1", "A" * big),
            assistant("a2", "", [("c2", "run_shell_command", {})]), tool("t2", "c2", "B" * big),
            user("u2", "continue"), assistant("a3", "", [("c3", "ls", {})]), tool("t3", "c3", "small")]


def test_outputs_past_the_50k_budget_are_cut_in_the_kept_part(chars4: TokenCounter) -> None:
    # 120,000 chars = 30,000 estimated tokens: t2 fits the 50k budget, t1 does not
    g = gem(token_limit=1_000_000, preserve_fraction=0.99)
    msgs = [m for m in budget_chat(120_000) if m.id != "u2"]  # no user text after t1: the split is before u1
    (c,) = g.before_step(with_usage(view_of(msgs, chars4), 600_000))
    assert isinstance(c, Compact) and [m.id for m in c.request.source] == ["u0", "a0"]  # type: ignore[union-attr]
    # remaining window 400,000 tokens x 4 chars: the cap is the 40,000-character threshold
    (mark,) = c.prune
    assert mark[:2] == ("t1", 0)
    assert mark[2].startswith("Output too large. Showing first 8,000 and last 32,000 characters. For full output "
                              "see: /home/user/.gemini/tmp/project/tool-outputs/bash_1.txt\n")
    assert g.truncations == 1


def test_the_truncated_history_goes_to_the_summarizer_only_past_the_token_limit(chars4: TokenCounter) -> None:
    msgs = [*budget_chat(120_000)[:8], user("u2", "continue"), assistant("a3", "done")]
    (c,) = gem(token_limit=1_000_000).before_step(with_usage(view_of(msgs, chars4), 600_000))
    assert isinstance(c, Compact) and c.request is not None
    assert c.request.source[4].parts[0].output == "A" * 120_000  # type: ignore[union-attr]
    (c,) = gem(token_limit=60_000).before_step(with_usage(view_of(msgs, chars4), 59_000))
    assert isinstance(c, Compact) and c.request is not None
    assert c.request.source[4].parts[0].output.startswith("Output too large. Showing first 800 and last 3,200")  # type: ignore[union-attr]


# --- the answer: verification, blank, inflated, truncation only -----------------------------------------------


def long_chat(turns: int = 6) -> list[Message]:
    msgs: list[Message] = [system("sys")]
    for k in range(turns):
        msgs += [user(f"u{k}", f"task {k} " + "w" * 800), assistant(f"a{k}", "done " + "v" * 40)]
    return msgs


def test_replay_places_the_verified_snapshot_and_the_model_ack(chars4: TokenCounter) -> None:
    summ = MockSummarizer(lambda r: "checked" if r.prompt[-1].text.startswith("Critically") else "first")
    tr = run(transcript(*long_chat()), gem(), chars4, summarizer=summ)
    ev = tr.compactions[0]
    assert ev.ok and ev.summary == "checked" and len(summ.requests) == 2
    assert summ.requests[1].prompt[-2].text == "first"
    assert tr.epochs[1][:3] == ("sys", "compbench:1:1:summary", "compbench:1:2:synthetic")


def test_blank_snapshot_is_rejected_and_not_remembered(chars4: TokenCounter) -> None:
    g = gem()
    tr = run(transcript(*long_chat()), g, chars4, summarizer=MockSummarizer(" "))
    assert tr.compactions and all(not e.ok for e in tr.compactions)
    assert tr.compactions[0].error == "empty summary (COMPRESSION_FAILED_EMPTY_SUMMARY)"
    assert not g.failed and len(tr.compactions) > 1  # tried again at the next call


def test_inflated_history_is_rejected_then_only_truncation(chars4: TokenCounter) -> None:
    g = gem(token_limit=1_000_000)
    v = with_usage(view_of(budget_chat(120_000), chars4), 500_000)
    (c,) = g.before_step(v)
    assert isinstance(c, Compact)
    assert g.accept(c, "s" * 4 * 600_000) is not None and g.failed  # far larger than the last prompt
    (p,) = g.before_step(v)
    assert isinstance(p, Prune) and [t[:2] for t in p.targets] == [("t1", 0)]
    assert p.targets[0][2].startswith("Output too large. Showing first 8,000")
    assert g.accept(c, "small") is None and not g.failed  # a success (startChat) clears the flag


def test_inflation_boundary(chars4: TokenCounter) -> None:
    g = gem()
    (c,) = g.before_step(with_usage(view_of(chat(), chars4), 600))
    assert isinstance(c, Compact)
    rest = float(c.meta["rest"])
    room = 600 - rest  # estimated tokens the snapshot may take: new = floor(rest + snapshot); rest is in quarters
    ok_text = "s" * round(room * 4)
    assert math.floor(rest + estimate_text(ok_text)) == 600 and g.accept(c, ok_text) is None  # equal: accepted
    over = "s" * (round(room * 4) + 4)
    assert math.floor(rest + estimate_text(over)) > 600
    assert g.accept(c, over) == f"new history {math.floor(rest + estimate_text(over))} > last prompt 600 " \
                                "(COMPRESSION_FAILED_INFLATED_TOKEN_COUNT)"


def test_manual_compress_ignores_threshold_and_flag(chars4: TokenCounter) -> None:
    g = gem()
    g.failed = True
    c = g.manual(with_usage(view_of(chat(), chars4), 10))
    assert isinstance(c, Compact) and c.reason == "/compress"
    assert g.accept(c, "s" * 100_000) is not None and g.failed


# --- presets ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("prompt", "acts"), [(499, False), (500, True), (501, True), (699, True)])
def test_v0_17_0_compresses_at_half_the_token_limit(chars4: TokenCounter, prompt: int, acts: bool) -> None:
    """The released v0.17.0 ships DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5 (chatCompressionService.ts @ v0.17.0,
    the c7b5dcd cherry-pick); 0.7 was only in its previews: at 500 of 1,000 it compresses, as the tool did."""
    (stage,) = resolve("gemini-cli:preset=0.17").create().stages  # type: ignore[attr-defined]
    assert stage.p.threshold == 0.5
    v = view_of(chat(), chars4, ModelLimits(1_000, 100))
    assert bool(stage.before_step(with_usage(v, prompt))) is acts


def test_version_presets_of_the_composition() -> None:
    """Before v0.30 masking was off: the version presets compress only; recorded version ranges map to a preset
    only when all of the range has the same one."""
    from compbench.strategies.gemini_cli import version_preset

    assert [type(s).__name__ for s in resolve("gemini-cli:preset=seed").create().stages] == [  # type: ignore[attr-defined]
        "GeminiCli", "GeminiCliMasking"]
    assert [s.p.prompt for s in resolve("gemini-cli:preset=0.26").create().stages] == ["0.26"]  # type: ignore[attr-defined]
    assert [version_preset(v) for v in ("0.17.0", "0.19.2", "0.26-0.28", "0.33+", "0.18-0.32", "up to 0.20")] == [
        "0.17", "0.18", "0.26", "seed", None, None]


def test_presets_by_version(chars4: TokenCounter) -> None:
    assert resolve("gemini-cli-compression").params.threshold == 0.5
    old = resolve("gemini-cli-compression:preset=0.17").params
    assert (old.threshold, old.tool_budget, old.prompt, old.verify, old.after_failure, old.new_count) == \
        (0.5, 0, "0.17", False, "stop", "json")
    assert resolve("gemini-cli-compression:preset=0.18").params == old  # v0.17.0 and v0.18.0 compress alike
    g = GeminiCli(old)
    v = view_of(chat(), chars4, ModelLimits(1_000, 100))
    assert g.before_step(with_usage(v, 499)) == ()
    (c,) = g.before_step(with_usage(v, 700))
    assert isinstance(c, Compact) and c.request is not None and c.followups == ()
    assert c.request.system == P.SYSTEM_PROMPT_017
    assert c.request.prompt[-1].text == "First, reason in your scratchpad. Then, generate the <state_snapshot>."
    assert g.accept(c, "") is None  # no blank check before v0.26
    assert g.accept(c, "s" * 10_000) is not None and g.failed
    assert g.before_step(with_usage(v, 900)) == ()  # 'stop': never again automatically
    p26 = resolve("gemini-cli-compression:preset=0.26").params
    assert (p26.truncation, p26.prompt, p26.after_failure, p26.verify) == ("lines", "0.26", "stop", True)
