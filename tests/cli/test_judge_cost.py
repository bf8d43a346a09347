"""``judge`` says what it will send and cost before it sends anything (issue 31): ``--dry-run`` sends nothing,
its count of calls is the count a real judge makes, the prompts a real judge sends fall within its token range,
and the price is litellm's for the model, or said to be unknown."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_openai import FakeOpenAI

from compbench.cli import cli
from compbench.cli.judge_cost import Call, priced
from compbench.data.synth import generate
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import register_keep_last


def answer(n: int) -> str:
    """A probe, an answer and a grade at once, different on every call (so no response is served from the
    cache: each call counted is a call sent)."""
    return json.dumps({"question": f"Which file? ({n})", "answer": "src/app.py", "correct": True, "accuracy": 5,
                       "context_awareness": 5, "artifact_trail": 5, "completeness": 5, "continuity": 5})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from compbench.data.formats.native import write
    from compbench.data.importing import iter_transcripts

    register_keep_last()
    root = tmp_path_factory.mktemp("cost")
    write(list(generate(2, seed=3, turns=30, log_lines=30, code_lines=40)), root / "d.jsonl")
    spec = RunSpec(strategies=("none", "test-keep-last"), limits=ModelLimits(8_000, 1_000), tokenizer="chars4",
                   summarizer="extractive")
    write_run(root / "run", spec, str(root / "d.jsonl"), iter_transcripts(str(root / "d.jsonl")))
    return root / "run"


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for k in list(os.environ):
        if k.endswith("_API_KEY") or k.startswith(("OPENAI", "ANTHROPIC", "AZURE")):
            monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


def estimate_line(text: str) -> tuple[int, int, int]:
    """(probes, compactions, calls) from the estimate's first line."""
    import re

    m = re.search(r"judge estimate: (\d+) probes on (\d+) compactions \(--max-events \d+\), (\d+) model calls", text)
    assert m, text
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def test_dry_run_counts_and_prices_without_sending_anything(run: Path, tmp_path: Path, no_keys: None) -> None:
    server = FakeOpenAI(answer)
    try:
        r = CliRunner().invoke(cli, ["judge", str(run), "--agent", "litellm:gpt-4o-mini", "--api-base", server.url,
                                     "--max-events", "2", "--dry-run", "--cache-dir", str(tmp_path / "c")])
    finally:
        server.close()
    assert r.exit_code == 0, (r.output, r.exception)
    assert server.seen == [] and not (run / "judged.parquet").exists()  # nothing sent, nothing written
    probes, events, calls = estimate_line(r.stdout)
    assert events == 2 and calls == 3 * probes and probes >= events
    assert "at gpt-4o-mini's prices ($0.15 in / $0.60 out per million tokens)" in " ".join(r.stdout.split())
    # no key is needed to estimate: a model that needs one and has none is only refused when it would be called
    dry = CliRunner().invoke(cli, ["judge", str(run), "--agent", "litellm:claude-sonnet-4-5", "--dry-run",
                                   "--max-events", "1"])
    assert dry.exit_code == 0 and "$3.00 in / $15.00 out" in " ".join(dry.stdout.split())


def test_the_estimate_is_what_a_real_judge_sends(run: Path, tmp_path: Path, no_keys: None) -> None:
    from compbench.measure.tokens import TokenCounter

    server = FakeOpenAI(answer)
    try:
        r = CliRunner().invoke(cli, ["judge", str(run), "--agent", "litellm:llama3", "--api-base", server.url,
                                     "--max-events", "2", "--cache-dir", str(tmp_path / "c")])
    finally:
        server.close()
    assert r.exit_code == 0, (r.output, r.exception)
    before = r.stderr.index("judge estimate:")
    assert before < r.stderr.index("judge: made")  # said before the first call
    probes, _, calls = estimate_line(r.stderr)
    assert len(server.seen) == calls == 3 * probes  # every call it counted, no more
    text = " ".join(r.stderr.split())
    assert "litellm has no price for llama3: tokens only" in text
    import re

    low, unknown = (int(x.replace(",", "")) for x in re.search(
        r"([\d,]+) prompt tokens \(\+ up to ([\d,]+) the models write into them\)", text).groups())
    counter = TokenCounter("o200k_base")
    sent = sum(counter.count_text(m.get("content") or "") + counter.message_overhead for c in server.seen
               for m in c["messages"])
    assert low <= sent <= low + unknown  # the real prompts fall within the range it gave


def test_prices_are_litellms_or_said_to_be_unknown() -> None:
    from compbench.measure.models import prices_for

    calls = [Call("probe", 1_000, 0, 600), Call("answer", 3_000, 600, 600), Call("grade", 200, 1_800, 600)]
    p = priced("litellm:gpt-4o-mini", calls, ("probe", "answer", "grade"))
    price = prices_for("gpt-4o-mini")
    assert p.calls == 3 and p.prompt == 4_200 and p.unknown == 2_400 and p.output == 1_800
    assert p.low == pytest.approx(4_200 * price.input)
    assert p.high == pytest.approx(6_600 * price.input + 1_800 * price.output)
    judge_only = priced("litellm:gpt-4o-mini", calls, ("probe", "grade"))
    assert judge_only.calls == 2 and judge_only.prompt == 1_200
    unknown = priced("litellm:my-local-model", calls, ("answer",))
    assert unknown.low is None and unknown.high is None and "no price for my-local-model" in unknown.note
    cached = priced("cache-only:/tmp/x@gpt-4o-mini", calls, ("answer",))
    assert cached.high == 0.0 and "nothing is sent" in cached.note


def test_a_run_without_a_compaction_to_probe_is_said_before_any_estimate(tmp_path: Path) -> None:
    spec = RunSpec(strategies=("none",), limits=ModelLimits(8_000, 1_000), tokenizer="chars4")
    from compbench.data.formats.native import write
    from compbench.data.importing import iter_transcripts

    write(list(generate(1, seed=3, turns=4, log_lines=2, code_lines=2)), tmp_path / "d.jsonl")
    write_run(tmp_path / "run", spec, str(tmp_path / "d.jsonl"), iter_transcripts(str(tmp_path / "d.jsonl")))
    r = CliRunner().invoke(cli, ["judge", str(tmp_path / "run"), "--agent", "litellm:gpt-4o-mini", "--dry-run"])
    assert r.exit_code != 0 and "has no successful compaction with facts to probe" in str(r.exception)
