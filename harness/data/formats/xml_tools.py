"""``compbench.data.formats.xml_tools`` — The XML tool protocol of Cline, Roo Code, Kilo Code and their forks: tool
calls written in the assistant's text, results answered in the user's, turned into tool-call and tool-result blocks.

Before native tool calls these tools asked the model to write each call as XML in its reply and parsed it
themselves; the API history keeps the reply's text as it was and answers the call with user text:

* **Calls** (RooCodeInc/Roo-Code e356d058e9, the last commit with XML calls, ``src/core/assistant-message/
  parseAssistantMessage.ts``; cline/cline 36c3f93884 ``src/core/assistant-message/parse-assistant-message.ts``):
  a known tool's opening tag (``<read_file>``) anywhere in the text starts a call, which ends at its closing
  tag; inside it, a parameter's opening tag (``<path>``) starts a value that ends at its closing tag, trimmed
  (``content`` keeps its inner newlines: only one leading and one trailing newline go; ``write_to_file``'s
  content runs to the *last* ``</content>``). A call left open at the end of the text (the stream stopped) is
  still a call. Text around calls stays text.
* **Results** (``presentAssistantMessage.ts`` / Cline's ``Task``): ``[<name> for '<what>'] Result:`` (or
  ``[<name>] Result:``), then the result's text; a call not run says so on its own line (``Tool [<name>] was
  not executed because…``, ``Skipping tool [<name> …] due to…``, ``Tool [<name> …] was interrupted…``);
  ``<environment_details>`` (or Cline's ``<explicit_instructions …>``) closes the last result. ``The tool
  execution failed with the following error:`` starts an error result. A result answers the first unanswered
  call of that name in the assistant message before it (else the first unanswered one; else it is an orphan).

The tag set is the union of the three tools' tool names over their XML era (:data:`TOOL_NAMES`: Roo Code's
``toolNames`` over the history of ``packages/types/src/tool.ts``, Cline's ``toolUseNames``, Kilo Code's
additions); a fork's own tool is known by the result it was answered with (``[update_todo_list] Result:``
names it). Parameters are any child element of a call (Roo Code's parser knows its own names only; a fork's
are not in its list). Roo Code's multi-file ``args`` (``<file><path>…</path><line_range>…</line_range></file>``)
becomes the ``files`` list its native ``read_file`` takes, other ``args`` a nested object.

A document is read in this protocol only when it has no native tool call (a ``tool_use`` block): the two
protocols are never mixed in one history.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Roo Code (toolNames across packages/types/src/tool.ts and src/schemas/index.ts), Cline (toolUseNames across
# src/core/assistant-message/index.ts), Kilo Code (Kilo-Org/kilocode 0fc86cec packages/types/src/tool.ts,
# its kilocode_change block)
ROO_TOOLS = frozenset({
    "execute_command", "read_file", "write_to_file", "apply_diff", "insert_content", "search_and_replace",
    "search_replace", "edit_file", "apply_patch", "search_files", "list_files", "list_code_definition_names",
    "browser_action", "use_mcp_tool", "access_mcp_resource", "ask_followup_question", "attempt_completion",
    "switch_mode", "new_task", "fetch_instructions", "codebase_search", "update_todo_list", "run_slash_command",
    "generate_image", "read_command_output", "skill", "append_to_file"})
CLINE_TOOLS = frozenset({
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
    "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource", "ask_followup_question",
    "attempt_completion", "plan_mode_respond", "plan_mode_response", "load_mcp_documentation", "new_task",
    "condense", "summarize_task", "new_rule", "report_bug", "web_fetch"})
KILO_ONLY = frozenset({"fast_edit_file", "new_rule", "report_bug", "condense", "delete_file"})
TOOL_NAMES = ROO_TOOLS | CLINE_TOOLS | KILO_ONLY
# A Kilo Code fork names itself after Kilo (CodeRider-Kilo's exports: ``coderider_kilo_task_<date>.md``): a name
# part "kilo" or "kilocode" in its export's file name or its extension's id
_KILO_NAME = re.compile(r"(?:^|[_\-.])kilo(?:[_\-]?code)?(?:[_\-.]|$)", re.I)


def kilo_named(name: str) -> bool:
    """Does a fork's name (its export's prefix, its VS Code extension id) name Kilo Code?"""
    return _KILO_NAME.search(name) is not None

_NAME = r"[a-z][a-z0-9_]*"
_RESULT = re.compile(rf"^\[(?P<name>{_NAME})(?:\]| (?:for|to|in) [\s\S]*?\]) Result:[ \t]*$", re.M)
_NOT_RUN = re.compile(rf"^(?:Tool \[(?P<a>{_NAME})[^\n]*?\] was (?:not executed|interrupted and not executed)"
                      rf"|Skipping tool \[(?P<b>{_NAME})[^\n]*?\] due to)[^\n]*$", re.M)
_ELEMENT = re.compile(r"<([A-Za-z_][\w.-]*)>")
ERROR_PREFIXES = ("The tool execution failed with the following error:", "<error>")
# what the tool appends after the results: its environment details, Cline's instructions for an auto-compact
AFTER_RESULTS = ("<environment_details>", '<explicit_instructions type="')


@dataclass
class Stats:
    """What the rewrite found, for the transcript's meta and warnings."""

    calls: int = 0
    results: int = 0
    orphans: int = 0
    names: dict[str, int] = field(default_factory=dict)


