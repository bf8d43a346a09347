"""``compbench.reports.events`` — Compactions for the report, worst first: an index of every one (figures only) and the
full detail — summary, facts lost, what it replaced — of the worst, each strategy's worst in turn.

Worst means most facts lost, then the lowest retention, then the most guard flags (a dropped user
constraint, a fabricated path, a summary larger than its input); a failed compaction comes first among
equals. The index is read without the summary column, and the details read only the row groups that
hold the chosen rows, so a run of hundreds of thousands of compactions never sits in memory whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

MAX_INDEX = 300_000  # compactions listed; beyond it the report says how many it left out
MAX_DETAILS = 400  # compactions with their summary, facts lost and replaced messages
SUMMARY_CHARS = 6_000
FACT_CHARS = 300
PREVIEW_MESSAGES = 6
PREVIEW_CHARS = 300
INDEX_COLUMNS = ("transcript_id", "strategy", "seq", "step", "phase", "ok", "tokens_before", "tokens_after",
                 "retention", "lost_facts", "fabricated", "guard_summary_larger", "guard_dropped_constraint", "error")


def index(run: Path, labels: Sequence[str], tids: Sequence[str]) -> dict[str, Any]:
    """Every compaction's figures as columns, worst first (``row``: its row in compactions.parquet)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = run / "compactions.parquet"
    empty: dict[str, Any] = {"total": 0, "cols": {}}
    if not path.exists():
        return empty
    f = pq.ParquetFile(path)
    names = set(f.schema_arrow.names)
    if not {"transcript_id", "strategy", "step"} <= names or f.metadata.num_rows == 0:
        return empty
    table = f.read(columns=[c for c in INDEX_COLUMNS if c in names])

    def col(name: str, default: object = 0) -> Any:
        if name not in table.column_names:
            return np.full(table.num_rows, default)
        return table[name].to_numpy(zero_copy_only=False)

    # -1: a strategy or a transcript the report leaves out (a settings sweep's row, a --source / --where selection)
    s = pc.fill_null(pc.index_in(table["strategy"], value_set=pa.array(list(labels))), -1).to_numpy(
        zero_copy_only=False)
    t = pc.fill_null(pc.index_in(table["transcript_id"], value_set=pa.array(list(tids))), -1).to_numpy(
        zero_copy_only=False)
    lost = (pc.list_value_length(table["lost_facts"]).to_numpy(zero_copy_only=False)
            if "lost_facts" in table.column_names else np.zeros(table.num_rows))
    fab = (pc.list_value_length(table["fabricated"]).to_numpy(zero_copy_only=False)
           if "fabricated" in table.column_names else np.zeros(table.num_rows))
    retention = col("retention", math.nan).astype(float)
    guards = (col("guard_summary_larger").astype(int) + 2 * col("guard_dropped_constraint").astype(int)
              + 4 * (fab > 0).astype(int))
    ok = col("ok", 1).astype(bool)
    rows = np.arange(table.num_rows)
    # np.lexsort: the last key is the primary one
    flagged = (guards & 1) + (guards >> 1 & 1) + (guards >> 2 & 1)
    order = np.lexsort((rows, -flagged, np.where(np.isnan(retention), 2.0, retention), ok, -lost))
    from compbench.sdk.events import NOOP

    # a no-op compaction (it would have replaced nothing) was not applied: it is flagged, not listed
    applied = col("error", "") != NOOP
    order = order[(s[order] >= 0) & (t[order] >= 0) & applied[order]]
    total = len(order)
    order = order[:MAX_INDEX]
    phase = col("phase", "before")
    ret = np.where(np.isnan(retention), -1, np.round(retention * 1000)).astype(int)
    return {"total": total, "cols": {
        "row": order.tolist(), "s": s[order].tolist(), "t": t[order].tolist(), "seq": col("seq")[order].tolist(),
        "step": col("step")[order].tolist(), "after": [int(p == "after") for p in phase[order]],
        "ok": ok[order].astype(int).tolist(), "before": col("tokens_before")[order].tolist(),
        "after_tokens": col("tokens_after")[order].tolist(), "lost": lost[order].tolist(),
        "ret": ret[order].tolist(), "guards": guards[order].tolist()}}


def pick(cols: dict[str, list[int]], n_strategies: int, limit: int = MAX_DETAILS) -> list[int]:
    """Positions in the worst-first index whose details to keep: each strategy's worst in turn."""
    queues: list[list[int]] = [[] for _ in range(n_strategies)]
    for pos, s in enumerate(cols.get("s", [])):
        if len(queues[s]) < limit:
            queues[s].append(pos)
    out: list[int] = []
    for depth in range(limit):
        for q in queues:
            if depth < len(q) and len(out) < limit:
                out.append(q[depth])
    return sorted(out)


