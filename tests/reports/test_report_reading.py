"""The report read as a user reads it (issue 40, item 9): a long filter in the header is cut at 80 characters with
the whole in a tooltip and a details element; the savings-vs-recall chart names the key points only (the frontier,
each tool's own strategy, the baseline) when the points are many, and draws ``recorded`` as the baseline; "n=1,
few" stays on one line; the loss table's places are explained and the recall order says which pairs depend on the
summarizer; a fact kind no transcript needed is not drawn as a panel of "no data" but named. Checked on the HTML,
and at 1400 px in headless Chromium on what the page really drew."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from compbench.data.select import parse
from compbench.data.synth import generate
from compbench.reports.html import write_report
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import CHROMIUM, FLAGS, needs_chromium, register_keep_last

CONFIGS = tuple(f"test-keep-last:keep={k},trigger={t}" for k in (4, 6, 8, 10) for t in (2000, 3500, 5000, 6500))
TOOL = CONFIGS[0]  # relabelled "pi": the own strategy of the tool whose logs these are said to be
BASE = CONFIGS[1]  # relabelled "recorded": the tool as it ran


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sixteen configurations and none over four sessions said to be pi's (every figure few), one of them relabelled
    pi (the tool's own strategy) and one recorded (the tool as it ran): more points than the chart names."""
    register_keep_last()
    out = tmp_path_factory.mktemp("reading") / "run"
    spec = RunSpec(strategies=("none", *CONFIGS), limits=ModelLimits(8_000, 500), tokenizer="chars4",
                   token_correction="none")
    write_run(out, spec, "synth", list(generate(4, seed=3, turns=30, log_lines=30, code_lines=40)))
    r = pd.read_parquet(out / "results.parquet")
    r["source"] = "pi"
    for label, name in ((TOOL, "pi"), (BASE, "recorded")):
        r.loc[r["strategy"] == label, ["strategy", "name"]] = [name, name]
    for k in ("continuation",):  # no transcript needed a pending task: the kind has no figure anywhere
        r[f"needs_{k}"] = 0
        r[f"needed_recall_{k}"] = float("nan")
    r.to_parquet(out / "results.parquet", index=False)
    return out


def summary(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="summary-data">([^<]*)</script>', html)
    assert m
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def header(html: str) -> str:
    return html[html.index('<header class="top">'):html.index("</header>")]


def test_a_long_filter_is_cut_at_80_characters_with_the_whole_in_a_tooltip(run: Path, tmp_path: Path) -> None:
    ids = list(dict.fromkeys(pd.read_parquet(run / "results.parquet")["transcript_id"]))
    where = "id=" + "|".join(ids)  # four ids: 69 characters; with a fifth alternative, the long filter of issue 40
    where += "|" + "z" * 20
    text = parse(where).text()
    assert len(text) > 80
    html = write_report(run, tmp_path / "r.html", select=parse(where)).read_text(encoding="utf-8")
    top = header(html)
    assert f'those where <span class="filter" title="{text}">{text[:80]}…</span></strong>' in top
    assert f"<summary>the whole filter</summary><div>this report: <code>{text}</code></div>" in html


def test_the_filter_at_exactly_80_characters_is_whole(run: Path, tmp_path: Path) -> None:
    ids = list(dict.fromkeys(pd.read_parquet(run / "results.parquet")["transcript_id"]))
    base = "transcript_id=" + ids[0] + "|"
    for n, cut in ((79, False), (80, False), (81, True)):
        where = base + "*" + "y" * (n - len(base) - 2) + "*"
        assert len(parse(where).text()) == n
        html = write_report(run, tmp_path / "r.html", select=parse(where)).read_text(encoding="utf-8")
        assert ("…" in header(html)) == cut and ("the whole filter" in html) == cut


def test_the_chart_knows_the_baseline_and_the_tools_rows(run: Path, tmp_path: Path) -> None:
    html = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    s = summary(html)
    assert s["baseline"] == "recorded" and s["tools"] == ["pi"]
    assert "The black diamond is the baseline, each tool <strong>as it ran</strong>" in html
    board = html[html.index('id="lb"'):html.index("</table>", html.index('id="lb"'))]
    assert board.count("baseline: as it ran</span>") == 1


def test_loss_table_cells_places_and_recall_order_read_in_words(run: Path, tmp_path: Path) -> None:
    html = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    losses = html[html.index('id="retention"'):html.index('id="glossary"')]
    assert "place by recall / by re-reads" in losses and "rank: recall / re-acq." not in losses
    assert re.search(r"each strategy's place among the \d+ with both figures, 1 the best, by recall \(highest "
                     r"first\) and by re-acquisition \(least first\)", losses)
    assert "Does the recall order depend on the summarizer? Sorted by recall, " in losses
    assert "&gt;? depends" not in losses and "&gt; robust" not in losses
    # a figure's interval and its "few" each on a line of their own (the CSS keeps them unwrapped)
    assert re.search(r'<span class="ci">\[[^<]*\]</span><span class="few">n=\d, few</span>', losses)
    assert ".few { display: block; color: #9a6700; font-size: 11px; white-space: nowrap }" in html


def test_a_kind_no_transcript_needed_is_named_not_drawn(run: Path, tmp_path: Path) -> None:
    html = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert summary(html)["kinds"] == ["artifact", "recall", "decision"]
    assert "Not drawn: pending work — no transcript of this run needed a fact of that kind" in html


def layout(page: Path, profile: Path) -> dict[str, Any]:
    assert CHROMIUM
    out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--window-size=1400,1000", "--dump-dom",
                          page.as_uri()], check=True, capture_output=True, text=True, timeout=120).stdout
    m = re.search(r'data-layout="([^"]*)"', out)
    assert m, "the page did not measure its layout"
    data: dict[str, Any] = json.loads(m.group(1).replace("&quot;", '"'))
    return data


@needs_chromium
def test_at_1400px_the_chart_names_the_key_points_and_few_stays_on_one_line(run: Path, tmp_path: Path) -> None:
    page = write_report(run, tmp_path / "r.html")
    box = layout(page, tmp_path / "p")
    s = summary(page.read_text(encoding="utf-8"))
    key = {*s["frontier"], "pi", "recorded"}
    drawn = box["labels"]["texts"]
    assert box["points"] > 12 and box["named"] == len(key) < box["points"], box
    assert "as it ran (baseline)" in drawn and "recorded" not in drawn and "pi" in drawn
    assert set(drawn) - {"as it ran (baseline)"} <= key and box["labels"]["overlaps"] == 0
    assert box["kinds"] == 3 and box["fewWrapped"] == 0, box
    assert box["page"] <= box["viewport"]