def result_names(texts: Iterable[str]) -> set[str]:
    """Tool names the user turns answered (``[name …] Result:``): a fork's own tools among them."""
    return {m.group("name") for t in texts for m in _RESULT.finditer(t)}


def _value(name: str, raw: str) -> str:
    if name == "content":
        return raw.removeprefix("\n").removesuffix("\n")
    return raw.strip()


def _elements(text: str) -> list[tuple[str, str]] | None:
    """``text`` as a run of elements ``<a>…</a><b>…</b>`` (whitespace between), or None if it is not one."""
    out: list[tuple[str, str]] = []
    pos, s = 0, text.strip()
    while pos < len(s):
        m = _ELEMENT.match(s, pos)
        if m is None:
            return None
        close = f"</{m.group(1)}>"
        end = _matching(s, m.end(), m.group(1))
        if end < 0:
            return None
        out.append((m.group(1), s[m.end():end]))
        pos = end + len(close)
        while pos < len(s) and s[pos].isspace():
            pos += 1
    return out


def _matching(s: str, start: int, tag: str) -> int:
    """Where the ``</tag>`` closing the element opened before ``start`` begins (nesting counted), or -1."""
    depth, pos = 1, start
    opening, closing = f"<{tag}>", f"</{tag}>"
    while depth:
        c = s.find(closing, pos)
        if c < 0:
            return -1
        o = s.find(opening, pos)
        if 0 <= o < c:
            depth, pos = depth + 1, o + len(opening)
        else:
            depth, pos = depth - 1, c + len(closing)
            if not depth:
                return c
    return -1


def _nested(text: str) -> Any:
    """An element run as an object (a repeated child a list), its leaves as text; plain text as it is."""
    children = _elements(text)
    if not children:
        return text.strip()
    out: dict[str, Any] = {}
    for tag, inner in children:
        value = _nested(inner)
        if tag in out:
            out[tag] = [*out[tag], value] if isinstance(out[tag], list) else [out[tag], value]
        else:
            out[tag] = value
    return out


def _args(tool: str, params: dict[str, str]) -> dict[str, Any]:
    """The parameters as the call's input; Roo Code's multi-file ``args`` as its native form."""
    out: dict[str, Any] = dict(params)
    if "args" in params and _elements(params["args"]):
        nested = _nested(params["args"])
        files = nested.get("file") if isinstance(nested, dict) else None
        if tool in ("read_file", "apply_diff") and files is not None and set(nested) == {"file"}:
            del out["args"]
            out["files"] = files if isinstance(files, list) else [files]
        else:
            out["args"] = nested
    return out


