"""The demo's results, strategy by strategy, are what the golden says.

``make demo`` replays the bundled samples through every strategy (compbench.demo.demo_spec); these are its
figures per strategy, exact (sums of integer columns, dollars to the micro-dollar): a change in any number
of any strategy shows here, not only where some test happens to pin a value. A deliberate change (a
strategy, the loop, the summarizer, the samples) regenerates it, and its commit says why:
``COMPBENCH_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_demo.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import helpers
from compbench.data.dataset import default_dataset
from compbench.data.importing import iter_transcripts
from compbench.demo import demo_spec
from compbench.run.write import write_run
from compbench.store.reader import Run

GOLDEN = helpers.GOLDEN / "demo_figures.json"
SUMS = ("compactions", "failed_compactions", "noop_compactions", "prunes", "pruned_parts", "overflows",
        "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "summarizer_input_tokens",
        "summarizer_output_tokens", "reference_input_tokens", "needs", "needs_present", "needs_verbatim",
        "needs_upper", "oracle_present", "facts_received", "reacquisitions", "reacquired_content_tokens",
        "reacquired_tokens")


def figures(run: Path) -> dict[str, dict[str, Any]]:
    """Per strategy label: transcripts acted on, the integer sums, the peak context and the cost."""
    r = Run.open(run).results()
    out: dict[str, dict[str, Any]] = {}
    for label, g in r.groupby("strategy", sort=False):
        row: dict[str, Any] = {"acted": int((g["first_action_step"] >= 0).sum())}
        row |= {c: int(g[c].sum()) for c in SUMS}
        row |= {"peak_context": int(g["peak_context"].max()), "cost_usd": round(float(g["cost_usd"].sum()), 6)}
        out[str(label)] = row
    return out


def test_the_demo_figures_are_the_golden(tmp_path: Path) -> None:
    dataset = default_dataset()
    spec = demo_spec(dataset)
    write_run(tmp_path / "run", spec, str(dataset), iter_transcripts(str(dataset)), workers=2)
    got = figures(tmp_path / "run")
    if os.environ.get("COMPBENCH_REGEN_GOLDEN"):
        lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in got.items()]
        GOLDEN.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert list(got) == list(want), "strategies changed: regenerate the golden (see the module docstring)"
    changed = {k: {c: (want[k].get(c), v) for c, v in got[k].items() if want[k].get(c) != v}
               for k in got if got[k] != want[k]}
    assert not changed, f"demo figures changed (golden, now): {changed}"


def test_the_demo_replays_the_samples_as_compbench_run_does() -> None:
    """``make demo``'s first screen is a user's first run: the spec of ``compbench run`` with its defaults (each
    transcript at its own window and hidden prompt), not a window forced on every transcript."""
    from compbench.cli.options import REPLAY_NAMES, configured, spec_of
    from compbench.cli.run import run
    from compbench.config import Config
    from compbench.run.spec import with_settings

    dataset = default_dataset()
    ctx = run.make_context("run", ["--out", "unused"])  # the command's own defaults, no configuration file
    spec = with_settings(spec_of(configured((), Config()), {n: ctx.params[n] for n in REPLAY_NAMES}, str(dataset)))
    assert demo_spec(dataset) == spec and spec.settings  # the settings sweep of the samples' tools too
    assert spec.limits is None and spec.system_tokens is None
