"""``compbench.data.dataset`` — Datasets: imported transcripts stored as parquet that HF ``datasets`` and pandas load,
streamed back.

A dataset is a directory with ``data.parquet`` (one row per transcript: summary columns plus the
whole transcript as compbench JSON, lossless) and ``dataset.json`` (format version, fingerprint, the
import errors that were skipped). ``datasets.load_dataset("parquet", data_files=...)`` and
``pandas.read_parquet`` both read it. Rows are written in bounded row groups and read back in small
batches, so neither an import nor a replay holds the whole dataset in memory. Every command also accepts
raw transcript files or folders (any format): they are imported on the fly.

pyarrow, pandas and datasets are imported inside functions: ``import compbench`` must stay light.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from compbench.data.transcript import ToolCall, ToolResult, Transcript, from_json
from compbench.errors import TranscriptError, UsageError

DATASET_FORMAT_VERSION = 1
COMPANIONS = frozenset({"gold_facts.jsonl", "SOURCES.md", "README.md"})  # files a dataset directory may carry
DATA_FILE = "data.parquet"
META_FILE = "dataset.json"
# A row group is flushed at whichever comes first: memory during an import stays near ROW_GROUP_BYTES
# plus one transcript, and a reader never has to decode more than one row group at a time.
ROW_GROUP_ROWS = 64
ROW_GROUP_BYTES = 64 * 2**20
READ_BATCH_ROWS = 8  # transcripts decoded per batch when streaming

# column -> arrow type name; the transcript payload is ``large_string`` (64-bit offsets: one real
# transcript may be hundreds of MiB, see formats.DEFAULT_MAX_TRANSCRIPT_MB).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"), ("source", "string"), ("path", "string"),
    ("n_messages", "int64"), ("n_user", "int64"), ("n_assistant", "int64"), ("n_tool", "int64"),
    ("n_tool_calls", "int64"), ("n_tool_results", "int64"), ("n_compactions", "int64"),
    ("recorded_input_tokens", "int64"), ("recorded_last_input", "int64"), ("recorded_max_input", "int64"),
    ("model", "string"), ("n_warnings", "int64"), ("transcript", "large_string"),
)
SUMMARY_COLUMNS = tuple(name for name, _ in COLUMNS if name != "transcript")

Warn = Callable[[str], None]


def is_dataset(path: str | Path) -> bool:
    p = Path(path)
    return p.is_dir() and (p / META_FILE).is_file() and (p / DATA_FILE).is_file()


def summary_row(t: Transcript, path: str = "") -> dict[str, Any]:
    """The summary columns of one transcript (everything but the payload).

    ``recorded_input_tokens`` sums ``Usage.input`` over the messages that carry usage (the prompt tokens
    the real tool paid for); the last and the largest recorded prompt describe how full the window got.
    """
    roles = [m.role for m in t.messages]
    recorded = [m.usage.input for m in t.messages if m.usage is not None]
    model = t.meta.get("model")
    return {
        "id": t.id, "source": t.source, "path": path, "n_messages": len(t.messages),
        "n_user": roles.count("user"), "n_assistant": roles.count("assistant"), "n_tool": roles.count("tool"),
        "n_tool_calls": t.count_parts(ToolCall), "n_tool_results": t.count_parts(ToolResult),
        "n_compactions": len(t.compactions), "recorded_input_tokens": sum(recorded),
        "recorded_last_input": recorded[-1] if recorded else 0, "recorded_max_input": max(recorded, default=0),
        "model": model if isinstance(model, str) else "", "n_warnings": len(t.warnings),
    }


# Where a transcript's project is recorded, in order: the log's own (an id, the working directory, a repository),
# else the project folder the log was found in (Crush's .crush/ and aider's histories live in it)
PROJECT_KEYS = ("project_id", "cwd", "repository", "project")


def project_of(t: Transcript) -> str:
    """The project a transcript belongs to, "" when neither the log nor its location says."""
    return next((str(v) for k in PROJECT_KEYS if isinstance(v := t.meta.get(k), str) and v), "")


def is_empty(t: Transcript) -> bool:
    """A session with no reply (no assistant message: a prompt and nothing after it, as Crush stores 1 or 2 of
    them per abandoned session). A replay has no step to take on it, so it is left out of imports and runs
    unless asked (``--keep-empty``): counted in "acted on k of n", it would only dilute n."""
    return not any(m.role == "assistant" for m in t.messages)


def fingerprint_of(payloads: Iterable[str]) -> str:
    """sha256 of the transcript JSON texts in order, each followed by a newline.

    ``to_json`` never emits a raw newline, so the separator is unambiguous; anyone can recompute it
    from the ``transcript`` column. No timestamps or paths enter it: same transcripts, same fingerprint.
    """
    digest = hashlib.sha256()
    for payload in payloads:
        digest.update(payload.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()










def read_meta(path: str | Path) -> dict[str, Any]:
    """The manifest of a dataset directory, checked for a version this compbench can read."""
    p = Path(path)
    try:
        meta = json.loads((p / META_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise TranscriptError(p / META_FILE, None, f"a readable dataset manifest ({e})") from None
    if not isinstance(meta, dict):
        raise TranscriptError(p / META_FILE, None, "a JSON object")
    version = meta.get("format_version")
    if not isinstance(version, int) or version > DATASET_FORMAT_VERSION:
        raise TranscriptError(p / META_FILE, None, f"dataset format_version <= {DATASET_FORMAT_VERSION}, "
                                                   f"found {version!r}")
    return meta


def default_dataset() -> Path:
    """The bundled sample dataset, every command's default input: in a source checkout ``datasets/samples``
    (where ``python -m compbench.data.samples`` builds it), in an installed wheel the copy shipped inside the
    package (``compbench/samples_data``, package data: see pyproject)."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / "datasets" / "samples"
    return checkout if (checkout / META_FILE).is_file() else package / "samples_data"


def missing(p: Path) -> UsageError:
    """What a user reads for a dataset path that is not there (the bundled samples: how to build them)."""
    if p.resolve() == default_dataset():
        return UsageError(f"the bundled sample dataset is missing at {p}; build it with "
                          "`python -m compbench.data.samples` or give a dataset, file or directory")
    return UsageError(f"{p}: no such dataset, file or directory")


def read_transcripts(path: str | Path) -> Iterator[Transcript]:
    """Stream the transcripts of a dataset directory (raw files: :func:`compbench.data.importing.iter_transcripts`)."""
    import pyarrow.parquet as pq

    p = Path(path)
    read_meta(p)
    pf = pq.ParquetFile(p / DATA_FILE)
    row = 0
    for batch in pf.iter_batches(batch_size=READ_BATCH_ROWS, columns=["transcript"]):
        for payload in batch.column(0).to_pylist():
            row += 1
            try:
                yield from_json(payload)
            except (KeyError, TypeError, ValueError) as e:
                raise TranscriptError(p / DATA_FILE, row, f"a valid transcript row ({e})") from None


def read_summary(path: str | Path) -> Any:
    """A dataset directory's summary columns as a pandas DataFrame; the transcript payloads are never read."""
    import pandas as pd
    import pyarrow.parquet as pq

    p = Path(path)
    read_meta(p)
    cols = [c for c in pq.ParquetFile(p / DATA_FILE).schema_arrow.names if c != "transcript"]
    return pd.read_parquet(p / DATA_FILE, columns=cols)


def fingerprint(path: str | Path) -> str | None:
    """A dataset's recorded fingerprint (None for raw files, which have no manifest)."""
    p = Path(path)
    if is_dataset(p):
        return str(read_meta(p).get("fingerprint"))
    return None
