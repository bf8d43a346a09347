"""The HTML report: self-contained, deterministic, escaped; checked in headless Chromium like a person would
(a deep link to the hostile transcript's compaction, and a screenshot at 1400 px whose leaderboard must show
its last column)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from compbench.data.redact import redact
from compbench.data.synth import generate
from compbench.data.transcript import Message, Text, Transcript
from compbench.reports.html import write_report
from compbench.reports.pack import unpacked
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import CHROMIUM, FLAGS, needs_chromium, register_keep_last

XSS = '<script>alert(1)</script> and "><img src=x onerror=alert(2)>'
SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
HOSTILE_ID = '<b>hostile</b>"id'


def hostile() -> Transcript:
    t = next(generate(1, seed=9, turns=24, log_lines=20, code_lines=20))
    first = t.messages[1]
    text = f"My key is {SECRET} {XSS}\x00\x07 {first.text}"
    msgs = (t.messages[0], Message(first.id, "user", (Text(text),)), *t.messages[2:])
    return replace(t, id=HOSTILE_ID, messages=msgs)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    register_keep_last()
    root = tmp_path_factory.mktemp("report")
    data = [hostile(), *generate(2, seed=4, turns=24, log_lines=20, code_lines=20)]
    # the extractive summarizer copies the user's text into summaries: the hostile string reaches the report
    spec = RunSpec(strategies=("none", "test-keep-last"), limits=ModelLimits(6_000, 1_000), tokenizer="chars4",
                   summarizer="extractive")
    write_run(root / "run", spec, "synth", data)
    return write_report(root / "run", root / "report.html", redact)


def blobs(html: str) -> dict[str, Any]:
    return {m.group(1): unpacked(m.group(2)) for m in re.finditer(
        r'<script type="application/octet-stream" id="blob-(\w+)">([^<]*)</script>', html)}


def summary(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="summary-data">([^<]*)</script>', html)
    assert m
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def test_self_contained_escaped_and_redacted(report: Path) -> None:
    html = report.read_text()
    # transcript text lives only in packed data, inserted by the page as text: never raw markup
    assert "<script>alert(1)" not in html and "<img src=x" not in html and "<b>hostile</b>" not in html
    assert SECRET not in html
    assert "\x00" not in html and "\x07" not in html
    assert not re.search(r"""(src|href)=["']?https?://""", html)  # nothing fetched from a network
    data = blobs(html)
    assert set(data) == {"rows", "events", "details", "series"}
    text = json.dumps(data, ensure_ascii=False)
    assert "<script>alert(1)</script>" in text and "<img src=x onerror=alert(2)>" in text
    assert "[REDACTED:openai-key]" in text and SECRET not in text and "\x00" not in text
    assert HOSTILE_ID in data["rows"]["tids"]
    # ours only: the inline data, four packed blobs, the charting library, the page's script
    assert html.count("<script") == 7
    for section in ("Verdict", "Leaderboard", "Savings against recall", "Drill down", "Worst compactions first",
                    "What each strategy loses", "Glossary", "Method and its limits", "Manifest"):
        assert section in html
    assert "Apache ECharts 6.1.0" in html and len(html) < 3_000_000


def test_verdict_leaderboard_and_glossary(report: Path) -> None:
    html = report.read_text()
    s = summary(html)
    labels = [x["label"] for x in s["strategies"]]
    assert set(labels) == {"none", "test-keep-last"}
    # the verdict names a best strategy for the default objectives, or says none meets them, with caveats
    verdict = html[html.index('id="verdict"'):html.index('id="leaderboard"')]
    assert "Best for" in verdict and "Caveats" in verdict and "extractive" in verdict
    # every metric of compare is defined in the glossary
    from compbench.decide.metrics import METRICS

    glossary = html[html.index('id="glossary"'):html.index('id="limits"')]
    for m in METRICS:
        assert f"({m.name})" in glossary


def test_report_is_deterministic(report: Path, tmp_path: Path) -> None:
    again = write_report(report.parent / "run", tmp_path / "again.html", redact)
    assert again.read_bytes() == report.read_bytes()




def dom(page: Path, profile: Path, fragment: str = "", width: int = 1400) -> str:
    assert CHROMIUM
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},1000",
                           "--dump-dom", page.as_uri() + fragment],
                          check=True, capture_output=True, text=True, timeout=120).stdout


def layout(text: str) -> dict[str, int]:
    m = re.search(r'data-layout="([^"]*)"', text)
    assert m, "the page did not measure its layout"
    data: dict[str, int] = json.loads(m.group(1).replace("&quot;", '"'))
    return data


