"""Every real file in ../shared (transcripts, real-compactions, real-logs) imports exactly as it did when the golden
was written: one sha256 per transcript.

Importers grow new shapes; the transcripts of the shapes they already read must not move (the bundled
dataset, fidelity figures and gold facts rest on them). The hash covers the whole transcript as compbench
JSON, with ``meta["path"]`` made relative to ``../shared`` so the golden does not depend on where the
checkout lives.

Regenerate after a deliberate importer change (and say why in the commit):
``COMPBENCH_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/data/test_import_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

from conftest import SHARED, need_shared

import helpers
from compbench.data.formats import iter_files, read
from compbench.data.transcript import to_json

GOLDEN = helpers.GOLDEN / "real_imports.json"
FOLDERS = ("transcripts", "real-compactions", "real-logs")


def _hashes() -> dict[str, str]:
    out: dict[str, str] = {}
    for folder in FOLDERS:
        root = SHARED / folder
        if not root.is_dir():
            continue
        for f in iter_files([root]):
            for t in read(f):
                rel = Path(t.meta["path"]).resolve().relative_to(SHARED.resolve()).as_posix()
                payload = to_json(replace(t, meta={**t.meta, "path": rel}))
                out[f"{rel}#{t.id}"] = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    return out


def test_real_files_import_as_the_golden_says() -> None:
    need_shared(SHARED / "transcripts", "real transcripts")
    got = _hashes()
    if os.environ.get("COMPBENCH_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    changed = sorted(k for k in want.keys() & got.keys() if want[k] != got[k])
    assert not changed, f"imports changed: {changed}"
    assert sorted(want.keys() - got.keys()) == [], "transcripts no longer imported"
    assert sorted(got.keys() - want.keys()) == [], "new transcripts: regenerate the golden"
