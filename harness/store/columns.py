"""``compbench.store.columns`` — A run's table rows, kept column by column.

A transcript replayed under a tuning grid's hundred configurations writes a hundred copies of its steps and
facts, most of them the rows of a few shared trajectories with another configuration's label. Kept as rows,
each copy is a dictionary per row, built and then read again by pyarrow; kept as columns, a trajectory's
rows are made once and each configuration that followed it adds them with a list ``extend`` and its label.
:class:`Table` is that: appended to row by row (a ``results`` row) or a block of columns at a time, merged
across transcripts, handed to ``pyarrow.Table.from_pydict``. A column some rows lack is None there, as
``from_pylist`` would have it; the run directory's writer gives every table its declared columns and types
(:func:`compbench.store.tables.conform`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Columns = dict[str, list[Any]]


def columns_of(rows: Sequence[Mapping[str, Any]]) -> tuple[Columns, int]:
    """Rows that share their keys (one function made them) as columns, and how many."""
    if not rows:
        return {}, 0
    keys = list(rows[0])
    out: Columns = {k: [r.get(k) for r in rows] for k in keys}
    for r in rows:  # a key the first row lacks
        for k in r:
            if k not in out:
                out[k] = [x.get(k) for x in rows]
    return out, len(rows)


class Table:
    """One table's rows as columns (``rows`` of them)."""

    __slots__ = ("columns", "rows")

    def __init__(self) -> None:
        self.columns: Columns = {}
        self.rows = 0

    def _column(self, name: str) -> list[Any]:
        col = self.columns.get(name)
        if col is None:
            col = self.columns[name] = [None] * self.rows
        return col

    def _pad(self, n: int, touched: Iterable[str]) -> None:
        self.rows += n
        seen = set(touched)
        for name, col in self.columns.items():
            if name not in seen:
                col.extend([None] * n)

    def append(self, row: Mapping[str, Any]) -> None:
        for name, value in row.items():
            self._column(name).append(value)
        self._pad(1, row)

    def extend(self, columns: Mapping[str, Sequence[Any]], n: int, same: Mapping[str, Any] | None = None) -> None:
        """``n`` rows: ``columns`` (each ``n`` long), and ``same`` the value every one of them has."""
        if not n:
            return
        for name, value in (same or {}).items():
            self._column(name).extend([value] * n)
        for name, values in columns.items():
            self._column(name).extend(values)
        self._pad(n, [*(same or {}), *columns])

    def merge(self, other: Table) -> None:
        self.extend(other.columns, other.rows)

    def records(self) -> list[dict[str, Any]]:
        """The rows as dictionaries (for tests and small tables)."""
        names = list(self.columns)
        return [dict(zip(names, values, strict=True)) for values in zip(*self.columns.values(), strict=True)]

    def __len__(self) -> int:
        return self.rows