def details(run: Path, cols: dict[str, list[int]], positions: Sequence[int],
            facts: dict[tuple[str, str], tuple[str, str]],
            tids: Sequence[str], redact: Callable[[str], str], previews: dict[tuple[str, str], str],
            cache_write: dict[tuple[str, int, int], int], cache_premium: Mapping[str, float]) -> dict[str, Any]:
    """Per chosen position (as a string key): the compaction's full detail, transcript text redacted;
    ``cache_premium`` per transcript (its price model's)."""
    import pyarrow.parquet as pq

    f = pq.ParquetFile(run / "compactions.parquet")
    names = set(f.schema_arrow.names)
    wanted = [c for c in ("reason", "replaced", "replaced_tokens", "summary", "summary_tokens", "retention",
                          "retention_verbatim", "retention_carried", "error", "replaced_ids", "lost_facts",
                          "fabricated", "guard_summary_larger", "guard_dropped_constraint", "phase")
              if c in names]
    by_row = {cols["row"][p]: p for p in positions}
    starts, acc = [], 0
    for g in range(f.metadata.num_row_groups):
        starts.append(acc)
        acc += f.metadata.row_group(g).num_rows
    out: dict[str, Any] = {}
    for g, start in enumerate(starts):
        end = start + f.metadata.row_group(g).num_rows
        rows = [r for r in by_row if start <= r < end]
        if not rows:
            continue
        rows.sort()
        part = f.read_row_group(g, columns=wanted).take([r - start for r in rows]).to_pylist()
        for r, rec in zip(rows, part, strict=True):
            p = by_row[r]
            tid, s = tids[cols["t"][p]], cols["s"][p]
            step = cols["step"][p] + (1 if rec.get("phase") == "after" else 0)
            rewritten = cache_write.get((tid, s, step))
            out[str(p)] = {
                "reason": rec.get("reason", ""), "replaced": rec.get("replaced", 0),
                "replaced_tokens": rec.get("replaced_tokens", 0), "summary_tokens": rec.get("summary_tokens", 0),
                "summary": _clip(redact(str(rec.get("summary") or "")), SUMMARY_CHARS),
                "summary_chars": len(str(rec.get("summary") or "")),
                "verbatim": rec.get("retention_verbatim"), "carried": rec.get("retention_carried"),
                "error": redact(str(rec.get("error") or "")),
                "lost": [[k, _clip(redact(x), FACT_CHARS)] for k, x in
                         (facts.get((tid, fid), ("?", fid)) for fid in rec.get("lost_facts") or [])],
                "fabricated": [_clip(redact(str(x)), FACT_CHARS) for x in rec.get("fabricated") or []],
                "guards": [g_ for g_, on in (("summary larger than its input", rec.get("guard_summary_larger")),
                                             ("dropped user constraint", rec.get("guard_dropped_constraint")),
                                             ("fabricated path/identifier", bool(rec.get("fabricated"))))
                           if on],
                "cache_rewritten": rewritten,
                "cache_dollars": None if rewritten is None else rewritten * cache_premium.get(tid, 0.0),
                "preview": [previews[(tid, m)] for m in list(rec.get("replaced_ids") or [])[:PREVIEW_MESSAGES]
                            if (tid, m) in previews],
            }
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit:,} more characters]"


def fact_texts(run: Path, transcripts: set[str]) -> dict[tuple[str, str], tuple[str, str]]:
    """(transcript, fact id) -> (kind, text) for the given transcripts, read a batch at a time."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = run / "facts.parquet"
    out: dict[tuple[str, str], tuple[str, str]] = {}
    if not transcripts or not path.exists():
        return out
    f = pq.ParquetFile(path)
    if not {"transcript_id", "fact_id", "kind", "text"} <= set(f.schema_arrow.names):
        return out
    want = pa.array(sorted(transcripts))
    for rb in f.iter_batches(batch_size=65_536, columns=["transcript_id", "fact_id", "kind", "text"]):
        batch = pa.Table.from_batches([rb])
        keep = pc.is_in(batch["transcript_id"], value_set=want)
        if pc.any(keep).as_py():
            sub = batch.filter(keep).to_pydict()
            for t, fid, kind, text in zip(sub["transcript_id"], sub["fact_id"], sub["kind"], sub["text"], strict=True):
                out.setdefault((t, fid), (kind, text))
    return out


def previews(dataset: str, transcripts: set[str], wanted_ids: dict[str, set[str]],
             redact: Callable[[str], str]) -> dict[tuple[str, str], str]:
    """Previews of the replaced messages, when the run's dataset is still readable: a dataset directory
    decodes only the wanted transcripts; raw files are streamed as ``run`` read them."""
    from compbench.data.dataset import is_dataset
    from compbench.data.importing import iter_transcripts
    from compbench.errors import CompbenchError
    from compbench.measure.facts.presence import part_match_text

    out: dict[tuple[str, str], str] = {}
    if not transcripts or not dataset or not Path(dataset).exists():
        return out

    def add(t: Any) -> None:
        for m in t.messages:
            if m.id in wanted_ids.get(t.id, ()):
                text = " ".join(part_match_text(p)[:PREVIEW_CHARS] for p in m.parts)
                out[(t.id, m.id)] = f"{m.role}: " + redact(text[:PREVIEW_CHARS])

    try:
        if is_dataset(dataset):
            _from_dataset(Path(dataset), transcripts, add)
        else:
            for t in iter_transcripts(dataset):
                if t.id in transcripts:
                    add(t)
    except (CompbenchError, OSError, ValueError):
        return out
    return out


def _from_dataset(path: Path, transcripts: set[str], add: Callable[[Any], None]) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from compbench.data.dataset import DATA_FILE
    from compbench.data.transcript import from_json

    f = pq.ParquetFile(path / DATA_FILE)
    want = pa.array(sorted(transcripts))
    for rb in f.iter_batches(batch_size=64, columns=["id", "transcript"]):
        batch = pa.Table.from_batches([rb])
        keep = pc.is_in(batch["id"], value_set=want)
        if pc.any(keep).as_py():
            for payload in batch.filter(keep)["transcript"].to_pylist():
                add(from_json(payload))