def parse_calls(text: str, names: frozenset[str] | set[str]) -> list[tuple[str, Any]]:
    """The text as ``("text", str)`` and ``("call", (name, input))`` pieces, in order (Roo Code's parser: the first
    known opening tag starts a call; its parameters are its child elements)."""
    pieces: list[tuple[str, Any]] = []
    opening = re.compile(r"<(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")>")
    pos = 0
    while True:
        m = opening.search(text, pos)
        if m is None:
            break
        tool = m.group(1)
        before = text[pos:m.start()].strip()
        if before:
            pieces.append(("text", before))
        params, end = _params(text, m.end(), tool)
        pieces.append(("call", (tool, _args(tool, params))))
        pos = end
    rest = text[pos:].strip()
    if rest:
        pieces.append(("text", rest))
    return pieces


def _params(text: str, start: int, tool: str) -> tuple[dict[str, str], int]:
    """A call's parameters from ``start`` (after its opening tag) and where the call ends."""
    params: dict[str, str] = {}
    closing = f"</{tool}>"
    pos = start
    while True:
        close = text.find(closing, pos)
        m = _ELEMENT.search(text, pos)
        if m is None or (close >= 0 and close < m.start()):
            return params, (close + len(closing)) if close >= 0 else len(text)
        name = m.group(1)
        end_tag = f"</{name}>"
        if tool == "write_to_file" and name == "content":  # its content may hold the closing tag: the last one
            limit = close if close >= 0 else len(text)
            end = text.rfind(end_tag, m.end(), limit if limit > m.end() else len(text))
        else:
            end = text.find(end_tag, m.end())
        if end < 0:  # a parameter left open: the stream stopped there
            params[name] = _value(name, text[m.end():])
            return params, len(text)
        params[name] = _value(name, text[m.end():end])
        pos = end + len(end_tag)


def split_results(text: str, names: frozenset[str] | set[str]) -> list[tuple[str, Any]]:
    """A user turn's text as ``("text", str)`` and ``("result", (name, output, is_error))`` pieces, in order."""
    marks = sorted([(m.start(), m.end(), m.group("name"), True) for m in _RESULT.finditer(text)
                    if m.group("name") in names]
                   + [(m.start(), m.start(), m.group("a") or m.group("b"), False) for m in _NOT_RUN.finditer(text)
                      if (m.group("a") or m.group("b")) in names])
    if not marks:
        return [("text", text)] if text.strip() else []
    pieces: list[tuple[str, Any]] = []
    head = text[:marks[0][0]].strip()
    if head:
        pieces.append(("text", head))
    for k, (_, body, name, ran) in enumerate(marks):
        end = marks[k + 1][0] if k + 1 < len(marks) else len(text)
        chunk = text[body:end]
        tail = ""
        ends = [at for closer in AFTER_RESULTS if (at := chunk.find(closer)) >= 0]
        if ends:
            chunk, tail = chunk[:min(ends)], chunk[min(ends):]
        output = chunk.strip("\n")
        pieces.append(("result", (name, output, not ran or output.lstrip().startswith(ERROR_PREFIXES))))
        if tail.strip():
            pieces.append(("text", tail.strip()))
    return pieces


def is_xml_era(doc: Sequence[Any]) -> bool:
    """No native tool call anywhere in the history: its calls, if any, are XML in the text."""
    return not any(isinstance(m, dict) and isinstance(m.get("content"), list)
                   and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in m["content"])
                   for m in doc)


def _texts(m: Any) -> list[str]:
    c = m.get("content") if isinstance(m, dict) else None
    if isinstance(c, str):
        return [c]
    return [b["text"] for b in c or () if isinstance(b, dict) and b.get("type") == "text"
            and isinstance(b.get("text"), str)] if isinstance(c, list) else []


