"""Shared fixtures: where the real transcripts live, and token counters."""

from __future__ import annotations

from pathlib import Path

import pytest

from compbench.tokens import TokenCounter

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TRANSCRIPTS = SHARED / "transcripts"


@pytest.fixture(scope="session")
def transcripts_dir() -> Path:
    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"real transcripts not found at {TRANSCRIPTS}")
    return TRANSCRIPTS


@pytest.fixture(scope="session")
def o200k() -> TokenCounter:
    return TokenCounter("o200k_base")


@pytest.fixture(scope="session")
def chars4() -> TokenCounter:
    return TokenCounter("chars4", message_overhead=0)
