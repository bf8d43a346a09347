"""The HTML report: self-contained, deterministic, escaped; checked in headless Chromium like a person would."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from test_run_compare_gate import KeepLast, KeepLastParams

from compbench.redact import redact
from compbench.reports.html import write_report
from compbench.rundir import write_run
from compbench.runs import RunSpec
from compbench.session import ModelLimits
from compbench.strategies import base, strategy
from compbench.synth import generate
from compbench.transcript import Message, Text, Transcript

XSS = '<script>alert(1)</script> and "><img src=x onerror=alert(2)>'
SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def hostile() -> Transcript:
    t = next(generate(1, seed=9, turns=24, log_lines=20, code_lines=20))
    first = t.messages[1]
    text = f"My key is {SECRET} {XSS}\x00\x07 {first.text}"
    msgs = (t.messages[0], Message(first.id, "user", (Text(text),)), *t.messages[2:])
    return replace(t, id='<b>hostile</b>"id', messages=msgs)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "test-keep-last" not in base._registry:
        strategy("test-keep-last", params=KeepLastParams, source="test", summary="test")(KeepLast)
    root = tmp_path_factory.mktemp("report")
    data = [hostile(), *generate(2, seed=4, turns=24, log_lines=20, code_lines=20)]
    # the extractive summarizer copies the user's text into summaries: the hostile string reaches the report
    spec = RunSpec(strategies=("none", "test-keep-last"), limits=ModelLimits(6_000, 1_000), tokenizer="chars4",
                   summarizer="extractive")
    write_run(root / "run", spec, "synth", data)
    return write_report(root / "run", root / "report.html", redact)


def test_self_contained_escaped_and_redacted(report: Path) -> None:
    html = report.read_text()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "&lt;b&gt;hostile&lt;/b&gt;" in html and "<b>hostile</b>" not in html
    assert SECRET not in html and "[REDACTED:openai-key]" in html
    assert "\x00" not in html and "\x07" not in html
    assert not re.search(r"""(src|href)=["']?https?://""", html)  # nothing fetched from a network
    assert html.count("<svg") >= 4 and len(html) < 3_000_000
    for section in ("Leaderboard", "Savings vs needed-fact recall", "Compactions", "Method and its limits",
                    "Manifest"):
        assert section in html


def test_report_is_deterministic(report: Path, tmp_path: Path) -> None:
    again = write_report(report.parent / "run", tmp_path / "again.html", redact)
    assert again.read_bytes() == report.read_bytes()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (make test installs Debian's chromium)")
def test_renders_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    assert CHROMIUM
    profile = tmp_path / "profile"
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--window-size=1280,2400",
                    f"--screenshot={shot}", report.as_uri()], check=True, capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000
    dom = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", report.as_uri()],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    assert dom.count("<script") == 1  # ours; the transcript's script tag stayed text
    assert "<img" not in dom and "&lt;img src=x onerror=alert(2)&gt;" in dom
    assert re.search(r'<table id="lb" class="sortable">.*test-keep-last.*</table>', dom, re.S)
    assert dom.count('class="event"') >= 1 and dom.count("<svg") >= 4


def test_huge_tool_output_and_control_characters_render(tmp_path: Path) -> None:
    from compbench.formats.native import write
    from compbench.transcript import ToolCall, ToolResult

    if "test-keep-last" not in base._registry:
        strategy("test-keep-last", params=KeepLastParams, source="test", summary="test")(KeepLast)
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
    from compbench.dataset import iter_transcripts

    write_run(tmp_path / "run", spec, str(data), iter_transcripts(data))
    html = write_report(tmp_path / "run", tmp_path / "r.html").read_text()
    assert len(html) < 2_000_000  # the 10 MB output is summarized and previewed, never inlined whole
    assert "\x00" not in html and "\x1b" not in html and "\x08" not in html
    assert html.count("<script") == 1 and "&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;" in html
    assert html.rstrip().endswith("</html>")
