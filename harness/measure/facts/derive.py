"""``compbench.measure.facts.derive`` — Derived facts: deterministic extractors over a transcript.

- artifact: file paths from tool-call arguments (and ``*** Update File:`` patch headers), split into
  modified (written by an edit/write/patch tool) and only read;
- recall: exception lines from tool output, failing test ids (on FAILED/ERROR lines), the commands the agent ran, URLs;
- decision: imperative user sentences (must, never, always, don't, do not, use X instead of Y);
- continuation: open plan items (``- [ ]`` checkboxes, todo-tool entries not completed).

Anchors are normalized (see :func:`compbench.measure.facts.normalize`). A path fact also matches on its last
two components (``api/views.py`` for ``/home/u/proj/src/api/views.py``): summaries shorten absolute
paths, and two components are specific enough in practice — that is the documented fuzzy threshold.

Anchors must be *specific*: a bare word (``pytest``, an exception class with no message) matches any
mention, so it makes no fact. An exception becomes a fact only with its message (``KeyError: 'user'``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from compbench.data.transcript import Message, ToolCall, ToolResult, Transcript
from compbench.measure.facts import Fact, Kind, fact_id, normalize

# Tool names (lower-cased) whose path argument is written, across the agents compbench imports.
WRITE_TOOLS = frozenset({
    "edit", "write", "multiedit", "str_replace", "str_replace_editor", "create", "apply_patch", "patch",
    "write_file", "edit_file", "notebookedit", "replace", "insert", "create_file",
})
PATH_KEYS = ("file_path", "filePath", "path", "filename", "file", "notebook_path", "target_file")
COMMAND_KEYS = ("command", "cmd", "script")
TODO_TOOLS = frozenset({"todowrite", "todo_write", "update_plan", "todo"})
PATH_TAIL_COMPONENTS = 2
MAX_ANCHOR_CHARS = 80

# File names an agent types without having seen them (a project's manifest, readme, build and instruction
# files): a later use of one is not knowledge the view must have kept. Measured at the real compactions in
# ../shared: of the paths an agent used after a compaction that the summary did not carry, 40% of these names
# (6 of 15) were used before any output showed them again, against 28% of other paths (41 of 148).
CONVENTIONAL = re.compile(
    r"(?:^|/)(?:package\.json|package-lock\.json|pnpm-lock\.yaml|yarn\.lock|readme(?:\.md|\.rst|\.txt)?|makefile|"
    r"dockerfile|docker-compose\.ya?ml|pyproject\.toml|setup\.py|setup\.cfg|requirements(?:-\w+)?\.txt|cargo\.toml|"
    r"cargo\.lock|go\.mod|go\.sum|tsconfig(?:\.\w+)?\.json|\.gitignore|\.env(?:\.\w+)?|claude\.md|agents\.md|"
    r"gemini\.md|changelog\.md|license(?:\.md)?|contributing\.md)$", re.I)
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
EXCEPTION_LINE = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:Error|Exception))\b(?::[ \t]*([^\n]{0,60}))?")
TEST_ID = re.compile(r"(?<![\w/.-])([\w./-]+\.py::[\w\[\]:.,-]+)")
FAILING_LINE = re.compile(r"^.*\b(?:FAILED|FAIL|ERROR)\b.*$", re.M)  # failing test ids, not every PASSED one
URL = re.compile(r"https?://[^\s\"'<>)\]}`]+")
DECISION = re.compile(
    r"\b(must not|must|never|always|don't|do not|should not|shouldn't|make sure|instead of|rather than)\b",
    re.I)
# A path- or file-name-shaped string in prose or output (summaries' fabrications, paths a listing names)
PATH_SHAPE = re.compile(r"(?<![\w@])(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|rb|md|json|"
                        r"ya?ml|toml|c|h|cpp|hpp|sh|sql|html|css|txt|cfg|ini|lock)\b")
CHECKBOX = re.compile(r"^\s*[-*] \[ \] (.{4,120})$", re.M)
# A file path inside a shell command (agents that only have a shell: SWE-agent, mini-swe-agent, Codex):
# a token with a known source-file extension, or a slash path of three or more components (so that a sed
# expression like ``s/a/b`` is not one). Only the command's first line: a heredoc's body is file content.
FILE_EXTENSIONS = ("py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|java|kt|kts|scala|swift|rb|php|cs|c|h|cc|cpp|hpp|m|mm|"
                   "lua|ex|exs|erl|hs|ml|clj|dart|r|jl|zig|sh|bash|zsh|ps1|sql|proto|graphql|md|rst|txt|json|"
                   "jsonl|ya?ml|toml|ini|cfg|conf|lock|xml|html|css|scss|vue|svelte|gradle|tf|env|csv|ipynb")
COMMAND_PATH = re.compile(
    r"(?:(?<=^)|(?<=[\s'\"=(:<>|;&]))"
    r"(?P<path>(?:~|\.{1,2})?/?(?:[\w.@+-]+/)*[\w@+-][\w.@+-]*\.(?:" + FILE_EXTENSIONS + r")"
    r"|(?:~|\.{1,2})?/?[\w.@+-]+/[\w.@+-]+/[\w.@+/-]+)(?=$|[\s'\";|&)<>:,])")
WRITING_COMMAND = re.compile(r"^\s*(?:sed\s+-i|touch|tee|create|mkdir|cp|mv|rm)\b|\s(?:sed\s+-i|tee)\s")
SENTENCE = re.compile(r"(?:[^.!?\n]|\.(?=\S))+[.!?]?")  # a period inside a word (2.3.1, main.py) goes on


def call_args(call: ToolCall) -> dict[str, Any]:
    try:
        value = json.loads(call.args) if call.args else {}
    except (json.JSONDecodeError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def call_text(call: ToolCall) -> str:
    """A call's arguments as text: the strings inside them, decoded (no JSON escapes, no keys), or the raw
    arguments when they are not a JSON object."""
    args = call_args(call)
    return " ".join(_strings(args)) if args else call.args


def call_paths(call: ToolCall) -> tuple[list[str], bool]:
    """The file paths a tool call touches and whether it writes them."""
    args = call_args(call)
    paths = [v for k in PATH_KEYS if isinstance(v := args.get(k), str) and v.strip()]
    patched = [p.strip() for v in args.values() if isinstance(v, str) for p in PATCH_FILE.findall(v)]
    if not patched and "*** " in call.args:  # raw (non-JSON) apply_patch input
        patched = [p.strip() for p in PATCH_FILE.findall(call.args)]
    return paths + patched, call.name.lower() in WRITE_TOOLS or bool(patched)


# A web address without its scheme (``curl localhost:3000/api/health``, ``api.example.com/v1/users``): the host
# is a name a file system does not start with, or the path follows ``host:port``.
HOST = re.compile(r"(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|(?:[\w-]+\.)+(?:com|org|net|io|dev|app|ai|co|gov|edu|"
                  r"local|internal))(?::\d+)?(?:/|$)", re.I)


def url_like(text: str, start: int, path: str) -> bool:
    """Is ``path`` (found at ``start`` in ``text``) part of a web address rather than a file path?"""
    if "://" in text[max(0, start - 8):start + len(path)]:
        return True
    if HOST.match(path):
        return True
    before = text[max(0, start - 64):start]
    # the path right after ``host:`` is the port and the route: localhost:3000/api/health
    return before.endswith(":") and bool(re.search(r"(?:localhost|[\w-]+\.[\w.-]+|\d+\.\d+\.\d+\.\d+):$", before))


def command_paths(command: str) -> list[tuple[str, bool]]:
    """The file paths a shell command names (first line only) and whether it writes each: a redirect
    target, or any path of a writing command (``sed -i``, ``touch``, ``tee``, SWE-agent's ``create``)."""
    line = command.split("\n", 1)[0]
    if "." not in line and "/" not in line:
        return []
    writes = bool(WRITING_COMMAND.search(line))
    out: list[tuple[str, bool]] = []
    for m in COMMAND_PATH.finditer(line):
        path = m.group("path")
        if url_like(line, m.start(), path):
            continue
        redirected = line[:m.start()].rstrip().endswith(">")
        out.append((path, writes or redirected))
    return out


def call_commands(call: ToolCall) -> list[str]:
    args = call_args(call)
    out: list[str] = []
    for k in COMMAND_KEYS:
        v = args.get(k)
        if isinstance(v, list):
            v = " ".join(x for x in v if isinstance(x, str))
        if isinstance(v, str) and v.strip():
            out.append(v.strip())
    return out


def error_lines(text: str) -> list[str]:
    """``Type: message`` for each exception mentioned with a message in a tool output (a bare class name
    is no fact: it would match every later mention of the class)."""
    if "Error" not in text and "Exception" not in text:  # cheap C check before the regex scan
        return []
    return [f"{m.group(1)}: {msg}" for m in EXCEPTION_LINE.finditer(text)
            if m.group(2) and len(msg := m.group(2).strip()) >= 3]


_PLAIN_WORD = re.compile(r"[a-z-]+")


def specific(anchor: str) -> bool:
    """An anchor precise enough to stand for one fact: at least 4 characters and not one plain word."""
    return len(anchor) >= 4 and not _PLAIN_WORD.fullmatch(anchor)


def path_anchors(path: str) -> tuple[str, ...]:
    p = normalize(path).rstrip("/")
    parts = [x for x in p.split("/") if x and x != "."]
    tail = "/".join(parts[-PATH_TAIL_COMPONENTS:])
    return (p,) if tail == p or len(parts) <= PATH_TAIL_COMPONENTS else (p, tail)


def _clip_anchor(text: str) -> str:
    return normalize(text)[:MAX_ANCHOR_CHARS].strip()


# The values a constraint fixes, which an agent later uses without restating the rule ("the test server must
# listen on port 8431", then ``pytest --port 8431``): quoted or backticked text, flags, numbers of four digits
# or more and versions, identifiers with an underscore or an inner capital.
VALUE = re.compile(r"`([^`\n]{4,60})`|\"([^\"\n]{4,60})\"|(?<![\w-])(--?[a-z][\w-]{3,})|"
                   r"(?<![\w.])(\d+(?:\.\d+)+|\d{4,})(?!\w|\.\d)|\b([A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z]\w+)\b")


def _values(sentence: str) -> tuple[str, ...]:
    found = (next(g for g in m.groups() if g) for m in VALUE.finditer(sentence))
    return tuple(dict.fromkeys(a for v in found if specific(a := _clip_anchor(v)) or a.startswith("-")))


def _decisions(text: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(sentence, anchors) for each imperative sentence: the clause from the keyword on, up to six words,
    without the sentence's closing punctuation (a restatement goes on where it stopped), then the values the
    sentence fixes (a later action that uses one needs the constraint)."""
    for s in SENTENCE.findall(text):
        m = DECISION.search(s)
        if not m:
            continue
        words = s[m.start():].split()
        if len(words) < 3:
            continue
        clause = _clip_anchor(" ".join(words[:6])).rstrip(".!?,;:")
        yield " ".join(s.split())[:200], (clause, *(v for v in _values(s) if v != clause))


def _todos(call: ToolCall) -> Iterator[str]:
    args = call_args(call)
    items = args.get("todos") or args.get("plan") or []
    if isinstance(items, list):
        for it in items:
            if isinstance(it, dict):
                text = it.get("content") or it.get("step") or it.get("text")
                status = str(it.get("status", "")).lower()
                if isinstance(text, str) and text.strip() and status not in ("completed", "done", "cancelled"):
                    yield text.strip()


def extract(t: Transcript) -> list[Fact]:
    """Every derived fact of ``t``, deduplicated by (kind, first anchor), in order of appearance."""
    found: dict[tuple[str, str], Fact] = {}

    def add(kind: Kind, text: str, anchors: tuple[str, ...], i: int, **meta: Any) -> None:
        anchors = tuple(a for a in anchors if specific(a))
        if not anchors:
            return
        # one file named several ways (absolute, relative, from another folder) is one fact: paths are keyed
        # by their tail, the last PATH_TAIL_COMPONENTS components
        key = (kind, anchors[-1] if kind == "artifact" else anchors[0])
        if key in found:
            if meta.get("modified") and not found[key].meta.get("modified"):
                old = found[key]
                found[key] = Fact(old.id, old.kind, old.text, old.anchors, old.first_index, "derived",
                                  {**old.meta, "modified": True})
            return
        found[key] = Fact(fact_id(kind, anchors[0]), kind, text, anchors, i, "derived", meta)

    for i, m in enumerate(t.messages):
        if m.meta.get("compaction"):
            continue
        _extract_message(m, i, add)
    return list(found.values())


def _conventional(path: str) -> dict[str, bool]:
    return {"conventional": True} if CONVENTIONAL.search(normalize(path).rstrip("/")) else {}


def _extract_message(m: Message, i: int, add: Any) -> None:
    if m.role == "user":
        for sentence, anchors in _decisions(m.text):
            add("decision", sentence, anchors, i)
    text = m.text
    if "[ ]" in text:
        for item in CHECKBOX.findall(text):
            add("continuation", item.strip(), (_clip_anchor(item),), i)
    for p in m.parts:
        if isinstance(p, ToolCall):
            paths, modified = call_paths(p)
            for path in paths:
                add("artifact", path, path_anchors(path), i, modified=modified, **_conventional(path))
            for cmd in call_commands(p):
                first = cmd.splitlines()[0]
                add("recall", first[:200], (_clip_anchor(first),), i, what="command")
                for path, writes in command_paths(cmd):
                    add("artifact", path, path_anchors(path), i, modified=writes, **_conventional(path))
            if p.name.lower() in TODO_TOOLS:
                for item in _todos(p):
                    add("continuation", item, (_clip_anchor(item),), i)
        elif isinstance(p, ToolResult):
            out = p.output[:200_000]
            for line in error_lines(out)[:5]:
                add("recall", line, (_clip_anchor(line),), i, what="error")
            failing = FAILING_LINE.findall(out)[:20] if "FAIL" in out or "ERROR" in out else []
            for line in failing:
                for tid in TEST_ID.findall(line):
                    add("recall", tid, (_clip_anchor(tid),), i, what="test")
            for url in (URL.findall(out)[:5] if "http" in out else ()):
                add("recall", url, (_clip_anchor(url),), i, what="url")
    if m.role == "user":
        for url in URL.findall(m.text)[:5]:
            add("recall", url, (_clip_anchor(url),), i, what="url")
