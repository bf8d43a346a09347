"""``compbench.textable`` — Plain-text tables whose columns are as wide as their widest cell: figures never run together
(a fixed width of 13 for ``1,000,000,000`` left no space before it), and two spaces always separate columns."""

from __future__ import annotations

from collections.abc import Sequence


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] | None = None,
          gap: str = "  ") -> list[str]:
    """Lines of a table; ``right[i]``: column i holds figures (right-aligned), else text (left-aligned).
    By default the first column is text and the others figures."""
    align = list(right) if right is not None else [False] + [True] * (len(headers) - 1)
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return gap.join(str(c).rjust(w) if a else str(c).ljust(w)
                        for c, w, a in zip(cells, widths, align, strict=True)).rstrip()

    return [line(headers), *(line(r) for r in rows)]
