"""``compbench.data.calls`` — What a tool call does: the files it reads or writes, the commands it runs, the content
it delivers.

One reading of a recorded call, shared by everyone who asks: facts derive paths and commands from it, the
working set keys the content it delivers (``file:``, ``search:``, ``inspect:``), summarizers copy its paths,
and a strategy that re-attaches files after compacting (Claude Code) finds the files read last.

Across the agents compbench imports, a call names its file in one of :data:`PATH_KEYS`, a patch in
``*** Update File:`` headers, a shell command in one of :data:`COMMAND_KEYS`; shell reads, searches and
inspections are recognized on the command's first line (a heredoc's body is file content, not a command).
File paths are keyed by their last two components (:func:`path_key`), as fact anchors are: one file named
several ways is one item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from compbench.data.facts import normalize
from compbench.data.transcript import ToolCall
from compbench.memo import Memo

# Tool names (lower-cased) whose path argument is written, across the agents compbench imports.
WRITE_TOOLS = frozenset({
    "edit", "write", "multiedit", "str_replace", "str_replace_editor", "create", "apply_patch", "patch",
    "write_file", "edit_file", "notebookedit", "replace", "insert", "create_file",
    # Cline, Roo Code, Kilo Code (their XML-era names too: formats.xml_tools)
    "write_to_file", "replace_in_file", "apply_diff", "insert_content", "search_and_replace", "search_replace",
    "append_to_file", "fast_edit_file",
})
WHOLE_FILE_WRITES = frozenset({"write", "create", "write_file", "create_file", "write_to_file"})


PATH_KEYS = ("file_path", "filePath", "path", "filename", "file", "notebook_path", "target_file")


COMMAND_KEYS = ("command", "cmd", "script")


PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)


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


# Each call's arguments decoded once: facts, the working set, the summarizers and a strategy re-attaching files
# read the same calls again and again. A bounded memo by the arguments' text (it starts over past the bound).
DECODED_CHARS = 64 * 2**20  # characters of arguments remembered at most
_DECODED: Memo[str, dict[str, Any]] = Memo(DECODED_CHARS)


def call_args(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as a JSON object (empty when they are not one). The dict is shared by every
    caller asking for the same arguments: read it, never change it."""
    raw = call.args
    if not raw:
        return {}
    found = _DECODED.find(raw)
    return found if found is not None else _DECODED.add(raw, _decode(raw))


def _decode(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        value = None
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


_TEXTS: Memo[str, str] = Memo(DECODED_CHARS)  # call_text by the arguments' text, bounded as the decoded arguments are


def call_text(call: ToolCall) -> str:
    """A call's arguments as text: the strings inside them, decoded (no JSON escapes, no keys), or the raw
    arguments when they are not a JSON object."""
    text = _TEXTS.find(call.args)
    if text is None:
        args = call_args(call)
        text = _TEXTS.add(call.args, " ".join(_strings(args)) if args else call.args)
    return text


def call_paths(call: ToolCall) -> tuple[list[str], bool]:
    """The file paths a tool call touches and whether it writes them."""
    args = call_args(call)
    paths = [v for k in PATH_KEYS if isinstance(v := args.get(k), str) and v.strip()]
    files = args.get("files")  # Roo Code's read_file / apply_diff: a list of {path, ...}
    if not paths and isinstance(files, list):
        paths = [v for f in files if isinstance(f, dict) for k in PATH_KEYS[:3] if isinstance(v := f.get(k), str)
                 and v.strip()]
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


Kind: TypeAlias = Literal["file", "search", "inspect"]


PATH_KEY_COMPONENTS = 2  # as fact anchors: /home/u/p/src/api/views.py -> api/views.py


READ_TOOLS = frozenset({"read", "view", "open", "read_file", "view_file", "cat", "readfile", "read_many_files",
                        "get_file_contents", "view_range"})


SEARCH_TOOLS = frozenset({"grep", "glob", "find", "find_file", "search_file", "search_dir", "ls", "list",
                          "list_dir", "list_directory", "list_files", "search_files", "codebase_search",
                          "file_search", "grep_search", "rg", "ripgrep"})


# a shell read of one file: the program, then its path (cd ... && first)
SHELL_READ = re.compile(r"^(?:cd\s+\S+\s*(?:&&|;)\s*)?(cat|sed\s+-n|head|tail|nl|less|more|bat|view)\b")


SHELL_SEARCH = re.compile(r"^(?:cd\s+\S+\s*(?:&&|;)\s*)?(rg|grep|egrep|fgrep|find|fd|ls|tree|git\s+grep|"
                          r"git\s+ls-files)\b")


SHELL_INSPECT = re.compile(r"^(?:cd\s+\S+\s*(?:&&|;)\s*)?(git\s+(?:show|log|blame)\b|man\s)|\s--help\b|\s-h$")


def path_key(path: str) -> str:
    parts = [x for x in normalize(path).rstrip("/").split("/") if x and x != "."]
    return "file:" + "/".join(parts[-PATH_KEY_COMPONENTS:])


@dataclass(frozen=True, slots=True)
class Touch:
    """What one tool call does to the working set: delivers ``key`` (``read``), or changes the file
    (``write``, which needs no content; ``edit``, which needs the text it replaces)."""

    key: str
    kind: Kind
    verb: Literal["read", "edit", "write"]


def touches(call: ToolCall) -> list[Touch]:
    """The content keys a tool call reads or changes."""
    name = call.name.lower()
    paths, writes = call_paths(call)
    if paths and name in READ_TOOLS:
        return [Touch(path_key(p), "file", "read") for p in paths]
    if paths and writes:
        verb: Literal["edit", "write"] = "write" if name in WHOLE_FILE_WRITES else "edit"
        return [Touch(path_key(p), "file", verb) for p in paths]
    if name in SEARCH_TOOLS:
        args = call_args(call)
        return [Touch("search:" + name + " " + " ".join(f"{k}={args[k]}" for k in sorted(args)), "search", "read")]
    for cmd in call_commands(call)[:1]:
        first = " ".join(cmd.split("\n", 1)[0].split())
        if SHELL_READ.match(first):
            read = [p for p, w in command_paths(first) if not w]
            if len(read) == 1:
                return [Touch(path_key(read[0]), "file", "read")]
        written = [p for p, w in command_paths(first) if w]
        if written:
            return [Touch(path_key(p), "file", "edit") for p in written]
        if SHELL_SEARCH.match(first):
            return [Touch("search:" + first, "search", "read")]
        if SHELL_INSPECT.search(first):
            return [Touch("inspect:" + first, "inspect", "read")]
    return []
