"""gemini-cli-context: Gemini CLI's opt-in ContextManager (generalist profile) as context/ @ 5411f11 has it.

Sizes are in Gemini CLI's base units at 3 characters a token: a tool output of ``3k - 15`` characters from tool
``ls`` is a function response of exactly ``k`` ((2 + len('{"output":"...."}')) / 3), a call of ``ls`` with no
arguments 13 (its JSON, 41 characters, / 3), and each turn adds 5. The weight is 1.0 (``calibrate=false``) unless
a test says otherwise.
"""

from __future__ import annotations

import hashlib

import pytest

from compbench.data.transcript import Media, Message, Text, ToolCall, ToolResult, Usage
from compbench.errors import UsageError
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, Prune, SessionView
from compbench.strategies import gemini_cli, resolve
from compbench.strategies import gemini_cli_prompts as P
from compbench.strategies import gemini_cli_tool_distill as tool_distill
from compbench.strategies.gemini_cli_context import PROVISIONAL, GeminiCliContext, GeminiCliContextParams
from compbench.strategies.gemini_cli_nodes import Graph, Node, aged_out, list_tokens, masked_text
from compbench.summarizers.mock import MockSummarizer
from helpers import applied, run, system, transcript, view_of

CALL = 13  # a call of ls without arguments
TURN = 5  # MSG_OVERHEAD_TOKENS


def ctx(**kw: object) -> GeminiCliContext:
    return GeminiCliContext(GeminiCliContextParams(**{"calibrate": False, **kw}))  # type: ignore[arg-type]


def user(id: str, units: int = 0, text: str = "") -> Message:
    return Message(id, "user", (Text(text or "u" * (3 * units) or "go"),))


def call(id: str, cid: str) -> Message:
    return Message(id, "assistant", (ToolCall(cid, "ls", "{}"),))


def out(id: str, cid: str, units: int, name: str = "ls") -> Message:
    return Message(id, "tool", (ToolResult(cid, name, "x" * (3 * units - 13 - len(name))),))


def steps(*units: int, first: int = 0) -> list[Message]:
    """A system prompt, a user prompt of ``first`` units, then one call and its output per size; the last output is
    the request being sent."""
    msgs = [system("sys", "be brief"), user("u0", first)]
    for k, n in enumerate(units):
        msgs += [call(f"a{k}", f"c{k}"), out(f"t{k}", f"c{k}", n)]
    return msgs


def total(msgs: list[Message], counter: TokenCounter) -> int:
    v = view_of(msgs, counter)
    return list_tokens(Graph().nodes(v.entries, 1, {}), 1.0)


def sized(target: int, counter: TokenCounter) -> list[Message]:
    """Steps of 4,000-unit outputs whose nodes weigh exactly ``target`` (the first prompt makes up the rest)."""
    n = target // (CALL + 4_000 + 2 * TURN)
    msgs = steps(*[4_000] * n)
    gap = target - total(msgs, counter)
    assert gap >= 0
    return steps(*[4_000] * n, first=gap)


def masks(actions: object) -> list[tuple[str, int, str]]:
    return [t for a in actions if isinstance(a, Prune) for t in a.targets]  # type: ignore[attr-defined]


# --- the estimate -------------------------------------------------------------------------------------------


def test_the_sizes_are_gemini_clis_estimate_at_three_characters(chars4: TokenCounter) -> None:
    msgs = steps(100, first=7)
    # u0 7 + call 13 + output 100, three turns of 5
    assert total(msgs, chars4) == 7 + CALL + 100 + 3 * TURN
    g = Graph()
    assert [n.base for n in g.nodes(view_of(msgs, chars4).entries, 1, {})] == [7, CALL, 100]
    # the weight multiplies the sum and rounds half up (Math.round)
    assert list_tokens(g.nodes(view_of(msgs, chars4).entries, 1, {}), 0.5) == 68  # 67.5


# --- new_message: masking at 8,000 and distillation at 15,000 -------------------------------------------------


