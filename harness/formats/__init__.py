"""Importers: one module per native transcript format, chosen by content, never by file name alone.

Each format module defines ``NAME``, ``sniff(head, first) -> bool`` (``head``: the file's first
64 KiB as text; ``first``: its first JSON line parsed, or None) and ``read(path) -> Iterator[Transcript]``
raising :class:`~compbench.errors.TranscriptError` for anything it cannot read. Modules are imported
lazily, in detection order: specific formats first, the generic OpenAI chat format last.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

from compbench.errors import TranscriptError
from compbench.transcript import Transcript

# name -> module, in detection order
FORMATS: dict[str, str] = {
    "compbench": "compbench.formats.native",
    "claude-code": "compbench.formats.claude_code",
    "codex": "compbench.formats.codex",
    "opencode": "compbench.formats.opencode",
    "opencode-db": "compbench.formats.opencode_db",
    "pi": "compbench.formats.pi",
    "mini-swe-agent": "compbench.formats.mini_swe_agent",
    "swe-agent": "compbench.formats.swe_agent",
    "openai": "compbench.formats.openai_chat",
}

# Formats whose files hold many transcripts (each streamed); the others hold one transcript per file.
MULTI_TRANSCRIPT = frozenset({"compbench", "openai", "opencode-db"})
LIMIT_ENV = "COMPBENCH_MAX_TRANSCRIPT_MB"
DEFAULT_MAX_TRANSCRIPT_MB = 1024  # measured: a 200 MB transcript imports and replays in ~785 MB peak RSS


def max_transcript_bytes() -> int:
    import os

    raw = os.environ.get(LIMIT_ENV, "")
    try:
        return int(float(raw) * 2**20) if raw else DEFAULT_MAX_TRANSCRIPT_MB * 2**20
    except ValueError:
        raise TranscriptError(LIMIT_ENV, None, f"a number of MiB, got {raw!r}") from None


# Suffixes a directory walk picks up; a file named explicitly is always tried. Of SQLite files only
# OpenCode's store (``opencode.db``, also ``opencode-<channel>.db``) is picked up, not its -wal/-shm.
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".traj")


def _walked(name: str) -> bool:
    return name.endswith(TRANSCRIPT_SUFFIXES) or (name.startswith("opencode") and name.endswith(".db"))


def module(name: str) -> ModuleType:
    try:
        return importlib.import_module(FORMATS[name])
    except KeyError:
        raise TranscriptError(name, None, f"a known format ({', '.join(FORMATS)})") from None


def iter_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Expand directories (recursively, sorted, hidden files skipped) into transcript files."""
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                rel = f.relative_to(p)
                if f.is_file() and _walked(f.name) and not any(
                        part.startswith(".") for part in rel.parts):
                    yield f
        elif p.exists():
            yield p
        else:
            raise TranscriptError(p, None, "an existing file or directory")


def read(path: str | Path, fmt: str | None = None) -> Iterator[Transcript]:
    """Read every transcript in one file, detecting its format unless ``fmt`` names it.

    Importers raise TranscriptError themselves, with the line; anything else escaping one is an importer
    bug, turned here into a TranscriptError marked ``internal`` so the user still gets one clear line
    (and the fuzz tests, which reject ``internal`` errors, catch the bug).
    """
    from compbench.formats.detect import detect

    p = Path(path)
    name = fmt or detect(p)
    limit = max_transcript_bytes()
    if name not in MULTI_TRANSCRIPT and p.stat().st_size > limit:
        raise TranscriptError(p, None, f"a transcript under {limit // 2**20} MiB, the limit that keeps a replay's "
                                       f"memory bounded (file is {p.stat().st_size // 2**20} MiB; raise "
                                       f"{LIMIT_ENV} to allow it: a replay needs about 4x the file size in memory)")
    try:
        yield from module(name).read(p)
    except TranscriptError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, UnicodeError) as e:
        err = TranscriptError(p, None, f"a readable {name} transcript (the importer failed: {type(e).__name__}: {e})")
        err.internal = True
        raise err from e


def read_all(paths: Iterable[str | Path], fmt: str | None = None) -> Iterator[Transcript]:
    for f in iter_files(paths):
        yield from read(f, fmt)
