"""The bundled sample dataset is what its own build command makes today.

``datasets/samples`` is built by ``python -m compbench.data.samples`` from ``../shared/transcripts``; when an
importer changes what it reads from those files, the bundled copy goes stale and every figure resting on it
(the demo, its golden summary, the report) describes yesterday's importer. Rebuild with
``.venv/bin/python -m compbench.data.samples`` (and regenerate the demo's golden: see test_demo_golden.py).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from compbench.data.dataset import default_dataset
from compbench.data.importing import iter_transcripts
from compbench.data.samples import build
from compbench.data.transcript import Transcript, to_json


def _portable(t: Transcript) -> str:
    """The transcript as compbench JSON, its source path cut to tool/file: where ../shared lives is no content."""
    path = Path(str(t.meta.get("path", "")))
    return to_json(replace(t, meta={**t.meta, "path": "/".join(path.parts[-2:])}))


def test_the_bundled_samples_are_what_the_build_command_makes(transcripts_dir: Path, tmp_path: Path) -> None:
    build(transcripts_dir, tmp_path / "samples")
    bundled = default_dataset()
    fresh = {t.id: _portable(t) for t in iter_transcripts(tmp_path / "samples")}
    shipped = {t.id: _portable(t) for t in iter_transcripts(bundled)}
    stale = sorted(k for k in fresh.keys() & shipped.keys() if fresh[k] != shipped[k])
    hint = "stale: rebuild with `.venv/bin/python -m compbench.data.samples` (then regenerate the demo's golden)"
    assert sorted(fresh.keys() ^ shipped.keys()) == [], hint
    assert not stale, f"{hint}; changed: {stale}"
    meta = {k: v for k, v in json.loads((bundled / "dataset.json").read_text(encoding="utf-8")).items()
            if k not in ("fingerprint", "created_by")}
    built = {k: v for k, v in json.loads((tmp_path / "samples" / "dataset.json").read_text(encoding="utf-8")).items()
             if k not in ("fingerprint", "created_by")}
    assert meta == built, hint
