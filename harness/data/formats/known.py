"""``compbench.data.formats.known`` — Files of agent tools that compbench recognises but does not import, as data.

A folder walk lists each such file as skipped with its reason (never passed over in silence, never read
as another format), and a file named on the command line gets the same reason instead of a guess. An
importer for one of these tools removes its entry here (and the test that lists it), nothing else.

Each entry: what the file is, the file names a walk knows it by (``fnmatch`` patterns on the name, or on
the path's tail when the pattern holds a ``/``; hidden files included: several tools keep their logs in
dot-files), what its first 64 KiB hold (a file named explicitly, or walked under another name, is known by
that), and why it is skipped. Shapes from ../shared/real-logs/FORMATS.md and the tools' sources named there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePath

SQLITE = "SQLite format 3\x00"
NOT_YET = "not supported yet"
NOT_A_TRANSCRIPT = "not a transcript"


@dataclass(frozen=True)
class Known:
    what: str
    names: tuple[str, ...] = ()
    head: re.Pattern[str] | None = None
    tables: frozenset[str] = frozenset()  # a SQLite file holding these tables is this
    reason: str = NOT_YET
    per_folder: bool = False  # many files of one thing (an OpenHands conversation's events): listed once


UNSUPPORTED: tuple[Known, ...] = (
    Known("aider's prompt history (the user's inputs only)", (".aider.input.history",), reason=NOT_A_TRANSCRIPT),
)


def by_name(path: PurePath) -> Known | None:
    """The entry a walk knows this file by, from its name alone."""
    for k in UNSUPPORTED:
        for pattern in k.names:
            if "/" in pattern:
                tail = "/".join(path.parts[-(pattern.count("/") + 1):])
                if fnmatchcase(tail, pattern):
                    return k
            elif fnmatchcase(path.name, pattern):
                return k
    return None


def by_content(path: Path, head: str) -> Known | None:
    """The entry whose content the file shows: its first 64 KiB, or a SQLite file's tables."""
    if head.startswith(SQLITE):
        tables = _tables(path)
        return next((k for k in UNSUPPORTED if k.tables and k.tables <= tables), None)
    return next((k for k in UNSUPPORTED if k.head is not None and k.head.search(head)), None)


def _tables(path: Path) -> frozenset[str]:
    import sqlite3
    from urllib.parse import quote

    try:
        con = sqlite3.connect("file:" + quote(str(path.resolve())) + "?immutable=1", uri=True)
        try:
            return frozenset(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        finally:
            con.close()
    except sqlite3.Error:
        return frozenset()


def describe(k: Known) -> str:
    return f"{k.what}: {k.reason}"