@pytest.mark.parametrize(("chars", "masked"), [(23_999, False), (24_000, False), (24_001, True)])
def test_a_response_string_is_masked_past_24000_characters(chars4: TokenCounter, chars: int, masked: bool) -> None:
    msgs = [system(), user("u0"), call("a0", "c0"), Message("t0", "tool", (ToolResult("c0", "ls", "y" * chars),))]
    got = masks(ctx().before_step(view_of(msgs, chars4)))
    assert [t[:2] for t in got] == ([("t0", 0)] if masked else [])
    if masked:
        assert got[0][2] == masked_text("y" * chars, "ls", "c0")


def test_the_mask_is_the_processors_line_with_its_file() -> None:
    content = "abc\ndef"
    stable = hashlib.sha256(content.encode()).hexdigest()[:32]
    assert masked_text(content, "Read_File", "Call.1") == (
        "<tool_output_masked>\n[Tool observation string (0.00MB, 2 lines) masked to preserve context window. Full "
        "string saved to: /home/user/.gemini/tmp/project/tool-outputs/session-00000000-0000-4000-8000-000000000000/"
        f"read_file_call_1_observation_{stable}.txt]\n</tool_output_masked>")


def test_exempt_tools_already_masked_and_old_outputs_are_not_masked(chars4: TokenCounter) -> None:
    big = "y" * 30_000
    msgs = [system(), user("u0"), call("a0", "c0"), Message("t0", "tool", (ToolResult("c0", "ls", big),)),
            call("a1", "c1"), Message("t1", "tool", (ToolResult("c1", "ask_user", big),)),
            Message("t2", "tool", (ToolResult("c9", "ls", "<tool_output_masked>" + big),))]
    # t0 is history (answered by a1): only the request being sent (t1, t2) is sanitized, and neither is masked
    assert masks(ctx().before_step(view_of(msgs, chars4))) == []


def test_each_request_is_sanitized_once(chars4: TokenCounter) -> None:
    g = ctx()
    msgs = [system(), user("u0"), call("a0", "c0"), Message("t0", "tool", (ToolResult("c0", "ls", "y" * 30_000),))]
    assert masks(g.before_step(view_of(msgs, chars4)))
    assert masks(g.before_step(view_of(msgs, chars4))) == []


@pytest.mark.parametrize(("chars", "distils"), [(44_999, False), (45_000, False), (45_001, True)])
def test_a_new_user_text_is_distilled_past_45000_characters(chars4: TokenCounter, chars: int, distils: bool) -> None:
    v = view_of([system(), user("u0", text="p" * chars)], chars4)
    got = [a for a in ctx().before_step(v) if isinstance(a, Compact)]
    assert bool(got) == distils
    if distils:
        a = got[0]
        assert a.meta["kind"] == "distill" and a.prune == (("u0", 0, PROVISIONAL),)
        assert a.new_view == (Keep("sys"), Keep("u0"))  # nothing leaves the view
        assert a.request is not None and a.request.system == P.DISTILL_SYSTEM.format(info="USER_PROMPT")


