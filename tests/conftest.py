"""Shared fixtures: where the real transcripts live, and token counters."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from compbench.measure.tokens import TokenCounter

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TRANSCRIPTS = SHARED / "transcripts"
REAL_COMPACTIONS = SHARED / "real-compactions"
REAL_LOGS = SHARED / "real-logs"


def shared_present(path: Path, shared: Path = SHARED) -> bool:
    """Whether ``path`` (real data under ../shared) is here; False lets its test skip. It may skip only where
    ../shared is absent and ``CI`` is not set: under CI ../shared is there, and where ../shared is present a
    missing file moved or was renamed; either way a quiet skip would hide a test that no longer runs, so it
    fails, naming the path."""
    if path.exists():
        return True
    if os.environ.get("CI"):
        pytest.fail(f"{path} not found, and CI is set: the tests that need ../shared must run there")
    if shared.is_dir():
        pytest.fail(f"{path} not found, though {shared} is here: moved or renamed? (these tests must run)")
    return False


def need_shared(path: Path, what: str = "real data") -> Path:
    """``path``, or a skip (see :func:`shared_present` for where it fails instead)."""
    if not shared_present(path):
        pytest.skip(f"{what} not found at {path}")
    return path


def shared_glob(folder: Path, pattern: str) -> list[Path]:
    """The files of ``folder`` that ``pattern`` matches, sorted; none fails: a test looping over them would
    check nothing and pass."""
    found = sorted(need_shared(folder).glob(pattern))
    assert found, f"no {pattern} in {folder}: a test over them would check nothing"
    return found


@pytest.fixture(scope="session")
def transcripts_dir() -> Path:
    return need_shared(TRANSCRIPTS, "real transcripts")


@pytest.fixture(scope="session")
def real_compactions_dir() -> Path:
    """Newer real sessions chosen for the tools' own compactions (Claude Code 2.1, Codex 0.14x)."""
    return need_shared(REAL_COMPACTIONS, "real compactions")


@pytest.fixture(scope="session")
def real_logs_dir() -> Path:
    """Real logs of the other tools (Gemini CLI, Roo Code, Crush), read in place."""
    return need_shared(REAL_LOGS, "real logs")


@pytest.fixture(scope="session")
def o200k() -> TokenCounter:
    return TokenCounter("o200k_base")


@pytest.fixture(scope="session")
def chars4() -> TokenCounter:
    return TokenCounter("chars4", message_overhead=0)


@pytest.fixture(autouse=True, scope="session")
def _results_cache_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test writes into the real home's cache (compbench.run.cache): the session's own directory, for what
    module-scoped fixtures run."""
    import os

    before = os.environ.get("COMPBENCH_CACHE_DIR")
    os.environ["COMPBENCH_CACHE_DIR"] = str(tmp_path_factory.getbasetemp() / "compbench-cache")
    yield
    if before is None:
        os.environ.pop("COMPBENCH_CACHE_DIR", None)
    else:
        os.environ["COMPBENCH_CACHE_DIR"] = before


@pytest.fixture(autouse=True)
def _results_cache_of_the_test(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own results cache (made when first written): a throwaway strategy registered under a name
    another test uses, at the same version, must not find that test's rows."""
    import hashlib

    name = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("COMPBENCH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "compbench-cache" / name))


@pytest.fixture(autouse=True, scope="module")
def _throwaway_strategies() -> Iterator[None]:
    """A test module that registers a throwaway strategy has it for its own tests only: a run of every
    strategy elsewhere (the demo golden) must not replay it."""
    from compbench.sdk.registry import STRATEGIES, names

    before = set(names())
    yield
    for name in set(STRATEGIES._items) - before:
        STRATEGIES.unregister(name)