@needs_chromium
def test_drills_down_to_the_facts_lost_and_stays_escaped(report: Path, tmp_path: Path) -> None:
    html = report.read_text()
    data = blobs(html)
    ti = data["rows"]["tids"].index(HOSTILE_ID)
    si = [x["label"] for x in summary(html)["strategies"]].index("test-keep-last")
    ev = data["events"]["cols"]
    pos = next(p for p in map(int, data["details"]) if ev["t"][p] == ti and ev["s"][p] == si)
    out = dom(report, tmp_path / "p", f"#x=s:{si},t:{ti},c:{pos}")
    assert 'data-ready="1"' in out
    assert out.count("<script") == 7  # the transcript's script tag stayed text
    out = re.sub(r"<script[^>]*>.*?</script>", "", out, flags=re.S)  # the page as drawn, without our scripts
    # the drill-down shows the transcript, the compaction, its facts lost and its summary, as text
    assert "Compaction #" in out and "Facts lost (" in out and 'class="summary"' in out
    assert "&lt;b&gt;hostile&lt;/b&gt;" in out and "<b>hostile</b>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "<img" not in out
    assert "[REDACTED:openai-key]" in out and SECRET not in out
    # the worst compactions list and the transcripts table are drawn
    assert 'id="x-table"' in out and "page 1 of" in out


@needs_chromium
def test_leaderboard_fits_1400px_screenshot(report: Path, tmp_path: Path) -> None:
    """At 1400 px the leaderboard's last column is inside the window and drawn in the screenshot; the same
    check fails when the table is forced wider (so it can catch a cut-off column)."""
    from matplotlib.image import imread

    assert CHROMIUM
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'p'}", "--window-size=1400,1000",
                    f"--screenshot={shot}", report.as_uri()], check=True, capture_output=True, timeout=120)
    box = layout(dom(report, tmp_path / "p"))
    assert box["page"] <= box["viewport"] <= 1400, box  # no horizontal scroll anywhere
    assert box["contrast"] >= 4.5, box  # a selected strategy or button is readable (WCAG AA)
    assert box["table"] <= box["box"] and box["last"] <= box["viewport"], box  # no column cut off
    pixels = imread(str(shot))
    assert pixels.shape[1] == 1400 and box["lastBottom"] <= pixels.shape[0], box
    header = pixels[box["lastTop"]:box["lastBottom"], box["lastLeft"]:box["last"], :3]
    assert header.size and (header.mean(axis=2) < 0.4).sum() > 20  # the last column's heading is drawn
    wide = tmp_path / "wide.html"
    wide.write_text(report.read_text().replace("</style>", "#lb { width: 2200px }</style>", 1))
    cut = layout(dom(wide, tmp_path / "p"))
    assert cut["last"] > cut["viewport"] or cut["table"] > cut["box"]


def test_huge_tool_output_and_control_characters_render(tmp_path: Path) -> None:
    from compbench.data.formats.native import write
    from compbench.data.transcript import ToolCall, ToolResult

    register_keep_last()
    huge = ("line with \x1b[31mANSI\x1b[0m and \x00 NUL \x08 and </pre></details><script>x()</script>\n" * 140_000)[
        :10_000_000]
    assert len(huge) == 10_000_000
    msgs = (Message("u1", "user", (Text("Dump the log and fix src/app.py"),)),
            Message("a1", "assistant", (Text("Reading."), ToolCall("c1", "bash", '{"command": "cat big.log"}'))),
            Message("t1", "tool", (ToolResult("c1", "bash", huge),)),
            Message("a2", "assistant", (Text("Found it."),)),
            Message("u2", "user", (Text("ok, now fix it"),)),
            Message("a3", "assistant", (Text("Fixed src/app.py."),)))
    data = tmp_path / "big.jsonl"
    write([Transcript("big", "compbench", msgs)], data)
    spec = RunSpec(strategies=("none", "test-keep-last:keep=2,trigger=1000"), limits=ModelLimits(100_000, 1_000),
                   tokenizer="chars4")
    from compbench.data.importing import iter_transcripts

    write_run(tmp_path / "run", spec, str(data), iter_transcripts(data))
    html = write_report(tmp_path / "run", tmp_path / "r.html").read_text()
    assert len(html) < 2_000_000  # the 10 MB output is summarized and previewed, never inlined whole
    assert "\x00" not in html and "\x1b" not in html and "\x08" not in html
    assert html.count("<script") == 7 and "<script>x()" not in html
    details = json.dumps(blobs(html)["details"])
    assert "\\u001b" not in details and "\\u0000" not in details and "</pre></details><script>x()" in details
    assert html.rstrip().endswith("</html>")


# --- issue 26: numbers a user can act on --------------------------------------------------------------------

