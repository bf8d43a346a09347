"""``compbench.data.formats.cline_markdown`` — The markdown task export of Roo Code, Kilo Code, older Cline and
their forks (``roo_task_<date>.md``, ``kilo_code_task_<date>.md``, ``cline_task_<date>.md``).

Writer followed: RooCodeInc/Roo-Code cb836567180a ``src/integrations/misc/export-markdown.ts`` (``downloadTask``:
each stored API message as ``**User:**`` / ``**Assistant:**``, a blank line, its blocks joined by newlines, a
blank line; messages joined by ``---``; ``formatContentBlockToMarkdown``: ``[Tool Use: NAME]`` then
``Key: value`` lines, ``[Tool]`` / ``[Tool (Error)]`` then the output, ``[Image]``, ``[Reasoning]``), the same in
Kilo-Org/kilocode-legacy 56b73d3bdad4 and in Cline before the export was removed. An export of the XML era
(no ``[Tool Use: …]`` marker: the calls are XML in the assistant's text, ``[name …] Result:`` in the user's) has
its calls and results read by :mod:`.xml_tools`.

A file is this format only when it fits as a whole: it starts with a ``**User:**`` turn and every turn after a
separator starts with a turn header. The turns become API messages and are read as a task's API history
(:mod:`.cline_api`; :mod:`.cline_events` for the compactions), with the summaries an export shows, by text:

* a *user* turn starting ``## Conversation Summary`` (Roo Code's fresh start, which exports the whole stored
  history);
* an *assistant* turn with the condense summary's sections (``1. Previous Conversation:`` ...
  ``6. Pending Tasks and Next Steps:``, Roo Code 04fc2a02's ``SUMMARY_PROMPT``) directly after the first user
  turn (the export of ``[first, summary, ...kept]``), or right after another assistant turn (the summary
  inserted before the kept messages; the first message kept, as from 3dfa5269).

No token usage, no timestamps. Which tool (:func:`tool_of`, said in ``meta["tool_evidence"]``): a Cline mode line
(``ACT MODE`` / ``PLAN MODE``) says Cline, a ``<slug>`` mode the Roo Code family; within it Kilo Code (and its
forks) by the file name (``kilo_code_task_``, or a fork's that names Kilo: ``coderider_kilo_task_``), a tool only
Kilo Code has (``new_rule``, ``report_bug``, ``condense``, ``delete_file``, ``fast_edit_file``) or its
``.kilocode/`` project folder or name in the text. A fork's export, named by the fork (``code_assistant_task_…``),
keeps that name in ``meta["fork"]``. A Kilo Code log is labelled Kilo Code (``source="kilo-code"``) wherever the
tool is named, and replayed by ``roo-code`` at its ``kilo`` preset (the strategy's ``Tool.formats``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from compbench.data.formats import cline_api, xml_tools
from compbench.data.formats.cline_events import ROO_HEADING, assemble, find
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

NAME = "cline-markdown"
WALK_SUFFIXES = (".md",)  # a text format: a walk offers .md files to sniff (a README is passed over)
HEADERS = {"**User:**": "user", "**Assistant:**": "assistant"}
_TURN = re.compile(r"\n\n---\n\n(?=\*\*(?:User|Assistant):\*\*\n)")
_TOOL_USE = re.compile(r"^\[Tool Use: ([^\]\n]+)\]$", re.M)
_TOOL_RESULT = re.compile(r"^\[Tool( \(Error\))?\]$", re.M)
_KEY = re.compile(r"^([A-Z][A-Za-z0-9_]*): ", re.M)
SECTIONS = ("Previous Conversation:", "Current Work:", "Key Technical Concepts:", "Relevant Files and Code:",
            "Problem Solving:", "Pending Tasks and Next Steps:")
MAX_BYTES = 256 * 2**20


def _normalized(text: str) -> str:
    return text.lstrip("\ufeff").replace("\r\n", "\n")


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """The file starts with a ``**User:**`` turn header and its blank line, as the exporter writes it."""
    return first is None and _normalized(head).startswith("**User:**\n\n")


def turns(text: str) -> list[tuple[str, str]]:
    """(role, content) of each turn, or [] if the text is not an export as a whole."""
    text = _normalized(text)
    out = []
    for chunk in _TURN.split(text):
        header, _, body = chunk.partition("\n")
        role = HEADERS.get(header.strip())
        if role is None:
            return []
        out.append((role, body.strip("\n")))
    return out if out and out[0][0] == "user" and any(text.strip() for _, text in out) else []


def _tool_use(name: str, body: str) -> dict[str, Any]:
    """``Key: value`` lines back to an input object (the exporter capitalized the first letter of each key). A
    heuristic: a line of a multi-line value that starts like ``Word: `` starts a new key."""
    args: dict[str, str] = {}
    keys = list(_KEY.finditer(body))
    for k, m in enumerate(keys):
        end = keys[k + 1].start() if k + 1 < len(keys) else len(body)
        args[m.group(1)[0].lower() + m.group(1)[1:]] = body[m.end():end].rstrip("\n")
    return {"type": "tool_use", "name": name, "input": args if args or not body else {"input": body}}


def _blocks(role: str, text: str, n: int, calls: list[str]) -> list[dict[str, Any]]:
    """A turn's text split at the exporter's tool markers into API content blocks."""
    marker = _TOOL_USE if role == "assistant" else _TOOL_RESULT
    found = list(marker.finditer(text))
    blocks: list[dict[str, Any]] = []
    if not found or found[0].start() > 0:
        blocks.append({"type": "text", "text": text[: found[0].start() if found else len(text)].strip("\n")})
    for k, m in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(text)
        body = text[m.end():end].strip("\n")
        if role == "assistant":
            cid = f"md-{n}-{k}"
            calls.append(cid)
            blocks.append({**_tool_use(m.group(1), body), "id": cid})
        else:
            env = body.find("<environment_details>")
            result, rest = (body[:env].rstrip("\n"), body[env:]) if env > 0 else (body, "")
            blocks.append({"type": "tool_result", "tool_use_id": calls.pop(0) if calls else f"md-{n}-{k}",
                           "content": result, "is_error": bool(m.group(1))})
            if rest:
                blocks.append({"type": "text", "text": rest})
    return [b for b in blocks if b["type"] != "text" or b["text"]] or [{"type": "text", "text": ""}]


def _is_roo_summary(text: str) -> bool:
    at = [text.find(s) for s in SECTIONS]
    found = [a for a in at if a >= 0]
    return len(found) >= 4 and found == sorted(found)


def messages(pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """The turns as API messages, summaries marked as the tool marks them in its API history."""
    out: list[dict[str, Any]] = []
    calls: list[str] = []
    for n, (role, text) in enumerate(pairs):
        m: dict[str, Any] = {"role": role, "content": _blocks(role, text, n, calls)}
        if role == "user" and text.startswith(ROO_HEADING):
            m.update({"isSummary": True, "condenseId": f"md-summary-{n}"})
        elif role == "assistant" and _is_roo_summary(text) and (n == 1 or pairs[n - 1][0] == "assistant"):
            m.update({"isSummary": True, "condenseId": f"md-summary-{n}", "content": [{"type": "text", "text": text}]})
            if n > 1:
                m["keepFirst"] = True
        if role == "assistant" and m.get("isSummary"):
            calls.clear()
        out.append(m)
    return out


# Evidence of the Kilo Code family in an export whose file name is a fork's: its own tools, its project folder
_KILO_TEXT = re.compile(r"(?:^|[\s/'\"(])\.kilocode/|\bKilo ?Code\b", re.M)
_ROO_TEXT = re.compile(r"(?:^|[\s/'\"(])\.roo/", re.M)


OWN_EXPORTS = ("roo_task_", "kilo_code_task_", "cline_task_")  # the file names the three tools give an export


def _fork(path: Path) -> str:
    """The name a fork gave its export (``code_assistant`` of ``code_assistant_task_<date>.md``), when it is not
    one of the three tools' own; "" otherwise."""
    name = path.name
    if name.startswith(OWN_EXPORTS) or "_task_" not in name:
        return ""
    return name.split("_task_", 1)[0]