def quotes(json_chars: int) -> str:
    """An output of tool ls whose response JSON ('{"output":"..."}') is ``json_chars`` long: quotes escape to two
    characters, so the output itself stays under the 24,000 of the mask."""
    n = json_chars - 13
    return '"' * (n // 2) + "x" * (n % 2)


@pytest.mark.parametrize(("json_chars", "distils"), [(45_000, False), (45_001, True)])
def test_a_response_is_distilled_when_its_json_passes_45000(chars4: TokenCounter, json_chars: int,
                                                            distils: bool) -> None:
    response = Message("t0", "tool", (ToolResult("c0", "ls", quotes(json_chars)),))
    msgs = [system(), user("u0"), call("a0", "c0"), response]
    acts = ctx().before_step(view_of(msgs, chars4))
    assert not masks(acts)  # 22,494 characters: under the mask
    got = [a for a in acts if isinstance(a, Compact)]
    assert bool(got) == distils
    if distils:
        assert got[0].request is not None and got[0].request.system == P.DISTILL_SYSTEM.format(info="ls")


def test_a_distillation_is_kept_only_when_smaller(chars4: TokenCounter) -> None:
    g = ctx()
    v = view_of([system(), user("u0", text="p" * 45_003)], chars4)
    a = next(x for x in g.before_step(v) if isinstance(x, Compact))
    assert a.meta["old"] == 15_001
    assert g.accept(a, "short") is None
    assert g.accept(a, "q" * 45_003) is not None  # as many tokens: not smaller
    assert g.accept(a, "") is not None  # a blank answer: the original text, not smaller


def test_replay_shows_the_distilled_text(chars4: TokenCounter) -> None:
    msgs = [system(), user("u0", text="p" * 45_003), Message("a0", "assistant", (Text("ok"),))]
    tr = run(transcript(*msgs), ctx(), chars4, summarizer=MockSummarizer("the gist"))
    assert [c.meta["kind"] for c in tr.compactions] == ["distill"] and tr.compactions[0].ok
    assert tr.prunes[-1].reason == "ImmediateNodeDistillation" and tr.prunes[-1].parts == (("u0", 0),)


# --- the budget: 65,000 retained, 5,000 coalescing, 150,000 max -------------------------------------------------


def nodes(*bases: int) -> list[Node]:
    """One node a turn, oldest first."""
    return [Node((f"m{k}", 0), "tool", k, k, b, {}) for k, b in enumerate(bases)]


@pytest.mark.parametrize(("newer", "ages"), [(64_999, False), (65_000, False), (65_001, True)])
def test_a_node_ages_out_when_its_newer_nodes_pass_65000(newer: int, ages: bool) -> None:
    got = aged_out(nodes(10, newer - TURN), 1.0, 65_000, set())
    assert [n.key for n in got] == ([("m0", 0)] if ages else [])
    assert aged_out(nodes(10, newer - TURN), 1.0, 65_000, {0}) == []  # a protected turn never ages out


@pytest.mark.parametrize(("current", "job"), [(70_000, False), (70_001, True)])
def test_a_background_snapshot_starts_when_the_deficit_passes_5000(chars4: TokenCounter, current: int,
                                                                   job: bool) -> None:
    g = ctx()
    assert g.before_step(view_of(sized(current, chars4), chars4)) == []
    assert (g.job is not None) == job and g.background == int(job)
    assert g.last_deficit == (current - 65_000 if job else 0)


def test_coalescing_waits_for_5000_more(chars4: TokenCounter) -> None:
    g = ctx()
    g.before_step(view_of(sized(70_001, chars4), chars4))
    g.before_step(view_of(sized(75_001, chars4), chars4))
    assert g.background == 1 and g.draft is not None  # the first draft is published, no second job: 10,001 - 5,001
    g.before_step(view_of(sized(75_002, chars4), chars4))
    assert g.background == 2 and g.draft is None and g.job is not None  # the new job took the draft to fold it


@pytest.mark.parametrize(("current", "acts"), [(149_999, False), (150_000, False), (150_001, True)])
def test_the_snapshot_comes_past_150000(chars4: TokenCounter, current: int, acts: bool) -> None:
    msgs = sized(current, chars4)
    got = ctx().before_step(view_of(msgs, chars4))
    assert bool(got) == acts
    if acts:
        a = got[0]
        assert isinstance(a, Compact) and a.meta["kind"] == "snapshot" and not a.meta["fast"]
        assert a.new_view[0] == Keep("sys") and a.new_view[1] == Insert("user", with_summary=True, origin="summary")
        kept = [s.id for s in a.new_view[2:] if isinstance(s, Keep)]
        assert kept[0].startswith("a") and kept[-1] == msgs[-1].id  # a call and its output stay together
        v = view_of(msgs, chars4)
        newest = Graph().nodes(v.entries, v.position(kept[0]), {})
        assert list_tokens(newest, 1.0) > 65_000  # every kept node is within the newest 65,000 or its call
        assert a.request is not None and a.request.system == P.SNAPSHOT_SYSTEM.format(warning="")
        assert a.request.prompt[0].text == P.SNAPSHOT_USER.format(state=P.EMPTY_STATE)


def test_the_environment_context_is_never_summarized(chars4: TokenCounter) -> None:
    msgs = sized(150_001, chars4)
    msgs[1] = user("u0", text="<session_context>\n" + msgs[1].text[18:])
    a = ctx().before_step(view_of(msgs, chars4))[0]
    assert isinstance(a, Compact) and a.new_view[:3] == (Keep("sys"), Keep("u0"), Insert("user", with_summary=True,
                                                                                          origin="summary"))


def test_a_draft_of_aged_out_nodes_is_spliced_in_alone(chars4: TokenCounter) -> None:
    """The fast path: the draft's nodes, all aged out, and only they become the snapshot (the later aged-out ones
    stay); a draft naming a node that is not aged out takes the slow path."""
    v = view_of(sized(150_001, chars4), chars4)
    g = ctx()
    g.last_deficit = 100_000  # no background job at this call (one would take the draft off the shelf)
    g.draft = frozenset({("u0", 0), ("a0", 0), ("t0", 0), ("a1", 0), ("t1", 0)})
    a = g.before_step(v)[0]
    assert isinstance(a, Compact) and a.meta["fast"]
    assert a.new_view[:3] == (Keep("sys"), Insert("user", with_summary=True, origin="summary"), Keep("a2"))
    g = ctx()
    g.last_deficit = 100_000
    g.draft = frozenset({("u0", 0), (v.entries[-2].id, 0)})  # the newest call is not aged out
    a = g.before_step(v)[0]
    assert isinstance(a, Compact) and not a.meta["fast"]


def test_after_the_first_snapshot_every_one_summarizes_again(chars4: TokenCounter) -> None:
    """A draft folds the newest snapshot among its targets, whose nodes are gone: never spliced in again."""
    summ = MockSummarizer("state")
    msgs = [*steps(*[3_000] * 160), Message("end", "assistant", (Text("done"),))]
    tr = run(transcript(*msgs), ctx(), chars4, window=1_000_000, summarizer=summ)
    snaps = [c for c in tr.compactions if c.meta["kind"] == "snapshot"]
    assert len(snaps) >= 2 and all(c.ok for c in snaps)
    assert not any(c.meta["fast"] for c in snaps[1:])
    assert snaps[0].meta["background"] > 0
    later = [r for r in summ.requests if r.system.startswith("You are an expert Context Memory Manager")][1]
    assert later.previous_summary == "state" and later.prompt[0].text == P.SNAPSHOT_USER.format(state="state")


# --- the learned weight --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("actual", "weight"), [(0, 0.9), (500, 0.9), (1_000, 1.0), (1_500, 1.1), (3_000, 1.15)])
def test_the_weight_learns_from_the_reported_prompt(actual: int, weight: float) -> None:
    g = ctx()
    g.learn(actual, 1_000)
    assert g.weight == pytest.approx(weight)


def test_after_a_call_the_weight_learns_the_history_share_of_the_prompt(chars4: TokenCounter) -> None:
    g = GeminiCliContext(GeminiCliContextParams())
    v: SessionView = view_of(steps(100), chars4, system_tokens=1_000)
    g.before_step(v)
    # the hot start: countTokens of the history less the system and tools (more than the history here): target 0.5
    assert g.weight == pytest.approx(0.9)
    assert g.outside == 1_000 + v.entries[0].tokens
    g.after_step(v, Usage(input=g.outside + g.units // 2, output=10))  # the history is half what was estimated
    assert g.weight == pytest.approx(0.82)


def test_a_lower_weight_moves_the_mask_threshold(chars4: TokenCounter) -> None:
    def masked(chars: int) -> bool:
        g = ctx()
        g.weight = 0.75  # tokensToChars(8,000) = 8,000 / 0.75 x 3 = 32,000 characters
        msgs = [system(), user("u0"), call("a0", "c0"), Message("t0", "tool", (ToolResult("c0", "ls", "y" * chars),))]
        return bool(masks(g.before_step(view_of(msgs, chars4))))

    assert not masked(32_000) and masked(32_001)


# --- off by default; settings -----------------------------------------------------------------------------------


def test_off_by_default_the_composition_compresses() -> None:
    assert resolve("gemini-cli").params.stages == ("gemini-cli-compression", "gemini-cli-masking")
    assert gemini_cli.version_preset("0.56.0") == "seed"
    assert resolve("gemini-cli:preset=context").params.stages == ("gemini-cli-context", "gemini-cli-masking")
    assert resolve("gemini-cli-context").create().name == "gemini-cli-context"


@pytest.mark.parametrize("spec", ["retained_tokens=0", "max_tokens=0", "coalescing_tokens=-1", "mask_tokens=0",
                                  "distill_tokens=0", "max_state_tokens=0"])
def test_budgets_out_of_bounds_are_refused(spec: str) -> None:
    with pytest.raises(UsageError):
        resolve(f"gemini-cli-context:{spec}")


def test_the_generalist_profile_is_the_default() -> None:
    p = GeminiCliContextParams()
    assert (p.retained_tokens, p.max_tokens, p.coalescing_tokens, p.mask_tokens, p.distill_tokens,
            p.max_state_tokens) == (65_000, 150_000, 5_000, 8_000, 15_000, 4_000)
    assert resolve("gemini-cli-context:coalescing_tokens=0").params.coalescing_tokens == 0


def test_a_failed_snapshot_leaves_the_view(chars4: TokenCounter) -> None:
    g = ctx()
    v = view_of(sized(150_001, chars4), chars4)
    a = g.before_step(v)[0]
    assert isinstance(a, Compact) and a.on_failure == "unchanged"
    ev = applied(v, a)
    assert g.after_compaction(v, ev) == []


# --- the executor's distillation (ToolOutputDistillationService) -------------------------------------------------


def request_of(output: str, name: str = "ls", is_error: bool = False) -> list[Message]:
    return [system(), user("u0"), call("a0", "c0"), Message("t0", "tool", (ToolResult("c0", name, output, is_error),))]


def shown(actions: object) -> dict[tuple[str, int], list[str]]:
    """Per part, the reasons of the prunes on it, in order."""
    out: dict[tuple[str, int], list[str]] = {}
    for a in actions:  # type: ignore[attr-defined]
        if isinstance(a, Prune):
            for t in a.targets:
                out.setdefault((t[0], t[1]), []).append(a.reason)
    return out


def test_the_cut_is_the_services_text() -> None:
    # 600 ASCII characters at 100 tokens (400 characters): 100 tokens are 303 characters at 0.33 a token, less the
    # prefix, the ellipsis and a newline (59): 48 from the head, 196 from the tail
    assert tool_distill.cut("a" * 300 + "b" * 300, "Run_Shell", "call-7", "p#1", 100) == (
        "[Message Normalized: Tool output exceeded size limit]\n" + "a" * 48 + "\n...\n" + "b" * 196
        + "\n\nFull output saved to: /home/user/.gemini/tmp/project/tool-outputs/session-p_1/run_shell_call-7.txt")


@pytest.mark.parametrize(("chars", "cut"), [(40_000, False), (40_001, True)])
def test_an_output_is_cut_past_40000_characters_then_masked(chars4: TokenCounter, chars: int, cut: bool) -> None:
    got = shown(ctx().before_step(view_of(request_of("y" * chars), chars4)))
    assert got == {("t0", 0): ["ToolOutputDistillation", "ToolMasking"] if cut else ["ToolMasking"]}


def test_a_cut_output_survives_a_lower_weight(chars4: TokenCounter) -> None:
    g = ctx()
    g.weight = 0.75  # the mask at 32,000 characters: the cut (about 30,400) stays
    acts = g.before_step(view_of(request_of("y" * 50_000), chars4))
    assert shown(acts) == {("t0", 0): ["ToolOutputDistillation"]}
    text = masks(acts)[0][2]
    assert text.startswith(tool_distill.TOOL_TRUNCATION_PREFIX) and "Full output saved to: " in text


def test_reads_and_errors_are_not_cut(chars4: TokenCounter) -> None:
    assert shown(ctx().before_step(view_of(request_of("y" * 50_000, "read_file"), chars4))) == \
        {("t0", 0): ["ToolMasking"]}
    assert shown(ctx().before_step(view_of(request_of("y" * 50_000, is_error=True), chars4))) == \
        {("t0", 0): ["ToolMasking"]}


@pytest.mark.parametrize(("chars", "asks"), [(80_000, False), (80_001, True)])
def test_an_output_past_80000_characters_gets_an_extraction(chars4: TokenCounter, chars: int, asks: bool) -> None:
    acts = ctx().before_step(view_of(request_of("y" * chars), chars4))
    intents = [a for a in acts if isinstance(a, Compact) and a.meta["kind"] == "intent"]
    assert bool(intents) == asks
    if asks:
        a = intents[0]
        assert a.on_failure == "apply" and a.prune[0][2] == a.meta["cut"] and a.request is not None
        assert a.request.system == "" and a.request.prompt[0].text.startswith("The following output from the tool 'ls'")


def test_the_extraction_is_appended_then_the_output_masked(chars4: TokenCounter) -> None:
    msgs = [*request_of("y" * 90_000), Message("a1", "assistant", (Text("ok"),))]
    tr = run(transcript(*msgs), ctx(), chars4, summarizer=MockSummarizer("exit 0"))
    assert [c.meta["kind"] for c in tr.compactions] == ["intent"]
    assert [p.reason for p in tr.prunes] == ["ToolOutputDistillation", "ToolMasking"]
    assert tr.epochs  # replayed to the end


def test_a_low_tool_limit_cuts_instead_of_masking(chars4: TokenCounter) -> None:
    g = ctx(tool_max_output_tokens=1_000)  # 4,000 characters: the cut is under the mask
    acts = g.before_step(view_of(request_of("y" * 30_000), chars4))
    assert shown(acts) == {("t0", 0): ["ToolOutputDistillation"]}
    assert shown(ctx(tool_max_output_tokens=0).before_step(view_of(request_of("y" * 30_000), chars4))) == \
        {("t0", 0): ["ToolMasking"]}  # 0: never cut


@pytest.mark.parametrize("system_tokens", [0, 1_000])
def test_the_first_call_calibrates_on_the_history_less_the_overhead(chars4: TokenCounter, system_tokens: int) -> None:
    """performHotStartCalibration on a fresh session (the tool's buffer holds its environment context): the history's
    count less the system prompt and tools; a large overhead leaves nothing (the target is half the weight)."""
    g = GeminiCliContext(GeminiCliContextParams())
    v = view_of([system("sys", "s"), user("u0", text="w" * 300)], chars4, system_tokens=system_tokens)
    history = v.entries[1].tokens  # 75 at a character a quarter; 100 base units + 5 for its turn
    actual = max(0, history - (v.context_tokens - history))
    g.before_step(v)
    assert g.weight == pytest.approx(0.8 + 0.2 * max(0.5, actual / 105))
    assert (system_tokens == 1_000) == (g.weight == pytest.approx(0.9))
    c = ctx()
    assert c.before_step(v) == [] and c.weight == 1.0


def test_an_image_of_the_request_is_degraded_to_a_line(chars4: TokenCounter) -> None:
    image = Message("u1", "user", (Text("look"), Media("image", "image/png", b"\x89PNG" * 1000)))
    msgs = [system(), user("u0"), Message("a0", "assistant", (Text("ok"),)), image]
    acts = ctx().before_step(view_of(msgs, chars4))
    assert shown(acts) == {("u1", 1): ["BlobDegradation"]}
    line = masks(acts)[0][2]
    assert line.startswith("[Multi-Modal Blob (image/png, 0.00MB) degraded to text to preserve context window. "
                           "Saved to: /home/user/.gemini/tmp/project/degraded-blobs/session-")
    assert line.endswith(".png]")
    ref = Message("u1", "user", (Media("image", "image/jpeg", b"", "https://x/y.jpg"),))
    line = masks(ctx().before_step(view_of([*msgs[:3], ref], chars4)))[0][2]
    assert line == ("[File Reference (image/jpeg) degraded to text to preserve context window. Original URI: "
                    "https://x/y.jpg]")


class FullGraph(Graph):
    def nodes(self, entries, head, overlay, view=None):  # type: ignore[no-untyped-def]
        return super().nodes(entries, head, overlay)


def test_the_growing_graph_is_the_graph_built_anew(chars4: TokenCounter) -> None:
    msgs = [*steps(*[3_000 + 7 * k for k in range(70)]), Message("end", "assistant", (Text("done"),))]
    traces = []
    for graph in (Graph(), FullGraph()):
        g = GeminiCliContext(GeminiCliContextParams())
        g.graph = graph
        tr = run(transcript(*msgs), g, chars4, window=1_000_000, summarizer=MockSummarizer("state"))
        traces.append(([(c.step, c.reason, c.replaced_ids) for c in tr.compactions],
                       [(p.step, p.reason, p.parts) for p in tr.prunes], g.weight))
    assert traces[0] == traces[1] and traces[0][0]