@pytest.fixture(scope="module")
def two_agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A calibrated run of sessions from two agents under two configurations that trade savings for recall, in a
    window no call exceeds (every strategy sound): the verdict's bar is set between their recalls."""
    register_keep_last()
    root = tmp_path_factory.mktemp("agents")
    data = [replace(t, id=f"{t.id}-{k}", source="claude-code" if k % 2 else "codex")
            for k, t in enumerate(generate(6, seed=4, turns=30, log_lines=20, code_lines=20))]
    spec = RunSpec(strategies=("none", "test-keep-last:keep=2", "test-keep-last:keep=12"),
                   limits=ModelLimits(200_000, 1_000), tokenizer="chars4", token_correction="none")
    write_run(root / "run", spec, "synth", data)
    return root / "run"


def test_the_leaderboard_follows_the_verdicts_rule_and_marks_who_misses_the_bar(two_agents: Path,
                                                                                 tmp_path: Path) -> None:
    from compbench.decide.compare import load_results

    r = load_results(two_agents)
    recall = {s: g["needs_present"].sum() / g["needs"].sum() for s, g in r.groupby("strategy") if g["needs"].sum()}
    saved = {s: 1 - g["input_tokens"].sum() / g["reference_input_tokens"].sum() for s, g in r.groupby("strategy")}
    greedy, careful = "test-keep-last:keep=2", "test-keep-last:keep=12"
    assert saved[greedy] > saved[careful] and recall[greedy] < recall[careful]  # the shape under test
    bar = (recall[greedy] + recall[careful]) / 2
    objective = f"max net_savings s.t. needed_recall >= {bar:.4f}"
    html = write_report(two_agents, tmp_path / "r.html", objectives=[objective]).read_text()
    order = [s["label"] for s in summary(html)["strategies"]]
    verdict = html[html.index('id="verdict"'):html.index('id="leaderboard"')]
    pick = re.search(r'class="best"[^>]*>.*?<code[^>]*>(.*?)</code>', verdict, re.S)
    # the leaderboard's first row is the verdict's pick (a label's parts in spans, to wrap between parameters)
    assert pick and re.sub(r"<[^>]+>", "", pick.group(1)) == careful == order[0]
    board = html[html.index('id="lb"'):html.index('id="frontier"')]
    row = board[board.index(f'data-label="{greedy}"'):]
    assert 'below bar</span>' in row[:row.index("</tr>")]  # the greedy one says why it is second
    assert "median" in board  # the per-transcript median beside the pooled headline


def test_the_report_has_a_verdict_per_agent_and_names_the_runs_own_summarizer(two_agents: Path,
                                                                                tmp_path: Path) -> None:
    manifest = two_agents / "manifest.json"
    data = json.loads(manifest.read_text())
    # a run written before: its manifest named the extractive summarizer whatever the run's was
    data["method_limits"] = ["The replay assumes the agent would have acted the same after a compaction.",
                             "The extractive summarizer is a deterministic heuristic, not a model."]
    old = tmp_path / "old"
    shutil.copytree(two_agents, old)
    (old / "manifest.json").write_text(json.dumps(data))
    for run in (two_agents, old):
        html = write_report(run, tmp_path / f"{run.name}.html").read_text()
        method = html[html.index('id="limits"'):html.index('id="manifest"')]
        assert "Summaries by calibrated" in method and "extractive" not in method, run
    agents = html[html.index('id="agents"'):html.index('id="leaderboard"')]
    assert "Claude Code logs" in agents and "Codex logs" in agents and "not in this run" in agents
    s = summary(html)
    assert s["kind_titles"]["recall"].startswith("specifics") and "recall" not in s["kind_titles"].values()


@needs_chromium
def test_the_frontier_is_fitted_on_round_ticks_and_a_missing_kind_says_no_data(report: Path, tmp_path: Path) -> None:
    box = layout(dom(report, tmp_path / "p"))
    s = summary(report.read_text())
    recalls = [x["m"]["needed_recall"]["v"] for x in s["strategies"] if x["m"]["needed_recall"]["v"] is not None]
    saves = [x["m"]["effective_savings"]["v"] for x in s["strategies"] if x["m"]["needed_recall"]["v"] is not None]
    (x0, x1), (y0, y1) = box["frontier"]["x"], box["frontier"]["y"]
    assert 0 <= y0 <= min(recalls) and max(recalls) <= y1 <= 1  # within 0–100%
    assert y0 > 0 or min(recalls) < 0.1  # fitted: not from 0 unless a point is near it
    assert x0 <= min(saves) and max(saves) <= x1 <= 1 and (x0 >= 0 or min(saves) < 0)
    assert all(abs(v * 100 - round(v * 100, 1)) < 1e-6 for v in (x0, x1, y0, y1))  # round ticks
    none = next(x for x in s["strategies"] if x["label"] == "none")
    assert all(v is None for v in none["kinds"].values())  # none never acted: no need of any kind
    # in each kind's panel drawn (a kind no strategy has a figure of is named instead), "no data", never a 0% bar
    assert s["kinds"] and box["nodata"] >= len(s["kinds"])
