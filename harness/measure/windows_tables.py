"""``compbench.measure.windows_tables`` — The model tables the tools read a window from, and the lookups on them.

A tool compacts at a share of the window *it* believes the model has, which is its own table's figure, not a
general table's (litellm lists gpt-5.4 at 1,050,000; pi's registry at 272,000, so pi's threshold sits 778,000
tokens lower). The tables ship as ``windows_tables.json``, each read from the tool's repository at a named commit
(``python tools/windows_tables.py``, which says how):

* ``pi``: pi-mono's ``models.generated.ts`` (provider -> model -> contextWindow, maxTokens), its history by date;
* ``catwalk``: the provider configurations Crush fetches (provider -> model -> context_window), its history by date;
* ``roo-code`` / ``kilo-code``: Roo Code's and Kilo Code's (kilocode-legacy) ``packages/types/src/providers``.

A table with a history is read at the session's date (the build a session ran holds the table of its day);
without a date, at its latest. The tables the tools keep in code (OpenCode on GitHub Copilot, Gemini CLI's
``tokenLimit``) stay beside them here with their sources.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.data.transcript import Transcript

DATA = Path(__file__).with_name("windows_tables.json")
TOOL_TABLES = {  # a table's name in a sentence, by its key in the file
    "pi": "pi's own model registry",
    "catwalk": "catwalk",
    "roo-code": "Roo Code's own model table",
    "kilo-code": "Kilo Code's own model table",
}
HISTORY = frozenset({"pi", "catwalk"})  # the tables read with their history: a session gets its day's row
# Which table an id is taken from when the log does not name the provider and several tables list it: the model's
# own maker first, then clouds, then hosts and routers (vscode-llm's Copilot-served windows of 12k-100k last).
PROVIDER_ORDER = ("anthropic", "openai", "gemini", "google", "deepseek", "mistral", "xai", "moonshot", "minimax",
                  "zai", "qwen-code", "vertex", "google-vertex", "bedrock", "amazon-bedrock", "azure",
                  "openai-codex", "azure-openai-responses")
# Roo Code's reserve for a model its table gives no maxTokens (getModelMaxOutputTokens' default; roo_code_limits)
ROO_DEFAULT_MAX_TOKENS = 8_192
# Gemini CLI compares against its own tokenLimit(model) (packages/core/src/core/tokenLimits.ts @ 5411f11 and
# v0.17.0): 1,048,576 unless listed here; litellm's table is not what it uses.
GEMINI_CLI_LIMITS = (("gemini-1.5-pro", 2_097_152), ("gemini-2.0-flash-preview-image-generation", 32_000),
                     ("gemma-4-", 256_000))
GEMINI_CLI_DEFAULT = 1_048_576
# The tools that read their windows from litellm's table themselves: for them it is the tool's own table.
# A transcript format with no tool behind it has no other table to read.
LITELLM_TOOLS = {**{k: f"the table {v} reads" for k, v in (
    ("aider", "aider"), ("openhands", "OpenHands"), ("openhands-v0", "OpenHands"), ("openhands-eval", "OpenHands"),
    ("swe-agent", "SWE-agent"), ("mini-swe-agent", "mini-swe-agent"))},
    "openai": "an OpenAI-chat log: no tool's own table", "compbench": "a compbench log: no tool's own table"}
PI_CUSTOM = (128_000, 16_384)  # pi's model-registry.ts: a models.json model without contextWindow / maxTokens
# Crush's window for a model catwalk does not list (charmbracelet/crush 37f36e93): the provider's crush.json
# models[].context_window; from v0.78.0 (730315842, 2026-06-17) a provider without models discovers them from its
# server (Ollama, LM Studio, llama.cpp, LiteLLM, oMLX report a window); with neither it is 0: from v0.55.1
# (741c18a21, 2026-04-06) Crush then never compacts automatically, before it compacted after every step.
CRUSH_LOCAL = ("Crush's window for a model catwalk does not list is its provider's configuration in crush.json "
               "(or, from v0.78.0, what its server reports), not in the log")
# Roo Code / Kilo Code read a router's or a local server's windows from its model list at run time (OpenRouter,
# Requesty, Unbound, Vercel AI Gateway, LiteLLM, Ollama, LM Studio: src/api/providers/fetchers), not a table.
ROO_RUNTIME = "{tool} reads a router's or local server's windows from its model list at run time, not in the log"

_DATED = re.compile(r"(?:-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8})$")

# OpenCode reads a model's limits from models.dev (api.json, fetched at run time) per provider: GitHub Copilot serves
# Claude models with smaller limits than Anthropic, and gave them a separate input limit from 2026-03-19 (models.dev
# providers/github-copilot/models/*.toml, history read at anomalyco/models.dev f3fc69229). Per model, from each
# date: (context, input (0: none), output). OpenCode then compacts at input - min(20,000, output) when an input
# limit is set (session/overflow.ts), else at context - min(output, 32,000).
OPENCODE_COPILOT: dict[str, tuple[tuple[str, int, int, int], ...]] = {
    "claude-sonnet-4.5": (("2025-09-30", 128_000, 0, 16_000), ("2026-02-11", 128_000, 0, 32_000),
                          ("2026-03-19", 144_000, 128_000, 32_000), ("2026-05-29", 200_000, 168_000, 32_000)),
    "claude-sonnet-4.6": (("2026-02-17", 128_000, 0, 32_000), ("2026-03-19", 200_000, 128_000, 32_000),
                          ("2026-05-29", 200_000, 168_000, 32_000)),
    "claude-opus-4.5": (("2025-11-24", 128_000, 0, 16_000), ("2026-02-11", 128_000, 0, 32_000),
                        ("2026-03-19", 160_000, 128_000, 32_000), ("2026-05-29", 200_000, 168_000, 32_000)),
    "claude-opus-4.6": (("2026-02-05", 128_000, 0, 64_000), ("2026-03-19", 144_000, 128_000, 64_000),
                        ("2026-05-29", 200_000, 168_000, 32_000)),
    "claude-opus-4.7": (("2026-04-17", 144_000, 128_000, 64_000), ("2026-05-29", 200_000, 168_000, 32_000)),
    "claude-haiku-4.5": (("2025-11-15", 128_000, 0, 16_000), ("2026-02-11", 128_000, 0, 32_000),
                         ("2026-03-19", 144_000, 128_000, 32_000), ("2026-05-29", 200_000, 136_000, 64_000)),
    "claude-sonnet-4": (("2025-11-15", 128_000, 0, 16_000), ("2026-03-19", 216_000, 128_000, 16_000)),
}


@dataclass(frozen=True, slots=True)
class Listed:
    """A model's row in a tool's table: its window and output limit, the table (provider) and the day the row
    begins, and what the choice of row needs said (``note``: no date recorded, or a session before the listing)."""

    window: int
    max_output: int
    provider: str
    model: str
    since: str
    note: str = ""


@functools.cache
def tables() -> Mapping[str, Any]:
    doc: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return doc


def read_at(tool: str) -> str:
    """Where ``tool``'s table was read: ``badlogic/pi-mono history to 83378aad7e, 2026-03-15``."""
    t = tables()[tool]
    return f"{t['repo']} {'history to' if tool in HISTORY else 'at'} {str(t['commit'])[:10]}, {t['date']}"


