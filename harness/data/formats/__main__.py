"""``python -m compbench.data.formats PATH...`` — read / held (:mod:`.coverage`) for every transcript file under the
given paths, by format: how the coverage rule's margin is measured on real files."""

from __future__ import annotations

import sys

from compbench.data.formats import iter_files
from compbench.data.formats import read as read_file
from compbench.data.formats.coverage import ratio
from compbench.data.formats.detect import detect
from compbench.errors import TranscriptError


def main(argv: list[str]) -> None:
    """Print read / held for every transcript file under the given paths, by format."""
    for f in iter_files(argv):
        try:
            fmt = detect(f)
            ts = list(read_file(f, fmt, check=False))
        except TranscriptError as e:
            print(f"{'-':>7}  {'':12}  {f}: {e.expected}")
            continue
        r = ratio(f, ts)
        print(f"{'-' if r is None else f'{r:.3f}':>7}  {fmt:12}  {f}")


if __name__ == "__main__":
    main(sys.argv[1:])
