"""The working set reads a call that runs other calls (Codex code mode's ``exec``, whose importer lists them in
``meta["inner_calls"]``) as the calls it made: the same deliveries and uses as the plain calls, on hand-made
sessions; a malformed list is the call itself."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compbench.data.transcript import Message, Text, ToolCall, ToolResult, Transcript
from compbench.measure.tokens import TokenCounter
from compbench.measure.workset import INNER_CALLS, WorkingSet, made

PATH = "/w/src/app/main.py"
BODY = "\n".join(f"def handler_{i}(request):  # route number {i} of the service" for i in range(30))
READ = {"cmd": f"sed -n '1,200p' {PATH}", "workdir": "/w"}
PATCH = f"*** Begin Patch\n*** Update File: {PATH}\n@@\n-def handler_1\n+def handler_one\n*** End Patch"
SEARCH = {"cmd": "rg -n handler src"}


def _session(plain: bool) -> Transcript:
    """read main.py, search, patch main.py, say what changed in main.py: as plain calls or as exec scripts."""
    steps: list[tuple[str, Any, str]] = [("exec_command", READ, BODY), ("exec_command", SEARCH, BODY[:400]),
                                         ("apply_patch", PATCH, "Success")]
    msgs = [Message("u", "user", (Text("fix the routes"),))]
    for k, (name, args, out) in enumerate(steps):
        text = args if isinstance(args, str) else json.dumps(args)
        if plain:
            call, meta = ToolCall(f"c{k}", name, text), {}
        else:
            call = ToolCall(f"c{k}", "exec", f"await tools.{name}({text!r})")  # the script the model wrote
            meta = {INNER_CALLS: {f"c{k}": [[name, text]]}}
        msgs += [Message(f"a{k}", "assistant", (Text("working"), call), meta=meta),
                 Message(f"t{k}", "tool", (ToolResult(f"c{k}", call.name, out),))]
    msgs.append(Message("a9", "assistant", (Text("renamed handler_1 in src/app/main.py"),)))
    return Transcript("t", "codex", tuple(msgs))


def _shape(ws: WorkingSet) -> tuple[object, object]:
    return ([(d.key, d.kind, d.message) for d in ws.deliveries],
            sorted((i, u.key, u.how) for i, us in ws.uses.items() for u in us))


def test_a_script_is_read_as_the_plain_calls_it_makes(chars4: TokenCounter) -> None:
    plain, scripted = _session(True), _session(False)
    ws_plain = WorkingSet.build(plain, chars4.index(plain).part_tokens)
    ws_script = WorkingSet.build(scripted, chars4.index(scripted).part_tokens)
    assert _shape(ws_script) == _shape(ws_plain)
    keys = {d.key for d in ws_plain.deliveries}
    assert keys == {"file:app/main.py", "search:rg -n handler src"}
    assert (5, "file:app/main.py", "edit") in _shape(ws_plain)[1]


def test_without_the_list_a_script_delivers_nothing(chars4: TokenCounter) -> None:
    bare = _session(False)
    bare = Transcript("t", "codex", tuple(Message(m.id, m.role, m.parts, m.usage, {}) for m in bare.messages))
    assert WorkingSet.build(bare, chars4.index(bare).part_tokens).deliveries == ()


@pytest.mark.parametrize("listed", [None, [], "exec_command", [["exec_command"]], {"c1": [["ls", "{}"]]}])
def test_a_malformed_list_is_the_call_itself(listed: object) -> None:
    call = ToolCall("c0", "exec", "await tools.exec_command({cmd: 'ls'})")
    meta = {INNER_CALLS: listed if isinstance(listed, dict) else {"c0": listed}}
    assert made(Message("a", "assistant", (call,), meta=meta), call) == (call,)
    good = {INNER_CALLS: {"c0": [["exec_command", '{"cmd": "ls"}'], ["bad"]]}}
    assert made(Message("a", "assistant", (call,), meta=good), call) == (ToolCall("c0", "exec_command",
                                                                                  '{"cmd": "ls"}'),)
