"""``compbench.reports.fidelity`` — The fidelity table (``compbench fidelity --out RUN``) as a reader takes it in: real
against ours, side by side, in ten columns; every one of the 28 raw fields stays one click away, under each row."""

from __future__ import annotations

from typing import Any

COLUMNS = ("tool", "transcript", "trigger · preset", "step (real → ours)", "tokens at the trigger (real → ours)",
           "kept set (Jaccard)", "summary tokens (real / our budget)", "facts of the span kept (real / calibrated / "
           "extractive)", "window")


def _n(v: Any) -> str:
    if v is None or v == "":
        return "–"
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _delta(v: Any) -> str:
    return "" if v is None else f" ({v:+,})" if isinstance(v, int) else ""


def compact(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """``fidelity.json`` as compact rows (``cells``) with every raw field kept (``all``)."""
    if not data:
        return None
    records = data.get("records") or [dict(zip(data.get("columns", []), r, strict=False)) for r in data.get("rows", [])]
    rows = []
    for r in records:
        rows.append({"cells": [
            str(r.get("tool", "")), f"{r.get('transcript', '')} #{r.get('n', '')}",
            f"{r.get('trigger', '')} · {r.get('preset', '')}",
            f"{_n(r.get('real_step'))} → {_n(r.get('our_step'))}{_delta(r.get('d_steps'))}",
            f"{_n(r.get('real_tokens'))} → {_n(r.get('our_tokens'))}{_delta(r.get('d_tokens'))}",
            _n(r.get("kept_jaccard")),
            f"{_n(r.get('real_summary_tokens'))} / {_n(r.get('our_budget'))}",
            f"{r.get('kept_real', '–')} / {r.get('kept_calibrated', '–')} / {r.get('kept_extractive', '–')}",
            _n(r.get("window"))],
            "window_source": str(r.get("window_source", "")),
            "all": [(str(k), _n(v)) for k, v in r.items()]})
    return {"columns": COLUMNS, "rows": rows}