def tool_of(text: str, path: Path, called: dict[str, int] | None = None) -> tuple[str, str]:
    """Which tool of the family wrote the export, and the evidence: Cline's mode line; Kilo Code's file name, its
    own tools (called, or answered), its ``.kilocode/`` project folder or its name in the text; else Roo Code's
    (its ``<slug>`` mode section, which Kilo Code writes too). A fork is named by the family it forked."""
    if re.search(r"# Current Mode\n(?:ACT|PLAN) MODE", text):
        return "cline", "Cline's mode line in the environment details"
    if "kilo_code_task_" in path.name:
        return "kilo-code", "the export's file name (kilo_code_task_); its content is Roo Code's"
    fork = _fork(path)
    if fork and xml_tools.kilo_named(fork):
        return "kilo-code", f"the export's file name ({fork}_task_): a Kilo Code fork's, its content Roo Code's"
    kilo_tools = sorted((set(called or {}) | xml_tools.result_names([text])) & xml_tools.KILO_ONLY
                        - xml_tools.ROO_TOOLS)
    roo_named = bool(re.search(r"# Current Mode\n<slug>", text))
    if kilo_tools and roo_named:
        return "kilo-code", f"Kilo Code's own tool{'s' * (len(kilo_tools) != 1)} ({', '.join(kilo_tools)}) in a " \
                            "Roo Code-family export: a Kilo Code fork"
    found = _KILO_TEXT.search(text)
    if found and roo_named and not _ROO_TEXT.search(text):
        return "kilo-code", (f"Kilo Code's {found.group(0).strip(chr(39) + chr(34) + '(/ ')} in a Roo Code-family "
                             "export: a Kilo Code fork")
    if roo_named:
        return "roo-code", "Roo Code's mode section (<slug>) in the environment details (Kilo Code writes the same)"
    return "roo-code", "no tool-specific text: the Roo Code family assumed"


def read(path: Path) -> Iterator[Transcript]:
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise TranscriptError(path, None, f"a markdown export under {MAX_BYTES // 2**20} MiB")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TranscriptError(path, raw[: e.start].count(b"\n") + 1, "UTF-8 text") from None
    pairs = turns(text)
    if not pairs:
        raise TranscriptError(path, 1, "a task export: **User:** / **Assistant:** turns separated by '---', "
                                       "the first a **User:** turn")
    doc, xml = xml_tools.to_native(messages(pairs))
    conv = cline_api.convert(doc)
    tool, evidence = tool_of(_normalized(text), path, xml.names)
    found = find(doc, conv, None, tool, {})
    msgs, records = assemble(conv, found)
    records = [replace(rc, meta={**rc.meta, "from": "markdown export (no usage, no timestamps)"}) for rc in records]
    meta: dict[str, Any] = {"path": str(path), "tool_evidence": evidence, "turns": len(pairs)}
    fork = _fork(path)
    if fork:
        meta["fork"] = fork
    warnings = list(found.warnings)
    if xml.calls or xml.results:
        meta["tool_protocol"] = "xml"
        warnings.insert(0, xml_tools.describe(xml))
    model = re.search(r"<model>([^<\n]{1,200})</model>", text)
    if model:
        meta["model"] = model.group(1).strip()
    yield Transcript(path.stem, tool, tuple(msgs), meta, tuple(records), tuple(warnings))
