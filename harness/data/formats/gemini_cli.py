"""``compbench.data.formats.gemini_cli`` — Gemini CLI (google-gemini/gemini-cli), every artefact it writes:

* its chat recordings, ``~/.gemini/tmp/<project>/chats/session-*.json`` (up to v0.38) and ``.jsonl``
  (v0.39+): :mod:`.gemini_recording`;
* ``/chat save`` checkpoints (``checkpoint-<tag>.json``: ``{history, authType}``, before that a bare array),
  ``/chat share`` JSON (an array of Content) and markdown: :mod:`.gemini_export`.

Each is recognised as a whole: every Content of a dump is ``{role: user|model, parts: [...]}``, a recording
has its session id and project hash and message records with ids. Source commits: see each module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats.detect import Misfit
from compbench.data.formats.gemini_content import is_content
from compbench.data.formats.gemini_export import is_checkpoint, read_document, read_markdown, sniff_markdown
from compbench.data.formats.gemini_recording import is_header
from compbench.data.formats.gemini_recording import read as read_recording
from compbench.data.formats.jsonio import is_document, load_json
from compbench.data.transcript import Transcript

NAME = "gemini-cli"
RECORD_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
WALK_SUFFIXES = (".md",)  # /chat share markdown: a walk offers .md files to sniff (a README is passed over)
# Storage (packages/core/src/config/storage.ts @ 5411f11): ~/.gemini holds settings, credentials
# (oauth_creds.json, google_accounts.json), tmp/<project>/ (chats/, checkpoint-<tag>.json, logs.json,
# tool-outputs/) and history/<project>/ (a shadow git repository).
HOME_MARKERS = ("settings.json", "oauth_creds.json", "google_accounts.json", "installation_id", "projects.json")
SESSION = re.compile(r"session-.+\.jsonl?")
CHECKPOINT = re.compile(r"checkpoint-.+\.json")
READ = r"(?:chats/(?:session-[^/]+\.jsonl?|[^/]+/[^/]+\.jsonl)|checkpoint-[^/]+\.json)"


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A recording's metadata line, or a later line only Gemini CLI writes; without JSON, a markdown export."""
    if first is None:
        return sniff_markdown(head)
    if is_header(first):
        return "type" not in first and "payload" not in first
    if isinstance(first.get("$set"), dict) and len(first) == 1:
        return True
    if isinstance(first.get("$rewindTo"), str) and len(first) == 1:
        return True
    return first.get("type") == "gemini" and isinstance(first.get("id"), str) and "content" in first


def sniff_document(doc: Any) -> bool:
    """A recording, a checkpoint or a share JSON, each whole."""
    if is_header(doc):
        msgs = doc.get("messages")
        return isinstance(msgs, list) and all(_is_record(m) for m in msgs)
    if is_checkpoint(doc):
        return all(is_content(c) for c in doc["history"])
    return isinstance(doc, list) and bool(doc) and all(is_content(c) for c in doc)


def misfit(doc: Any) -> Misfit | None:
    """A list most of whose items are Gemini Contents: how many are not."""
    items = doc["history"] if isinstance(doc, dict) and isinstance(doc.get("history"), list) else doc
    if not isinstance(items, list) or not items:
        return None
    good = sum(is_content(c) for c in items)
    if good * 2 < len(items):
        return None
    return Misfit(NAME, "a list of Gemini Content", len(items) - good, len(items),
                  "items are not {role: user|model, parts: [part objects]}")


def tool_folder(d: Path, names: set[str]) -> tuple[Path, tuple[Callable[[str], bool], str]] | None:
    """A folder of Gemini CLI's, found from one of its folders ``d`` (holding ``names``): the home (``~/.gemini``)
    or a project's temp folder, read only through its recordings and checkpoints; a ``.json`` recording that
    Gemini CLI migrated to ``.jsonl`` on resuming (same session, all of it) is read once, from the ``.jsonl``."""
    if d.name == "chats" and any(SESSION.fullmatch(n) for n in names):
        project = d.parent
    elif any(CHECKPOINT.fullmatch(n) for n in names) and ("logs.json" in names or (d / "chats").is_dir()):
        project = d
    else:
        return None
    home = project.parent.parent
    if project.parent.name == "tmp" and (home.name == ".gemini" or any((home / m).exists() for m in HOME_MARKERS)):
        root, pattern, what = home, re.compile(r"tmp/[^/]+/" + READ), "a Gemini CLI home"
    else:
        root, pattern, what = project, re.compile(READ), "a Gemini CLI project folder"

    def reads(rel: str) -> bool:
        return pattern.fullmatch(rel) is not None and not (rel.endswith(".json") and (root / (rel + "l")).exists())

    return root, (reads, what + ": read its chat recordings and checkpoints, not the {n} beside them (settings, "
                  "credentials, prompt logs, tool outputs, history snapshots, recordings migrated to .jsonl)")


def _is_record(m: Any) -> bool:
    return isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("type"), str) \
        and m["type"] in RECORD_TYPES


def read(path: Path) -> Iterator[Transcript]:
    with path.open("rb") as f:
        start = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if start not in (b"{", b"["):
        yield read_markdown(path)
    elif is_document(path):
        doc = load_json(path)
        yield read_recording(path, doc) if is_header(doc) else read_document(path, doc)
    else:
        yield read_recording(path)