def providers(tool: str) -> frozenset[str]:
    """The providers ``tool``'s table lists (a file holding two tables counts under both names)."""
    return frozenset(p.split(":")[0] for p in tables()[tool]["models"])


def row_at(rows: Sequence[Sequence[Any]], day: str) -> tuple[Sequence[Any], str]:
    """The row in force on ``day`` (YYYY-MM-DD): the last that began by then; the latest when no day is known; the
    first when the session predates every row (the listing's commit is later than the build that used it)."""
    if not day:
        return rows[-1], "no date recorded: the latest" if len(rows) > 1 else ""
    found = [r for r in rows if str(r[0]) <= day]
    if found:
        return found[-1], ""
    return rows[0], f"the session ({day}) predates the listing: its first row"


def _tables_of(tool: str, provider: str) -> list[tuple[str, Mapping[str, Any]]]:
    models: Mapping[str, Mapping[str, Any]] = tables()[tool]["models"]
    return [(name, t) for name, t in models.items() if name.split(":")[0] == provider]


def _order(names: Iterable[str]) -> list[str]:
    rank = {p: i for i, p in enumerate(PROVIDER_ORDER)}
    return sorted(names, key=lambda n: (rank.get(n.split(":")[0], len(rank)), n))


def listed(tool: str, model: str, provider: str = "", day: str = "") -> Listed | None:
    """``model`` in ``tool``'s table: under ``provider`` when the log names it, else under the first provider
    listing it (:data:`PROVIDER_ORDER`); exactly as recorded, else without a date suffix
    (``claude-sonnet-4-5-20250929`` as ``claude-sonnet-4-5``). None when the table does not list it."""
    if not model:
        return None
    models: Mapping[str, Mapping[str, Any]] = tables()[tool]["models"]
    names = [n for n, _ in _tables_of(tool, provider)] if provider else _order(models)
    undated = _DATED.sub("", model)
    for want in dict.fromkeys((model, undated)):
        for name in names:
            rows = models[name].get(want)
            if rows:
                row, note = row_at(rows, day)
                if want != model:
                    note = ", ".join(x for x in (f"listed as {want}", note) if x)
                return Listed(int(row[1]), int(row[2]), name.split(":")[0], want, str(row[0]), note)
    return None


def elsewhere(tool: str, model: str, provider: str, window: int) -> list[str]:
    """The other providers of ``tool``'s table that list ``model`` at another window (said beside the figure used,
    when the log does not name its provider)."""
    out = []
    for name, t in tables()[tool]["models"].items():
        rows = t.get(model)
        if rows and name.split(":")[0] != provider and int(rows[-1][1]) != window:
            out.append(f"{name.split(':')[0]} {int(rows[-1][1]):,}")
    return sorted(dict.fromkeys(out))


def session_date(t: Transcript) -> str:
    """The session's first recorded date (YYYY-MM-DD), "" when it records none: its start (``started_at``), else
    its first message's time (epoch seconds or milliseconds, or an ISO ``timestamp``)."""
    iso = re.compile(r"\d{4}-\d{2}-\d{2}")
    start = t.meta.get("started_at")
    if isinstance(start, str) and iso.match(start):
        return start[:10]
    for m in t.messages:
        stamp = m.meta.get("time")
        if isinstance(stamp, int | float) and not isinstance(stamp, bool) and stamp > 0:
            seconds = stamp / 1000 if stamp > 1e11 else stamp
            return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d")
        text = m.meta.get("timestamp")
        if isinstance(text, str) and iso.match(text):
            return text[:10]
    return ""
