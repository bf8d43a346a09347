"""``compbench.data.hf`` — Public trajectory datasets on the Hugging Face Hub, read through the ``datasets`` package:
``hf:OWNER/NAME[/CONFIG][:SPLIT][#COLUMN]`` (its cache, or the Hub when downloading is allowed) or a folder written
by ``Dataset.save_to_disk``.

Each row is one transcript, read from one column by the importers, with the strictness of a file (the row's value
is what a file would hold): a column that does not fit is refused in one line naming the row, the column and the
closest reading. The shapes, as the datasets' cards lay them out:

* **A whole log in a text column**: zai-org/CC-Bench-trajectories (``trajectory``: a Claude Code session as a JSON
  array of its records, beside ``model_name``, ``task_id``, token totals). Any log a file of a supported format
  holds is read by that format's importer, found by its content.
* **A list of chat messages** ``{role, content, tool_calls?, tool_call_id?, name?}`` (the OpenAI chat shape), as a
  list column or its JSON text: nebius/SWE-rebench-openhands-trajectories and nvidia/SWE-Zero-openhands-trajectories
  (``trajectory``), SWE-Gym/OpenHands-Sampled-Trajectories (``messages``). Arrow gives every message every key of
  the column's struct: the keys a message does not have come back null and are dropped, as they were absent.
* **A SWE-agent history of ``{role: system | user | ai, text}``**: nebius/SWE-agent-trajectories (``trajectory``,
  its ``system_prompt``, ``mask``, ``cutoff_date`` beside): the ``ai`` turns are the model's.

A column is chosen by its values (a list whose items have a ``role``; a text a format claims), the names
``messages``, ``trajectory``, ``conversation(s)``, ``history``, ``transcript`` first among several; ``#COLUMN``
names one. The row's other short values go to ``meta["hf_columns"]``, a ``model`` / ``model_name`` column to the
model when the log names none, a ``repo`` / ``repository`` one to the project. Transcript ids are
``NAME/SPLIT/ROW``.

Datasets of files rather than rows (JetBrains-Research/the-complexity-trap's SWE-agent and OpenHands trajectory
files, SWE-chat's ``transcripts/*.jsonl``) are folders of logs: import their downloaded snapshot as a folder.
SALT-NLP/SWE-chat's tables (``conversations``: one row per entry) hold no transcript in one row: refused, the
columns listed. ``datasets`` is imported here only, when such a source is read.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError, UsageError

PREFIX = "hf:"
PREFERRED = ("messages", "trajectory", "conversations", "conversation", "history", "transcript", "chat")
SWE_AGENT_ROLES = {"system": "system", "user": "user", "ai": "assistant"}
MODEL_COLUMNS = ("model", "model_name")
REPO_COLUMNS = ("repo", "repository")
META_CLIP = 200  # longer values (patches, logs) stay in the dataset, not in every transcript's meta


@dataclass(frozen=True)
class Ref:
    """What ``hf:…`` or a saved folder names: a Hub repository (with its config and split) or a local folder."""

    label: str
    repo: str = ""
    config: str | None = None
    split: str | None = None
    column: str | None = None
    path: Path | None = None

    @property
    def name(self) -> str:
        return self.repo.split("/")[-1] if self.repo else (self.path.name if self.path else self.label)


def is_hf(arg: str | Path) -> bool:
    return str(arg).startswith(PREFIX)


def is_saved(path: str | Path) -> bool:
    """A folder ``Dataset.save_to_disk`` (or ``DatasetDict.save_to_disk``) wrote."""
    p = Path(path)
    return p.is_dir() and (((p / "state.json").is_file() and (p / "dataset_info.json").is_file())
                           or (p / "dataset_dict.json").is_file())


def parse(arg: str | Path) -> Ref:
    """``hf:OWNER/NAME[/CONFIG][:SPLIT][#COLUMN]``, ``hf:PATH[:SPLIT][#COLUMN]`` or a saved folder's path."""
    text = str(arg)
    if not is_hf(text):
        return Ref(text, path=Path(text))
    body, _, column = text[len(PREFIX):].partition("#")
    head, _, split = body.partition(":")
    if Path(head).expanduser().exists():
        return Ref(text, path=Path(head).expanduser(), split=split or None, column=column or None)
    parts = head.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise UsageError(f"{text}: expected hf:OWNER/NAME[/CONFIG][:SPLIT][#COLUMN] (a Hub dataset) or hf:PATH "
                         "(a dataset saved with save_to_disk)")
    return Ref(text, "/".join(parts[:2]), parts[2] if len(parts) == 3 else None, split or None, column or None)


def _datasets() -> Any:
    """The ``datasets`` package (imported by name: the checkout's ``datasets/`` data folder, no package, would
    stand for it in a type checker's search path)."""
    import importlib

    return importlib.import_module("datasets")


@contextlib.contextmanager
def _hub(offline: bool) -> Iterator[None]:
    """The Hub unreachable unless downloading is allowed (the cache answers), and ``datasets`` quiet."""
    import huggingface_hub.constants as hub

    datasets = _datasets()
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    before = (datasets.config.HF_HUB_OFFLINE, hub.HF_HUB_OFFLINE)
    if offline:
        datasets.config.HF_HUB_OFFLINE = hub.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        datasets.config.HF_HUB_OFFLINE, hub.HF_HUB_OFFLINE = before


def load(ref: Ref, download: bool = False) -> list[tuple[str, Any]]:
    """The split(s) named: ``(split, datasets.Dataset)``; every split of a saved ``DatasetDict`` without one."""
    datasets = _datasets()

    try:
        with _hub(offline=not download):
            if ref.path is not None:
                found: Any = datasets.load_from_disk(str(ref.path))
            else:
                found = datasets.load_dataset(ref.repo, ref.config, split=ref.split)
    except (ConnectionError, FileNotFoundError) as e:
        if ref.path is None and not download:
            raise UsageError(f"{ref.label}: not in the datasets cache (offline; --download fetches it from the "
                             f"Hub): {e}") from None
        raise UsageError(f"{ref.label}: {e}") from None
    except (ValueError, datasets.exceptions.DatasetNotFoundError) as e:
        raise UsageError(f"{ref.label}: {e}") from None
    if isinstance(found, datasets.DatasetDict):
        names = [ref.split] if ref.split else list(found)
        missing = [n for n in names if n not in found]
        if missing:
            raise UsageError(f"{ref.label}: no split {missing[0]!r} (splits: {', '.join(found)})")
        return [(n, found[n]) for n in names]
    return [(ref.split or "train", found)]


def _clean(value: Any) -> Any:
    """Arrow's struct columns give every item every key: a null one was absent."""
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _as_messages(value: Any) -> list[Any] | None:
    """A message list: the value, or its JSON text, whose items are objects with a ``role``."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    if isinstance(value, list) and value and all(isinstance(m, Mapping) and "role" in m for m in value):
        return list(_clean(value))
    return None


def _swe_agent(messages: list[Any]) -> list[dict[str, Any]] | None:
    """nebius/SWE-agent-trajectories' ``{role: system | user | ai, text}`` as chat messages, else None."""
    if not all(isinstance(m.get("text"), str) and m.get("role") in SWE_AGENT_ROLES and "content" not in m
               for m in messages):
        return None
    return [{"role": SWE_AGENT_ROLES[m["role"]], "content": m["text"]} for m in messages]


def choose(ref: Ref, columns: list[str], first: Mapping[str, Any]) -> str:
    """The column holding the transcript, by the first row's values (``#COLUMN`` names one)."""
    if ref.column is not None:
        if ref.column not in columns:
            raise UsageError(f"{ref.label}: no column {ref.column!r} (columns: {', '.join(columns)})")
        return ref.column
    lists = [c for c in columns if _as_messages(first.get(c)) is not None]
    logs = [c for c in columns if isinstance(first.get(c), str) and _claims(first[c])]
    for found in (lists, logs):
        if found:
            return min(found, key=lambda c: (PREFERRED.index(c) if c in PREFERRED else len(PREFERRED),
                                             columns.index(c)))
    shown = ", ".join(f"{c} ({_kind(first.get(c))})" for c in columns)
    raise UsageError(f"{ref.label}: no column holds a transcript (a list of messages with a role, or the text of a "
                     f"log a supported format reads); columns: {shown}; name one with #COLUMN to see why it does "
                     "not fit")


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"text of {len(value):,} characters"
    if isinstance(value, list):
        return f"list of {len(value)}"
    return type(value).__name__ if value is not None else "null"


def _claims(text: str) -> bool:
    """Does a supported format claim this text as a file's content?"""
    from compbench.data.formats.detect import detect

    with tempfile.TemporaryDirectory(prefix="compbench-hf-") as d:
        p = _write(Path(d), text)
        try:
            detect(p)
        except TranscriptError:
            return False
        return True


def _write(folder: Path, text: str) -> Path:
    p = folder / ("row.json" if text.lstrip().startswith("[") else "row.jsonl")
    p.write_text(text, encoding="utf-8")
    return p


def transcripts(ref: Ref, download: bool = False) -> Iterator[Transcript | TranscriptError]:
    """Every row's transcript, or the error that says why a row is not one (the caller fails or skips)."""
    from compbench.data.formats import read

    for split, ds in load(ref, download):
        columns = list(ds.column_names)
        if not len(ds):
            continue
        column = choose(ref, columns, ds[0])
        where = f"{ref.label if ref.path is None else ref.path}"
        with tempfile.TemporaryDirectory(prefix="compbench-hf-") as d:
            for i, row in enumerate(ds):
                label = f"{where} ({split} row {i}, column {column!r})"
                try:
                    found = list(read(_row_file(Path(d), row.get(column), label)))
                except TranscriptError as e:
                    yield TranscriptError(label, None, e.expected)
                    continue
                for k, t in enumerate(found):
                    yield _with_row(t, ref, split, i, k if len(found) > 1 else None, column, row)


def _row_file(folder: Path, value: Any, label: str) -> Path:
    messages = _as_messages(value)
    if messages is not None:
        p = folder / "row.jsonl"
        p.write_text(json.dumps({"messages": _swe_agent(messages) or messages}, ensure_ascii=False) + "\n",
                     encoding="utf-8")
        return p
    if isinstance(value, str) and value.strip():
        return _write(folder, value)
    raise TranscriptError(label, None, f"a list of messages with a role, or the text of a log; found {_kind(value)}")


def _with_row(t: Transcript, ref: Ref, split: str, row: int, part: int | None, column: str,
              values: Mapping[str, Any]) -> Transcript:
    from dataclasses import replace

    meta = {k: v for k, v in t.meta.items() if k != "path"}
    meta["path"] = ref.label if ref.path is None else str(ref.path)
    meta["hf"] = {"dataset": ref.repo or str(ref.path), "config": ref.config, "split": split, "row": row,
                  "column": column}
    extra = {k: v for k, v in values.items() if k != column and _short(v)}
    if extra:
        meta["hf_columns"] = extra
    for c in MODEL_COLUMNS:
        if not meta.get("model") and isinstance(values.get(c), str) and values[c]:
            meta["model"] = values[c]
    for c in REPO_COLUMNS:
        if isinstance(values.get(c), str) and values[c]:
            meta.setdefault("repository", values[c])
    tid = f"{ref.name}/{split}/{row}" + (f".{part}" if part is not None else "")
    return replace(t, id=tid, meta=meta)


def _short(v: Any) -> bool:
    return isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) <= META_CLIP)
