"""SWE-agent and mini-swe-agent importers on every real file: exact counts, usage, mapping, errors.

The expected numbers come from python one-offs over the raw JSON, independent of the importers:
SWE-agent ``history`` roles / ``tool_calls`` / ``len(trajectory)``; mini-swe-agent assistants with
exactly one ``re.findall(r"```bash\\s*\\n(.*?)\\n```", content, re.DOTALL)`` match, the user messages
after them, ``<returncode>`` values, and sums of ``extra.response.usage``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from compbench.data.formats import mini_swe_agent as mini
from compbench.data.formats import swe_agent as swe
from compbench.data.formats.catalog import FORMATS, module
from compbench.data.formats.detect import detect, head_of
from compbench.data.formats.native import read as read_native
from compbench.data.transcript import Reasoning, Text, ToolCall, ToolResult, Transcript, Usage, to_jsonl
from compbench.errors import TranscriptError

SWE = "swe-agent"
MINI = "mini-swe-agent"

# file -> (system, user, assistant, tool, tool calls, tool results)  [history + trailing trajectory steps]
SWE_COUNTS = {
    "6e44b9__sweagenttestrepo-1c2844.traj": (1, 1, 5, 4, 4, 4),
    "ctf-katy.traj": (1, 1, 18, 17, 18, 17),
    "ctf-networking_1.traj": (1, 1, 4, 3, 4, 3),
    "ctf-warmup.traj": (1, 1, 7, 6, 7, 6),
}
# file -> (system, user, assistant, tool, bash calls, [input, output, cache_read, reasoning] totals)
MINI_COUNTS = {
    "django__django-15104.traj.json": (1, 1, 24, 24, 24, (190_583, 4_397, 112_050, 190)),
    "django__django-16256.traj.json": (1, 2, 40, 39, 39, (609_066, 9_889, 459_092, 206)),
    "scikit-learn__scikit-learn-25102.traj.json": (1, 3, 43, 41, 41, (3_243_070, 86_287, 3_075_482, 118)),
    "sympy__sympy-22714.traj.json": (1, 1, 38, 38, 38, (497_220, 6_335, 391_186, 88)),
}
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"


def _one(read: Callable[[Path], Iterator[Transcript]], path: Path) -> Transcript:
    (t,) = list(read(path))
    return t


def _roles(t: Transcript) -> tuple[int, ...]:
    c = Counter(m.role for m in t.messages)
    return c["system"], c["user"], c["assistant"], c["tool"]


# --- SWE-agent --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SWE_COUNTS))
def test_swe_counts_and_detection(transcripts_dir: Path, name: str) -> None:
    path = transcripts_dir / SWE / name
    assert detect(path) == SWE
    t = _one(swe.read, path)
    assert (*_roles(t), t.count_parts(ToolCall), t.count_parts(ToolResult)) == SWE_COUNTS[name]
    assert t.id == name.removesuffix(".traj") and t.source == SWE
    assert not any(r.orphan for m in t.messages for r in m.tool_results())
    assert [m.id for m in t.messages] == [f"m{i}" for i in range(len(t.messages))]
    assert t.meta["usage"] == swe.USAGE_NOTE and t.meta["exit_status"] == "submitted"


def test_swe_function_calling_run(transcripts_dir: Path) -> None:
    t = _one(swe.read, transcripts_dir / SWE / "6e44b9__sweagenttestrepo-1c2844.traj")
    calls = [c for m in t.messages for c in m.tool_calls()]
    assert [c.name for c in calls] == ["find_file", "open", "edit", "bash"]
    assert calls[0] == ToolCall("call_fJuazlMUN5fQDQ73G6XSpYpx", "find_file", '{"file_name":"missing_colon.py"}')
    results = [r for m in t.messages for r in m.tool_results()]
    assert [r.call_id for r in results] == [c.id for c in calls] and results[3].output.startswith("8.2\n")
    # history stops before the 5th model call (submit): appended from trajectory, steps == api_calls
    last = t.messages[-1]
    assert (last.id, last.role, last.meta["from_trajectory"]) == ("m10", "assistant", True)
    assert last.meta["action"] == "submit" and last.text.startswith("The script `missing_colon.py` ran successfully")
    assert t.steps == t.meta["model_stats"]["api_calls"] == 5
    assert t.meta["model_stats"]["tokens_sent"] == 7141 and t.meta["model_stats"]["tokens_received"] == 243
    assert t.warnings == ("history ends before the last 1 trajectory steps; their responses were appended from "
                          "'trajectory'",)
    assert (t.meta["model"], t.meta["instance_id"], t.meta["cwd"]) == ("gpt-4o", "SWE-agent__test-repo-i1",
                                                                       "/SWE-agent__test-repo")


def test_swe_thought_action_run_is_lossless(transcripts_dir: Path) -> None:
    path = transcripts_dir / SWE / "ctf-networking_1.traj"
    raw = json.loads(path.read_text(encoding="utf-8"))["history"]
    t = _one(swe.read, path)
    for src, m in zip(raw, t.messages, strict=True):
        if m.role == "assistant":  # text = thought, the action is the call: the original text rebuilds exactly
            (call,) = m.tool_calls()
            assert m.meta["layout"] == "thought-fence-action" and call.name == "bash"
            assert m.text + "```\n" + json.loads(call.args)["command"] + "```" == src["content"]
        elif m.role == "tool":  # was a user message: the observation of the call before it
            assert src["role"] == "user" and m.meta["observation"] is True
            assert m.tool_results()[0].output == src["content"]
        else:
            assert m.text == src["content"]
    assert t.messages[2].tool_calls()[0].args == '{"command": "tshark -n -r networking.pcap -q -z io,phs \\n"}'
    assert t.messages[3].tool_results()[0].call_id == "action-2"
    assert t.warnings == () and t.steps == 4


def _traj(tmp_path: Path, history: list[object], name: str = "x.traj") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps({"environment": "main", "trajectory": [], "history": history, "info": {}}, indent=2))
    return p


def test_swe_demonstrations_orphans_and_unknown_roles(tmp_path: Path) -> None:
    history = [
        {"role": "system", "content": "SETTING", "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": "DEMO start", "is_demo": True, "message_type": "demonstration"},
        {"role": "assistant", "content": "demo thought", "is_demo": True, "tool_calls": [
            {"id": "d1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "content": [{"type": "text", "text": "demo output"}], "is_demo": True,
         "tool_call_ids": ["d1"]},
        {"role": "user", "content": "the issue"},
        {"role": "tool", "content": "lost output", "tool_call_ids": ["call_x"]},
        {"role": "critic", "content": "?"},
    ]
    path = _traj(tmp_path, history)
    t = _one(swe.read, path)
    assert [(m.role, m.meta.get("demo"), m.meta.get("demo_role")) for m in t.messages] == [
        ("system", None, None), ("user", True, None), ("user", True, "assistant"), ("user", True, "tool"),
        ("user", None, None), ("tool", None, None)]
    assert t.steps == 0 and t.count_parts(ToolCall) == 0 and t.messages[3].text == "demo output"
    (orphan,) = t.messages[5].tool_results()
    assert (orphan.call_id, orphan.output, orphan.orphan) == ("call_x", "lost output", True)
    line = _line_of(path.read_text(), '"content": "lost output"') - 2  # where history entry 5 opens
    assert line == 49 and t.warnings == (f"line {line}, message 5: tool result 'call_x' has no matching tool call",
                          "skipped 1 records of unknown type 'role critic'")


def test_swe_observation_tags_are_kept(tmp_path: Path) -> None:
    """LastNObservations reads ``tags`` (keep_output / remove_output) on history items."""
    history = [
        {"role": "user", "content": "the issue", "message_type": "observation", "tags": ["keep_output"]},
        {"role": "assistant", "content": "look", "message_type": "action", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "content": "out", "tool_call_ids": ["c1"], "message_type": "observation",
         "tags": ["remove_output", 3]},
    ]
    t = _one(swe.read, _traj(tmp_path, history))
    assert [m.meta.get("tags") for m in t.messages] == [["keep_output"], None, None]  # a non-string tag: none kept


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_swe_malformed(tmp_path: Path, transcripts_dir: Path) -> None:
    src = (transcripts_dir / SWE / "ctf-warmup.traj").read_text(encoding="utf-8")
    cut = src[: src.index('"history"') + 400]
    (tmp_path / "cut.traj").write_text(cut)
    with pytest.raises(TranscriptError) as e:
        list(swe.read(tmp_path / "cut.traj"))
    assert e.value.line == cut.count("\n") + 1
    bad = src.encode().replace(b"Let me disassemble", b"Let me \xffisassemble", 1)
    (tmp_path / "utf.traj").write_bytes(bad)
    with pytest.raises(TranscriptError) as e:
        list(swe.read(tmp_path / "utf.traj"))
    assert e.value.line == _line_of(src, "Let me disassemble")
    doc = json.loads(src)
    doc["history"][3]["role"] = 12345
    text = json.dumps(doc, indent=2)
    (tmp_path / "type.traj").write_text(text)
    with pytest.raises(TranscriptError, match="string 'role' in history entry 3") as e:
        list(swe.read(tmp_path / "type.traj"))
    assert e.value.line == _line_of(text, '"role": 12345') - 1  # the line where the entry's object opens


# --- mini-swe-agent ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minis(transcripts_dir: Path) -> dict[str, Transcript]:
    return {n: _one(mini.read, transcripts_dir / MINI / n) for n in MINI_COUNTS}


@pytest.mark.parametrize("name", sorted(MINI_COUNTS))
def test_mini_counts_usage_and_detection(transcripts_dir: Path, minis: dict[str, Transcript], name: str) -> None:
    assert detect(transcripts_dir / MINI / name) == MINI
    t = minis[name]
    *roles, calls, totals = MINI_COUNTS[name]
    assert (*_roles(t), t.count_parts(ToolCall)) == (*roles, calls)
    assert t.count_parts(ToolResult) == calls and t.warnings == ()
    us = [m.usage for m in t.messages if m.usage is not None]
    assert len(us) == t.steps == t.meta["model_stats"]["api_calls"]
    assert tuple(sum(getattr(u, k) for u in us) for k in ("input", "output", "cache_read", "reasoning")) == totals
    assert t.id == name.removesuffix(".traj.json") == t.meta["instance_id"]
    assert (t.meta["model"], t.meta["tool_version"], t.meta["cwd"]) == ("google/gemini-3-pro-preview", "1.15.0",
                                                                        "/testbed")
    # the last exchange is the submission: its command, then its output as the tool result
    assert json.loads(t.messages[-2].tool_calls()[0].args) == {"command": SUBMIT}
    assert t.messages[-1].meta == {"observation": True, "outcome": "submitted"}
    # one readable and one encrypted reasoning block per file (the first response); never context
    reasoning = [p for m in t.messages for p in m.parts if isinstance(p, Reasoning)]
    assert [r.encrypted for r in reasoning] == [False, True]


def test_mini_one_message(minis: dict[str, Transcript]) -> None:
    t = minis["django__django-15104.traj.json"]
    m = t.messages[12]  # the first call with cached prompt tokens
    assert m.usage == Usage(input=4585, output=86, cache_read=3987)
    assert m.meta["cost"] == pytest.approx(0.0030254) and m.meta["finish"] == "stop"
    first = t.messages[2]
    assert first.usage == Usage(input=2632, output=233, cache_read=0, reasoning=190)
    assert json.loads(first.tool_calls()[0].args) == {"command": "ls -R django/db/migrations/ | grep autodetector.py"}
    assert first.text == ("THOUGHT: I need to verify the current directory structure and locate the relevant files "
                          "mentioned in the issue description.\n\n")
    assert Counter(m.meta.get("returncode") for m in t.messages if m.role == "tool") == {0: 21, 1: 2, None: 1}
    assert sum(r.is_error for m in t.messages for r in m.tool_results()) == 2


def test_mini_format_errors_stay_user_messages(minis: dict[str, Transcript]) -> None:
    t = minis["scikit-learn__scikit-learn-25102.traj.json"]
    for i, found in ((21, 0), (47, 2)):  # the agent rejected responses with 0 and 2 bash blocks
        assert (t.messages[i - 1].role, t.messages[i - 1].meta["actions_found"]) == ("assistant", found)
        assert t.messages[i - 1].tool_calls() == () and t.messages[i].role == "user"
        assert t.messages[i].text.startswith("Please always provide EXACTLY ONE action")
    sym = minis["sympy__sympy-22714.traj.json"]
    assert Counter(m.meta.get("returncode") for m in sym.messages if m.role == "tool") == {0: 32, 1: 4, 127: 1,
                                                                                            None: 1}


def test_mini_text_and_call_rebuild_the_content(transcripts_dir: Path, minis: dict[str, Transcript]) -> None:
    name = "django__django-16256.traj.json"
    raw = json.loads((transcripts_dir / MINI / name).read_text(encoding="utf-8"))["messages"]
    for src, m in zip(raw, minis[name].messages, strict=True):
        if m.role == "assistant" and m.tool_calls():
            texts = [p.text for p in m.parts if isinstance(p, Text)]
            cmd = json.loads(m.tool_calls()[0].args)["command"]
            fence = m.meta.get("fence", f"```bash\n{cmd}\n```")
            before, _, after = src["content"].partition(fence)
            assert [x for x in (before, after) if x] == texts
            assert re.findall(r"```bash\s*\n(.*?)\n```", src["content"], re.DOTALL)[0].strip() == cmd
        elif m.role == "tool":
            assert src["role"] == "user" and m.tool_results()[0].output == src["content"]


def test_mini_malformed(tmp_path: Path, transcripts_dir: Path) -> None:
    src = (transcripts_dir / MINI / "django__django-15104.traj.json").read_text(encoding="utf-8")
    doc = json.loads(src)
    doc["messages"][4]["content"] = 12345
    text = json.dumps(doc, indent=2)
    (tmp_path / "type.traj.json").write_text(text)
    with pytest.raises(TranscriptError, match="string 'content' in assistant message 4") as e:
        list(mini.read(tmp_path / "type.traj.json"))
    assert e.value.line == _line_of(text, '"content": 12345') - 2  # {, "role", then "content"
    doc["messages"][4]["content"] = "ok"
    doc["messages"][6]["content"] = "SENTINEL-6"
    doc["messages"][6]["extra"]["response"]["usage"]["prompt_tokens"] = "many"
    text = json.dumps(doc, indent=2)
    (tmp_path / "usage.traj.json").write_text(text)
    with pytest.raises(TranscriptError, match="usage 'prompt_tokens' in message 6") as e:
        list(mini.read(tmp_path / "usage.traj.json"))
    assert e.value.line == _line_of(text, '"content": "SENTINEL-6"') - 2
    (tmp_path / "cut.traj.json").write_text(src[:5000])
    with pytest.raises(TranscriptError) as e:
        list(mini.read(tmp_path / "cut.traj.json"))
    assert e.value.line == src[:5000].count("\n") + 1


# --- both -------------------------------------------------------------------------------------------


def test_sniffers_claim_only_their_own_files(transcripts_dir: Path) -> None:
    own = {SWE: swe, MINI: mini}
    for path in sorted(p for p in transcripts_dir.rglob("*") if p.is_file() and p.suffix != ".md"):
        head, first = head_of(path)
        for name, mod in own.items():
            assert mod.sniff(head, first) == (path.parent.name == name), (name, path)
    assert list(FORMATS).index(MINI) < list(FORMATS).index(SWE) < list(FORMATS).index("openai")
    assert module(SWE) is swe and module(MINI) is mini


@pytest.mark.parametrize(("folder", "name"), [(SWE, "ctf-katy.traj"),
                                              (SWE, "6e44b9__sweagenttestrepo-1c2844.traj"),
                                              (MINI, "sympy__sympy-22714.traj.json")])
def test_native_round_trip(tmp_path: Path, transcripts_dir: Path, folder: str, name: str) -> None:
    t = _one(module(folder).read, transcripts_dir / folder / name)
    out = tmp_path / "t.jsonl"
    out.write_text(to_jsonl(t), encoding="utf-8")
    assert _one(read_native, out) == t
