"""A strategy's declared ``version`` (``@strategy(..., version=...)``) moves with its behaviour: the results cache keys
a replay on it (:mod:`compbench.run.cache`), so a strategy whose decisions change under the same version would
serve stale rows. The golden holds, per strategy, its version and a hash of its decisions on the bundled samples
(when it compacts, what it keeps and replaces, what it prunes), replayed at a small window with content-free
summaries and the ``chars4`` count, so what is hashed is the strategy's own choice rather than the summarizer's or
the tokenizer's.

Regenerate after bumping a version (or after a change of the engine that moves every strategy's decisions):
``COMPBENCH_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/strategies/test_versions.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from compbench.sdk.registry import BUILTIN, get

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "strategy_versions.json"
REGENERATE = "COMPBENCH_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/strategies/test_versions.py"


def decisions() -> dict[str, dict[str, str]]:
    """Per built-in strategy that runs offline: its version and the hash of its decisions on the samples."""
    from compbench.measure.tokens import TokenCounter
    from compbench.replay.trajectories import replay
    from compbench.replay.viewstate import ReplayConfig
    from compbench.run.missing_usage import complete
    from compbench.sdk.context import ReplayContext
    from compbench.sdk.session import ModelLimits
    from compbench.strategies import resolve
    from compbench.summarizers.mock import MockSummarizer
    from compbench.testing import samples

    config = ReplayConfig(ModelLimits(32_000, 4_096), 0)
    logs = [complete(t)[0] for t in samples()]
    counters = [TokenCounter("chars4") for _ in logs]
    out = {}
    for name in BUILTIN:  # a plug-in's versions are its own package's to check
        info = get(name)
        if info.needs_model or info.configurable_only:
            continue
        h = hashlib.sha256()
        for t, counter in zip(logs, counters, strict=True):
            made = resolve(name).for_log(t)[0].create()
            trace = replay(t, made, MockSummarizer(None), config, counter, context=ReplayContext())
            h.update(json.dumps([t.id, [[c.step, c.phase, c.reason, c.ok, list(c.kept_ids), list(c.replaced_ids)]
                                        for c in trace.compactions],
                                 [[p.step, p.phase, p.reason, list(p.parts)] for p in trace.prunes]]).encode())
        out[name] = {"version": info.version, "decisions": h.hexdigest()[:16]}
    return out


def unbumped(now: dict[str, dict[str, str]], want: dict[str, dict[str, str]]) -> list[str]:
    """The strategies whose decisions differ from the golden's under the version the golden has."""
    return [f"{n} (version {v['version']})" for n, v in now.items()
            if n in want and want[n]["version"] == v["version"] and want[n]["decisions"] != v["decisions"]]


@pytest.fixture(scope="module")
def now() -> dict[str, dict[str, str]]:
    return decisions()


def test_every_strategys_decisions_move_with_its_version(now: dict[str, dict[str, str]]) -> None:
    if os.environ.get("COMPBENCH_REGEN_GOLDEN"):
        GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    silent = unbumped(now, want)
    assert not silent, (f"decisions on the bundled samples changed under the same version: {', '.join(silent)}; bump "
                        f"version= in its @strategy(...) (cached results are keyed on it), then run {REGENERATE}")
    stale = sorted(set(now) ^ set(want)) + sorted(n for n in now if n in want and want[n] != now[n])
    assert not stale, f"the golden is stale for {', '.join(stale)}: run {REGENERATE}"


def test_a_changed_decision_under_the_same_version_is_named(now: dict[str, dict[str, str]]) -> None:
    """The check itself: a golden whose hash differs at the same version fails on that strategy, by name."""
    want = {n: dict(v) for n, v in now.items()}
    want["truncate"]["decisions"] = "0" * 16
    assert unbumped(now, want) == [f"truncate (version {now['truncate']['version']})"]
    want["truncate"]["version"] = "0"  # bumped since: no longer a silent change, only a stale golden
    assert unbumped(now, want) == []
