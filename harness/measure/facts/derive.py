"""``compbench.measure.facts.derive`` — Derived facts: deterministic extractors over a transcript.

- artifact: file paths from tool-call arguments (and ``*** Update File:`` patch headers), split into
  modified (written by an edit/write/patch tool) and only read;
- recall: exception lines from tool output, failing test ids (on FAILED/ERROR lines), the commands the agent ran, URLs;
- decision: imperative user sentences (must, never, always, don't, do not, use X instead of Y);
- continuation: open plan items (``- [ ]`` checkboxes, todo-tool entries not completed).

Anchors are normalized (see :func:`compbench.data.facts.normalize`). A path fact also matches on its last
two components (``api/views.py`` for ``/home/u/proj/src/api/views.py``): summaries shorten absolute
paths, and two components are specific enough in practice — that is the documented fuzzy threshold.

Anchors must be *specific*: a bare word (``pytest``, an exception class with no message) matches any
mention, so it makes no fact. An exception becomes a fact only with its message (``KeyError: 'user'``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from compbench.data.calls import call_args, call_commands, call_paths, command_paths
from compbench.data.facts import Fact, Kind, fact_id, normalize, path_anchors
from compbench.data.transcript import Message, ToolCall, ToolResult, Transcript

TODO_TOOLS = frozenset({"todowrite", "todo_write", "update_plan", "todo"})
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
SENTENCE = re.compile(r"(?:[^.!?\n]|\.(?=\S))+[.!?]?")  # a period inside a word (2.3.1, main.py) goes on


















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


def _path(add: Any, path: str, i: int, modified: bool) -> None:
    """A path fact: anchored on the path normalized and its tail (whose first anchor is what makes a file name
    conventional: package.json, README.md)."""
    anchors = path_anchors(path)
    if CONVENTIONAL.search(anchors[0]):
        add("artifact", path, anchors, i, modified=modified, conventional=True)
    else:
        add("artifact", path, anchors, i, modified=modified)


def _extract_message(m: Message, i: int, add: Any) -> None:
    text = m.text
    if m.role == "user":
        for sentence, anchors in _decisions(text):
            add("decision", sentence, anchors, i)
    if "[ ]" in text:
        for item in CHECKBOX.findall(text):
            add("continuation", item.strip(), (_clip_anchor(item),), i)
    for p in m.parts:
        if isinstance(p, ToolCall):
            paths, modified = call_paths(p)
            for path in paths:
                _path(add, path, i, modified)
            for cmd in call_commands(p):
                first = cmd.splitlines()[0]
                add("recall", first[:200], (_clip_anchor(first),), i, what="command")
                for path, writes in command_paths(cmd):
                    _path(add, path, i, writes)
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
        for url in URL.findall(text)[:5]:
            add("recall", url, (_clip_anchor(url),), i, what="url")