def to_native(doc: Sequence[Any]) -> tuple[list[Any], Stats]:
    """The API messages with XML calls and results as ``tool_use`` / ``tool_result`` blocks (ids ``xml-<i>-<k>``),
    each rewritten assistant message tagged ``xmlToolCalls``; a history with native calls comes back as it is."""
    stats = Stats()
    if not is_xml_era(doc):
        return list(doc), stats
    names = set(TOOL_NAMES) | result_names(t for m in doc if isinstance(m, dict) and m.get("role") == "user"
                                           for t in _texts(m))
    out: list[Any] = []
    open_calls: list[tuple[str, str]] = []  # (id, name) of the last assistant message's calls not answered yet
    for i, m in enumerate(doc):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            out.append(m)
            continue
        blocks = [{"type": "text", "text": m["content"]}] if isinstance(m.get("content"), str) else m.get("content")
        if not isinstance(blocks, list):
            out.append(m)
            continue
        if m["role"] == "assistant":
            new, calls = _assistant(i, blocks, names, stats)
            if calls:
                open_calls = calls
                out.append({**m, "content": new, "xmlToolCalls": True})
            else:
                out.append(m)
            continue
        new, changed = _user(i, blocks, names, open_calls, stats)
        out.append({**m, "content": new} if changed else m)
    return out, stats


def _assistant(i: int, blocks: list[Any], names: set[str], stats: Stats) -> tuple[list[Any], list[tuple[str, str]]]:
    new: list[Any] = []
    calls: list[tuple[str, str]] = []
    for b in blocks:
        if not (isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)):
            new.append(b)
            continue
        for kind, value in parse_calls(b["text"], frozenset(names)):
            if kind == "text":
                new.append({"type": "text", "text": value})
            else:
                name, args = value
                cid = f"xml-{i}-{len(calls)}"
                calls.append((cid, name))
                new.append({"type": "tool_use", "id": cid, "name": name, "input": args})
                stats.calls += 1
                stats.names[name] = stats.names.get(name, 0) + 1
    return (new or [{"type": "text", "text": ""}]), calls


def _user(i: int, blocks: list[Any], names: set[str], open_calls: list[tuple[str, str]],
          stats: Stats) -> tuple[list[Any], bool]:
    """Consecutive text blocks are read together (the writer put the marker, the result and the environment
    details in blocks of their own; an export joins them with newlines)."""
    new: list[Any] = []
    changed = False
    run: list[str] = []

    def flush() -> None:
        nonlocal changed
        if not run:
            return
        text = "\n".join(run)
        pieces = split_results(text, frozenset(names))
        if any(kind == "result" for kind, _ in pieces):
            changed = True
            for kind, value in pieces:
                if kind == "text":
                    new.append({"type": "text", "text": value})
                else:
                    name, output, error = value
                    new.append({"type": "tool_result", "tool_use_id": _answer(i, name, open_calls, stats),
                                "name": name, "content": output, "is_error": error})
        else:
            new.extend({"type": "text", "text": t} for t in run)
        run.clear()

    for b in blocks:
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
            run.append(b["text"])
        else:
            flush()
            new.append(b)
    flush()
    return new, changed


def _answer(i: int, name: str, open_calls: list[tuple[str, str]], stats: Stats) -> str:
    stats.results += 1
    pick = next((k for k, (_, n) in enumerate(open_calls) if n == name), 0 if open_calls else None)
    if pick is None:
        stats.orphans += 1
        return f"xml-{i}-result-{stats.results}"
    return open_calls.pop(pick)[0]


def describe(stats: Stats) -> str:
    """One line for a transcript's warnings: what the XML protocol gave."""
    names = ", ".join(f"{n} {c}" for n, c in sorted(stats.names.items()))
    orphans = f"; {stats.orphans} result{'s' * (stats.orphans != 1)} with no call before it" if stats.orphans else ""
    return (f"XML tool protocol: {stats.calls} call{'s' * (stats.calls != 1)} read from the assistant's text "
            f"({names}), {stats.results} result{'s' * (stats.results != 1)} from the user's{orphans}")


