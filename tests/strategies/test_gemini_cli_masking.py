"""gemini-cli-masking: Gemini CLI's tool-output masking as toolOutputMaskingService.ts @ 5411f11 has it."""

from __future__ import annotations

import json

import pytest

from compbench.data.transcript import Message
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Prune
from compbench.strategies import resolve
from compbench.strategies.gemini_cli_history import random_suffix
from compbench.strategies.gemini_cli_masking import GeminiCliMasking, GeminiCliMaskingParams, shell_preview
from helpers import assistant, run, system, tool, transcript, user, view_of


def out(tokens: int) -> str:
    """An output of tool 'ls' whose function response Gemini CLI estimates at exactly ``tokens``:
    (len('ls') + len('{"output":"' + text + '"}')) / 4."""
    return "x" * (4 * tokens - 15)


def turns(*sizes: int, name: str = "ls") -> list[Message]:
    """One call per size, oldest first, then a final model turn (the history ends there)."""
    msgs: list[Message] = [system("sys"), user("u", "go")]
    for k, n in enumerate(sizes):
        msgs += [assistant(f"a{k}", "", [(f"c{k}", name, {})]), tool(f"t{k}", f"c{k}", out(n), name=name)]
    return [*msgs, assistant("end", "thinking")]


def masked(actions: object) -> list[str]:
    return [t[0] for a in actions for t in a.targets] if actions else []  # type: ignore[attr-defined]


def mask() -> GeminiCliMasking:
    return GeminiCliMasking(GeminiCliMaskingParams())


def test_protects_newest_50k_masks_the_crossing_one_and_older(chars4: TokenCounter) -> None:
    # newest first: t3 20k, t2 20k (40k), t1 20k crosses 50k -> prunable, t0 20k prunable: 40k >= 30k
    v = view_of(turns(20_000, 20_000, 20_000, 20_000), chars4)
    assert masked(mask().before_step(v)) == ["t1", "t0"]
    # the latest Content is the model turn that asked for the tools: protecting it protects no output
    unprotected = GeminiCliMasking(GeminiCliMaskingParams(protect_latest_turn=False))
    assert masked(unprotected.before_step(v)) == ["t1", "t0"]


@pytest.mark.parametrize(("protected", "masks"), [(50_000, False), (50_001, True)])
def test_protection_boundary_is_strictly_over_50k(chars4: TokenCounter, protected: int, masks: bool) -> None:
    # t1 brings the protected total to `protected`; t0 (30k) is prunable only if t1 did not cross
    v = view_of(turns(30_000, protected - 10_000, 10_000), chars4)
    got = masked(mask().before_step(v))
    assert got == (["t1", "t0"] if masks else ["t0"])


@pytest.mark.parametrize(("prunable", "masks"), [(29_999, False), (30_000, True), (30_001, True)])
def test_masks_only_when_30k_prunable(chars4: TokenCounter, prunable: int, masks: bool) -> None:
    v = view_of(turns(prunable - 1_000, 1_000, 50_000), chars4)  # t2 = 50,000 exactly: protected, not crossing
    assert masked(mask().before_step(v)) == (["t1", "t0"] if masks else [])


def test_exempt_tools_and_already_masked_outputs_are_skipped(chars4: TokenCounter) -> None:
    msgs = turns(40_000, 40_000, 40_000)
    msgs[3] = tool("t0", "c0", out(40_000), name="ask_user")
    assert masked(mask().before_step(view_of(msgs, chars4))) == ["t1"]
    # replayed: before 'end' t2 is the request, so t1 is protected and t0 masked; before 'fin' t1 crosses
    # the protection and is masked; t0, already masked, is neither counted nor masked again
    t = transcript(*turns(40_000, 40_000, 40_000), user("u2", "more"), assistant("fin", "ok"))
    tr = run(t, mask(), chars4, window=10**7)
    assert [(pr.step, pr.parts) for pr in tr.prunes] == [(3, (("t0", 0),)), (4, (("t1", 0),))]


def test_the_request_being_sent_is_neither_counted_nor_masked(chars4: TokenCounter) -> None:
    msgs = turns(40_000, 40_000)[:-1]  # ends with t1: the tool response is the request, not history
    assert masked(mask().before_step(view_of(msgs, chars4))) == []  # only t0 (40k) is history: protected
    # once a model turn follows, t1 is history: it is protected and t0 crosses the 50k
    assert masked(mask().before_step(view_of([*msgs, assistant("a9", "x")], chars4))) == ["t0"]


def test_placeholder_text_general_tool(chars4: TokenCounter) -> None:
    v = view_of(turns(40_000, 40_000, 40_000), chars4)
    (p,) = mask().before_step(v)
    assert isinstance(p, Prune)
    text = p.targets[0][2]
    content = json.dumps({"output": out(40_000)}, indent=2)
    path = ("/home/user/.gemini/tmp/project/tool-outputs/session-00000000-0000-4000-8000-000000000000/"
            f"ls_c1_{random_suffix('c1')}.txt")
    assert text == (f"<tool_output_masked>\n{content[:250]}\n... [TRUNCATED] ...\n{content[-250:]}\n\n"
                    f"Output too large. Full output available at: {path}\n</tool_output_masked>")
    assert content[:250].startswith('{\n  "output": "xxx')


def test_shell_preview_sections() -> None:
    body = "\n".join(f"line {i}" for i in range(30))
    text = f"Output: {body}\nError: (none)\nExit Code: 1"
    assert shell_preview({"output": text}) == (
        "Output: " + "\n".join(f"line {i}" for i in range(10)) + "\n\n... [10 lines omitted] ...\n\n"
        + "\n".join(f"line {i}" for i in range(20, 30)) + "\nError: (none)\nExit Code: 1")
    assert shell_preview({"output": "short"}) == "short"
    assert shell_preview({"error": "boom"}) == "\n[Error: boom]"


def test_small_outputs_are_not_masked_when_masking_saves_nothing(chars4: TokenCounter) -> None:
    msgs = turns(*([5] * 12_000))  # 12,000 outputs of 5 tokens: 60k prunable, each snippet larger than it
    assert mask().before_step(view_of(msgs, chars4)) == ()


def test_params_and_registration() -> None:
    c = resolve("gemini-cli-masking")
    assert (c.params.protection, c.params.min_prunable, c.params.protect_latest_turn) == (50_000, 30_000, True)
    assert c.params.exempt_tools == ("activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode")
    assert resolve("gemini-cli-masking:shell_tools=bash|run_shell_command").params.shell_tools == \
        ("bash", "run_shell_command")


def test_the_wake_total_grows_with_the_view_as_if_counted_whole(chars4: TokenCounter) -> None:
    """The wake keeps its total of unmasked outputs while the view only grows; a masked output (a new revision)
    leaves it, as a strategy counting the view afresh finds."""
    from dataclasses import replace

    msgs = turns(1_000, 2_000, 3_000, 4_000, 5_000)
    full = view_of(msgs, chars4)
    live: list = []
    view = view_of([], chars4)
    view._entries = live
    m = mask()
    for e in full.entries:
        live.append(e)
        assert m.wake(view).grown == mask().wake(view).grown
    assert m.wake(view).grown[1] == 50_001 - 15_000  # type: ignore[index]
    k = next(k for k, e in enumerate(live) if e.id == "t1")
    live[k] = replace(live[k], pruned={0: "<tool_output_masked>preview</tool_output_masked>"})
    view.revision += 1
    assert m.wake(view).grown == mask().wake(view).grown
    assert m.wake(view).grown[1] == 50_001 - 13_000  # type: ignore[index]
