"""``compbench.data.synth`` — Synthetic coding-agent sessions with planted facts: retention measured against known
truth.

Each session: a system prompt; a user task with constraints (planted *decision* facts), the files to
look at and a follow-up task (so paths and the plan are received, user-provenance knowledge); turns where
the agent reads files (real-looking paths and code), runs tests (long logs with a planted *recall*
error and failing test id), edits files (planted *artifact* facts) and keeps a plan (planted
*continuation* items); and later turns that *use* earlier facts (the agent names the path it edited,
re-runs the failing test, respects the constraint), so needed-fact recall has needs to score.

Deterministic for a seed: transcript i draws from ``random.Random(f"{seed}:{i}")`` only. Cheap enough
to generate thousands of 200k-token sessions for the benchmarks.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from compbench.data.facts import fact_id, normalize, path_anchors
from compbench.data.transcript import Message, Text, ToolCall, ToolResult, Transcript

PROJECTS = ("billing-api", "geo-tiles", "ledger", "chat-relay", "image-cache", "notes-sync", "sched-core")
MODULES = ("parser", "tokens", "cache", "router", "models", "auth", "export", "schema", "retry", "queue")
LIBS = (("httpx", "requests"), ("pydantic", "marshmallow"), ("pytest", "unittest"), ("orjson", "json"),
        ("structlog", "logging"), ("click", "argparse"))
ERRORS = ("ValueError", "KeyError", "TypeError", "AttributeError", "IndexError", "RuntimeError")
WORDS = ("token", "offset", "payload", "header", "window", "record", "buffer", "cursor", "segment", "entry",
         "limit", "index", "batch", "frame", "route", "query", "field", "slot")


def _ident(r: random.Random) -> str:
    return f"{r.choice(WORDS)}_{r.choice(WORDS)}"


def _code(r: random.Random, lines: int) -> str:
    out: list[str] = []
    while len(out) < lines:
        name = _ident(r)
        out += [f"def {name}({r.choice(WORDS)}, {r.choice(WORDS)}=None):",
                f'    """Return the {r.choice(WORDS)} for a {r.choice(WORDS)}."""',
                f"    if {r.choice(WORDS)} is None:",
                f"        return {r.randint(0, 999)}",
                f"    return {r.choice(WORDS)}.{_ident(r)}({r.choice(WORDS)})", ""]
    return "\n".join(out[:lines])


def _log(r: random.Random, lines: int, failing: str | None, error: str | None) -> str:
    out = ["============ test session starts ============", f"collected {r.randint(20, 400)} items", ""]
    for k in range(lines):
        out.append(f"tests/test_{r.choice(MODULES)}.py::test_{_ident(r)} PASSED [{min(99, k * 100 // max(1, lines))}%]")
    if failing and error:
        out += ["", "================= FAILURES =================", f"_____ {failing.split('::')[-1]} _____",
                "    def test_case():", f">       assert {_ident(r)}() == {r.randint(1, 9)}", f"E       {error}", "",
                f"FAILED {failing} - {error}"]
    out.append(f"==== {'1 failed, ' if failing else ''}{lines} passed in {r.randint(1, 90)}.{r.randint(10, 99)}s ====")
    return "\n".join(out)


class _Builder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.facts: list[dict[str, Any]] = []
        self.calls = 0

    def add(self, role: str, *parts: Any) -> int:
        self.messages.append(Message(f"m{len(self.messages)}", role, tuple(parts)))  # type: ignore[arg-type]
        return len(self.messages) - 1

    def call(self, name: str, args: dict[str, Any]) -> ToolCall:
        self.calls += 1
        return ToolCall(f"call_{self.calls}", name, json.dumps(args))

    def fact(self, kind: str, text: str, anchors: tuple[str, ...], index: int, **meta: Any) -> None:
        self.facts.append({"id": fact_id(kind, f"planted:{anchors[0]}"), "kind": kind, "text": text,
                           "anchors": [normalize(a) for a in anchors], "first_index": index, "meta": meta})


def session(seed: int, i: int, turns: int = 30, log_lines: int = 60, code_lines: int = 80) -> Transcript:
    """One synthetic session; ``turns`` agent steps after the task, tool outputs of the given sizes."""
    r = random.Random(f"{seed}:{i}")
    b = _Builder()
    project = r.choice(PROJECTS)
    root = f"/home/dev/{project}"
    mods = r.sample(MODULES, 4)
    files = [f"{root}/src/{project.replace('-', '_')}/{m}.py" for m in mods]
    protected = f"{root}/migrations/{r.randint(1, 40):04d}_initial.py"
    use, avoid = r.choice(LIBS)
    b.add("system", Text("You are a coding agent. Use the tools to read, edit and test code."))
    pkg = project.replace("-", "_")
    plan_item = f"add regression test for empty {mods[0]} input"
    # the user names the files and the follow-up task: paths and the plan item are received (user) knowledge
    task = (f"In {project}, the {mods[0]} module mishandles empty {r.choice(WORDS)}s; fix it. Relevant files: "
            f"{', '.join(f'src/{pkg}/{m}.py' for m in mods)}. Then {plan_item}. Never modify {protected}. "
            f"Use {use} instead of {avoid}. Keep the public API unchanged.")
    u = b.add("user", Text(task))
    b.fact("decision", f"Never modify {protected}", (f"never modify {protected}",), u)
    b.fact("decision", f"Use {use} instead of {avoid}", (f"use {use} instead of {avoid}",), u)
    failing = f"tests/test_{mods[0]}.py::test_empty_{r.choice(WORDS)}"
    error = f"{r.choice(ERRORS)}: unexpected {r.choice(WORDS)} {r.randint(100, 999)!r} at offset {r.randint(0, 64)}"
    edited: list[str] = []
    for turn in range(turns):
        phase = turn % 6
        if turn == 0:
            c = b.call("bash", {"command": f"pytest {failing.split('::')[0]} -x"})
            b.add("assistant", Text("Let me reproduce the failure first."), c)
            t = b.add("tool", ToolResult(c.id, "bash", _log(r, log_lines, failing, error)))
            b.fact("recall", failing, (failing,), t, what="test")
            b.fact("recall", error, (error,), t, what="error")
        elif turn == 1:
            c = b.call("todowrite", {"todos": [{"content": plan_item, "status": "pending"}]})
            b.add("assistant", Text(f"Plan:\n- [ ] {plan_item}\n- [ ] fix {mods[0]}"), c)
            b.fact("continuation", plan_item, (plan_item,), u)
            b.add("tool", ToolResult(c.id, "todowrite", "ok"))
        elif phase in (0, 2, 4):
            path = r.choice(files)
            c = b.call("read", {"file_path": path})
            b.add("assistant", Text(f"Reading {path.rsplit('/', 1)[-1]}."), c)
            b.add("tool", ToolResult(c.id, "read", _code(r, code_lines)))
        elif phase == 1 or (phase == 3 and not edited):
            path = r.choice(files)
            c = b.call("edit", {"file_path": path, "old_string": _ident(r), "new_string": _ident(r)})
            b.add("assistant", Text("Applying the fix."), c)
            if path not in edited:
                edited.append(path)
                b.fact("artifact", path, path_anchors(path), u, modified=True)
            b.add("tool", ToolResult(c.id, "edit", "The file has been updated."))
        elif phase == 3:
            # use earlier facts from memory: the edited file, the failing test and its error
            c = b.call("bash", {"command": f"pytest {failing} -q"})
            b.add("assistant", Text(f"I changed {edited[-1]} so {failing} should no longer raise "
                                    f"{error.split(':')[0]}; still honouring the plan: {plan_item}."), c)
            b.add("tool", ToolResult(c.id, "bash", _log(r, log_lines, None, None)))
        else:
            b.add("assistant", Text(f"Continuing. As you asked, I will never modify {protected} and will "
                                    f"use {use} instead of {avoid}."))
            b.add("user", Text(r.choice(("ok, go on", "continue", "looks good so far"))))
    b.add("assistant", Text(f"Done. Modified: {', '.join(edited) or 'nothing'}. {failing} passes."))
    meta = {"model": "synthetic", "seed": seed, "index": i, "planted_facts": b.facts, "project": project}
    return Transcript(f"synth-{seed}-{i:05d}", "synth", tuple(b.messages), meta)


def generate(n: int, seed: int = 0, turns: int = 30, log_lines: int = 60, code_lines: int = 80
             ) -> Iterator[Transcript]:
    for i in range(n):
        yield session(seed, i, turns, log_lines, code_lines)
