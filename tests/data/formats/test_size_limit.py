"""A transcript over the size limit fails with a message naming the limit (memory stays bounded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TRANSCRIPTS, need_shared

from compbench.data.formats import read
from compbench.errors import TranscriptError


def test_oversized_single_transcript_file_names_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    path = TRANSCRIPTS / "pi" / "pi-mono__before-compaction.jsonl"
    need_shared(path, "real transcript")
    monkeypatch.setenv("COMPBENCH_MAX_TRANSCRIPT_MB", "1")
    with pytest.raises(TranscriptError, match=r"a transcript under 1 MiB.*COMPBENCH_MAX_TRANSCRIPT_MB"):
        list(read(path))
    monkeypatch.setenv("COMPBENCH_MAX_TRANSCRIPT_MB", "4")
    assert len(list(read(path))) == 1


def test_bad_limit_value_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COMPBENCH_MAX_TRANSCRIPT_MB", "lots")
    path = TRANSCRIPTS / "pi" / "pi-mono__before-compaction.jsonl"
    need_shared(path, "real transcript")
    with pytest.raises(TranscriptError, match="a number of MiB"):
        list(read(path))
