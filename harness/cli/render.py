"""``compbench.cli.render`` — Tables for people and machines: aligned text, Markdown or CSV (compare, fidelity)."""

from __future__ import annotations

import csv
import io
import re


def table(headers: list[str], rows: list[list[str]], fmt: str) -> str:
    if fmt == "markdown":
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(headers)
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    from compbench.textable import table as text_table

    # one plain-text table for every command (compbench.textable): a column of figures is right-aligned
    right = [bool(rows) and all(_figure(r[i]) for r in rows if r[i] not in ("", "-", "–")) for i in range(len(headers))]
    return "\n".join(text_table(headers, rows, right))


_FIGURE = re.compile(r"^[-+]?[$]?[\d,]+(?:\.\d+)?(?:%| pp)?$")


def _figure(cell: str) -> bool:
    """A cell that is one number (``1,234``, ``-3.5%``, ``$0.12``, ``+2.1 pp``), which reads right-aligned."""
    return bool(_FIGURE.match(cell.strip()))
