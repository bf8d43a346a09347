"""API keys never reach a run directory, a response cache, a report or the logs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as NS
from typing import Any

from compbench.data.synth import generate
from compbench.reports.html import write_report
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits

KEY = "sk-proj-PLANTEDKEY0123456789abcdefghijklmnop"


def fake_completion(**kw: Any) -> Any:
    assert kw["api_key"] == KEY  # the key does reach the client...
    return NS(choices=[NS(message=NS(content="summary of the work"))], usage=NS(prompt_tokens=100, completion_tokens=5))


def test_planted_key_is_nowhere_in_the_run_cache_or_report(tmp_path: Path, capsys: Any) -> None:
    cache = tmp_path / "cache"
    spec = RunSpec(strategies=("none", "opencode"), limits=ModelLimits(3_000, 500), tokenizer="chars4",
                   summarizer="litellm:fake-model",
                   summarizer_options={"api_key": KEY, "cache_dir": str(cache), "completion": fake_completion})
    write_run(tmp_path / "run", spec, "synth", generate(3, seed=1, turns=20, log_lines=20, code_lines=20))
    write_report(tmp_path / "run", tmp_path / "report.html")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files) and any(p.parent.parent == cache for p in files)
    for p in files:  # ...and nothing else does
        assert KEY.encode() not in p.read_bytes(), p
    out = capsys.readouterr()
    assert KEY not in out.out and KEY not in out.err
    assert "api_key" not in (tmp_path / "run" / "manifest.json").read_text()
