"""``compbench.data.samples`` — Rebuild the bundled sample dataset ``datasets/samples`` from the real transcripts in
``../shared``.

``python -m compbench.data.samples [TRANSCRIPTS_DIR]``. The Codex rollouts are left out: their repository
states no licence, so they may be read in place by tests but never copied into the project. Files kept
beside the data (``gold_facts.jsonl``, ``SOURCES.md``) survive a rebuild.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXCLUDED = ("codex",)  # no licence stated: never bundled


def build(transcripts: Path, out: Path = ROOT / "datasets" / "samples") -> int:
    from compbench.data.importing import write_dataset

    folders = sorted(p for p in transcripts.iterdir() if p.is_dir() and p.name not in EXCLUDED)
    report = write_dataset(out, folders, force=True)
    print(f"{report.transcripts} transcripts ({', '.join(f'{k} {v}' for k, v in sorted(report.formats.items()))})"
          f" written to {out}")
    return report.transcripts


if __name__ == "__main__":
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "transcripts"
    build(src)
