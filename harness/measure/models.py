"""``compbench.measure.models`` — Model windows and prices from litellm's bundled model table, read as JSON without
importing litellm.

``import litellm`` costs about two seconds and would fetch a remote price map; the table ships inside
the package as ``model_prices_and_context_window_backup.json`` and is all compbench needs.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compbench.data.transcript import Transcript
from compbench.errors import UsageError
from compbench.measure.cache import CacheModel
from compbench.sdk.session import ModelLimits


@functools.cache
def model_table() -> dict[str, dict[str, Any]]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("litellm is not installed; its bundled model table gives model windows")
    path = Path(next(iter(spec.submodule_search_locations))) / "model_prices_and_context_window_backup.json"
    table: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    table.pop("sample_spec", None)
    return table


def lookup(model: str) -> tuple[str, dict[str, Any]]:
    """The table entry for ``model``: exact name, then without a provider prefix, then dated variants."""
    table = model_table()
    candidates = [model, model.split("/", 1)[-1]]
    for c in candidates:
        if c in table:
            return c, table[c]
    for c in candidates:
        dated = sorted(k for k in table if k.startswith(c + "-") or k.endswith("/" + c))
        if dated:
            return dated[0], table[dated[0]]
    raise UsageError(f"model {model!r} is not in litellm's model table; give --context-window and --max-output")


def limits_for(model: str) -> ModelLimits:
    """Window, output limit and (where the table has a distinct one) input limit of ``model``."""
    _, entry = lookup(model)
    max_input = entry.get("max_input_tokens")
    max_output = entry.get("max_output_tokens") or entry.get("max_tokens") or 4096
    window = max_input + max_output if max_input and entry.get("mode") == "responses" else (
        max_input or entry.get("max_tokens") or 0)
    if not window:
        raise UsageError(f"model {model!r} has no context window in litellm's table; give --context-window")
    distinct_input = int(max_input) if max_input and entry.get("mode") == "responses" else None
    return ModelLimits(context_window=int(window), max_output=int(max_output), max_input=distinct_input)


@dataclass(frozen=True, slots=True)
class Prices:
    """Dollars per token."""

    input: float
    output: float
    cache_read: float
    cache_write: float


def prices_for(model: str) -> Prices:
    """The table's prices of ``model``; nothing for a local model (``compbench.measure.pricing.LOCAL``)."""
    if model == "local":
        return Prices(0.0, 0.0, 0.0, 0.0)
    _, e = lookup(model)
    inp = float(e.get("input_cost_per_token") or 0.0)
    return Prices(
        input=inp,
        output=float(e.get("output_cost_per_token") or 0.0),
        cache_read=float(e.get("cache_read_input_token_cost") or inp),
        cache_write=float(e.get("cache_creation_input_token_cost") or inp),
    )


def prices_with_cache(p: Prices, cache: CacheModel) -> Prices:
    """The table's prices with cache writes at the provider's premium (Anthropic: 1.25x input for the
    5-minute cache, 2x for the 1-hour one; OpenAI and Gemini: no premium)."""
    return Prices(p.input, p.output, p.cache_read, p.input * cache.write_premium)


# --- the window a tool actually ran a transcript with ----------------------------------------------------

CLAUDE_CODE_WINDOW = 200_000  # Claude Code's window for every model unless the 1M window is on (its default)
CLAUDE_1M_WINDOW = 1_000_000  # the 1M-context window: a "[1m]" model suffix (claude-opus-4-6[1m], sonnet[1m])
ONE_M_SUFFIX = "[1m]"
# openai/codex protocol/src/openai_models.rs at 8db07003: ModelInfo's effective_context_window_percent defaults to 95
# (model_context_window = context_window * 95 / 100) and auto_compact_token_limit to context_window * 9 / 10; the
# server's /models entries take precedence over the bundled ones (ModelPreset::merge).
CODEX_EFFECTIVE_PERCENT = 95
CODEX_GPT5_WINDOW = 272_000  # Codex's catalogue: context_window of the GPT-5 family
# Codex's bundled catalogue (models.json in each npm package's binary, read for 0.142.5, 0.144.1, 0.144.2, 0.145.0,
# 0.147.0, 0.153.4) lists every gpt-5.x model at 272,000 and an unknown model falls back to the same, except the
# 0.144 bundles: gpt-5.6-sol/terra/luna at 372,000. The catalogue in force is the server's (/models, cached) when
# Codex could fetch it: 0.144.2 sessions on gpt-5.6-sol recorded 258,400 (272,000), and a 0.144.0-alpha.4 session
# 353,400 (372,000), then 258,400 once resumed. So a recorded window always wins; this table serves a log without.
CODEX_BUNDLED: tuple[tuple[tuple[int, int], tuple[int, int], str, int], ...] = (
    ((0, 144), (0, 145), "gpt-5.6-", 372_000),  # (from version, before version, model prefix, context_window)
)
# Unknown models, by family: (name prefix, window, max output, what the figure is). Never a table entry the
# tool does not use; each figure is the family's standard window at its provider.
FAMILY_DEFAULTS: tuple[tuple[str, int, int, str], ...] = (
    ("claude", 200_000, 32_000, "Anthropic's standard 200k"),
    ("gpt-5", 272_000, 128_000, "the GPT-5 family's 272k input"),
    ("o3", 200_000, 100_000, "OpenAI o-series 200k"),
    ("o4", 200_000, 100_000, "OpenAI o-series 200k"),
    ("gpt-4.1", 1_047_576, 32_768, "GPT-4.1's 1,047,576"),
    ("gpt-4o", 128_000, 16_384, "GPT-4o's 128k"),
    ("gemini", 1_048_576, 65_536, "Gemini's 1,048,576"),
)
GENERIC_WINDOW = (128_000, 8_192)  # neither the model nor its family is known
# Gemini CLI compares against its own tokenLimit(model) (packages/core/src/core/tokenLimits.ts @ 5411f11 and
# v0.17.0): 1,048,576 unless listed here; litellm's table is not what it uses.
GEMINI_CLI_LIMITS = (("gemini-1.5-pro", 2_097_152), ("gemini-2.0-flash-preview-image-generation", 32_000),
                     ("gemma-4-", 256_000))
GEMINI_CLI_DEFAULT = 1_048_576
# Roo Code takes a model's window from its own table (packages/types/src/providers/openai.ts at RooCodeInc/Roo-Code
# cb83656718, 3.52.1), not litellm's: the OpenAI models whose figure differs (litellm lists the GPT-5 family at
# 272,000 input) as (model, contextWindow, maxTokens). Roo then condenses at 0.9 x window - maxTokens.
ROO_OPENAI_MODELS: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-codex", "gpt-5-chat-latest", "gpt-5.1",
                     "gpt-5.1-codex", "gpt-5.1-codex-mini", "gpt-5.1-codex-max", "gpt-5.2", "gpt-5.2-codex",
                     "gpt-5.3-codex", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5-2025-08-07", "gpt-5-mini-2025-08-07",
                     "gpt-5-nano-2025-08-07"), (400_000, 128_000)),
    "gpt-5.4": (1_050_000, 128_000), "gpt-5.2-chat-latest": (128_000, 16_384), "gpt-5.3-chat-latest": (128_000, 16_384),
}
ROO_TABLE = "Roo Code's own model table (packages/types/src/providers/openai.ts @ cb83656718)"
# OpenCode reads a model's limits from models.dev (api.json, fetched at run time) per provider: GitHub Copilot serves
# Claude models with smaller limits than Anthropic, and gave them a separate input limit from 2026-03-19 (models.dev
# providers/github-copilot/models/*.toml, history read at anomalyco/models.dev f3fc69229). Per model, from each
# date: (context, input (0: none), output). OpenCode then compacts at input - min(20,000, output) when an input
# limit is set (session/overflow.ts), else at context - min(output, 32,000).
# Crush reads a model's window from catwalk (charmbracelet/catwalk, fetched from catwalk.charm.sh at run time),
# whose GitHub Copilot entries give Claude models windows litellm's github_copilot table does not (128,000): the
# context_window of internal/providers/configs/copilot.json from each date it changed (history read at catwalk
# 64dad50, v0.52.6). Crush compacts at a fraction of that window, so a Copilot session's window is catwalk's.
CRUSH_COPILOT: dict[str, tuple[tuple[str, int], ...]] = {
    "claude-haiku-4.5": (("2025-12-17", 144_000), ("2026-01-30", 200_000)),
    "claude-sonnet-4.5": (("2025-12-17", 144_000), ("2026-01-30", 200_000)),
    "claude-opus-4.5": (("2026-01-05", 144_000), ("2026-01-15", 160_000), ("2026-01-30", 200_000)),
    "claude-sonnet-4": (("2025-12-17", 216_000),),
    "claude-opus-4.6": (("2026-02-10", 200_000),),
    "claude-sonnet-4.6": (("2026-02-19", 200_000), ("2026-06-06", 264_000)),
    "claude-opus-4.7": (("2026-04-16", 200_000), ("2026-06-06", 264_000)),
    "claude-opus-4.8": (("2026-05-28", 200_000), ("2026-06-06", 264_000)),
    "gemini-3.1-pro-preview": (("2026-02-19", 128_000), ("2026-06-06", 264_000)),
    "gemini-3.5-flash": (("2026-05-19", 200_000), ("2026-06-06", 264_000)),
    "gpt-5-mini": (("2025-12-17", 264_000),), "gpt-5.1": (("2026-01-05", 264_000),),
    "gpt-5.2": (("2026-01-05", 264_000),),
}
CRUSH_TABLE = "catwalk's copilot.json (charmbracelet/catwalk, history at 64dad50)"
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
class EffectiveLimits:
    """The limits a tool really ran a transcript with, and a sentence saying where they come from (the
    recorded model, the tool's default for it, evidence in the transcript, or a family fallback)."""

    limits: ModelLimits
    source: str


def _family(model: str) -> tuple[ModelLimits, str] | None:
    name = model.lower().split("/")[-1]
    for prefix, window, out, what in FAMILY_DEFAULTS:
        if name.startswith(prefix):
            return ModelLimits(window, out), f"{prefix} family default: {what}"
    return None


def _table(model: str) -> ModelLimits | None:
    try:
        return limits_for(model) if model else None
    except UsageError:  # not in the table, or litellm (the table's carrier) not installed
        return None


def _fallback(model: str) -> tuple[ModelLimits, str]:
    fam = _family(model)
    if fam is not None:
        return fam[0], f"unknown model {model!r}, {fam[1]}"
    window, out = GENERIC_WINDOW
    return ModelLimits(window, out), f"unknown model {model or '(none recorded)'!r} and family: {window:,} assumed"


def _models(t: Transcript) -> list[str]:
    """Every model name the transcript records: its own, then each message's."""
    names = [str(t.meta.get("model") or "")]
    names += [str(m.meta["model"]) for m in t.messages if isinstance(m.meta.get("model"), str)]
    return [n for n in dict.fromkeys(names) if n and n != "<synthetic>"]


def _k(n: int) -> str:
    return f"{n / 1_000_000:g}M" if n >= 1_000_000 else f"{n / 1000:,.0f}k"


def _claude_code(t: Transcript, peak: int) -> EffectiveLimits:
    """Claude Code runs every model at 200k unless the 1M window is on: a "[1m]" suffix says so, and so
    does a recorded input larger than 200k. litellm lists Opus 4.6/4.7 and Sonnet 4.6 at 1M: not used."""
    names = _models(t)
    suffixed = next((n for n in names if n.lower().endswith(ONE_M_SUFFIX)), "")
    model = (suffixed or (names[0] if names else ""))
    base = model[: -len(ONE_M_SUFFIX)] if suffixed else model
    table = _table(base)
    out = table.max_output if table else (_family(base) or _fallback(base))[0].max_output
    if suffixed:
        return EffectiveLimits(ModelLimits(CLAUDE_1M_WINDOW, out), f"{suffixed}: [1m] suffix, the 1M window")
    if peak > CLAUDE_CODE_WINDOW:
        return EffectiveLimits(ModelLimits(CLAUDE_1M_WINDOW, out), f"recorded model {base or 'unknown'}; input "
                               f"{_k(peak)} > 200k: 1M window inferred")
    note = f", not litellm's {_k(table.context_window)}" if table and table.context_window != CLAUDE_CODE_WINDOW else ""
    what = f"recorded model {base}" if base else "no model recorded"
    return EffectiveLimits(ModelLimits(CLAUDE_CODE_WINDOW, out), f"{what}, Claude Code default 200k{note}")


def _codex_recorded(t: Transcript) -> tuple[int, str] | None:
    """The ``model_context_window`` Codex recorded where it compacted by itself (one window there), else the last
    it recorded: the server may change the catalogue mid-session."""
    at = {w for c in t.compactions if c.trigger != "manual" and isinstance(w := c.meta.get("model_context_window"),
                                                                             int) and not isinstance(w, bool) and w > 0}
    if len(at) == 1:
        (w,) = at
        seen = t.meta.get("model_context_windows")
        return w, " in force at its compactions" if isinstance(seen, list) and len(seen) > 1 else ""
    seen = t.meta.get("model_context_windows")
    last = seen[-1] if isinstance(seen, list) and seen else t.meta.get("model_context_window")
    if isinstance(last, int) and not isinstance(last, bool) and last > 0:
        return last, " last recorded" if at or (isinstance(seen, list) and len(seen) > 1) else ""
    return None


def _codex(t: Transcript, peak: int) -> EffectiveLimits:
    """Codex records the window it uses (``model_context_window``, 95% of the catalogue's ``context_window`` for
    every model, the default percent) in every token count; its catalogue is the server's, so the log wins.
    Without a recorded window, the bundled catalogue of the log's version (:data:`CODEX_BUNDLED`)."""
    model = str(t.meta.get("model") or "")
    table = _table(model)
    out = table.max_output if table else (_family(model) or _fallback(model))[0].max_output
    recorded = _codex_recorded(t)
    if recorded is not None:
        value, where = recorded
        window = -(-value * 100 // CODEX_EFFECTIVE_PERCENT)
        return EffectiveLimits(ModelLimits(window, out), f"recorded model_context_window {value:,}{where} = "
                               f"{CODEX_EFFECTIVE_PERCENT}% of {window:,}")
    name = model.lower().split("/")[-1]
    if name.startswith(("gpt-5", "codex")):
        try:
            version = tuple(int(x) for x in str(t.meta.get("tool_version") or "").split(".")[:2])
        except ValueError:
            version = ()
        window = next((w for lo, hi, prefix, w in CODEX_BUNDLED if lo <= version < hi and name.startswith(prefix)),
                      CODEX_GPT5_WINDOW)
        return EffectiveLimits(ModelLimits(window, out), f"recorded model {model}, Codex's catalog {_k(window)}")
    return _generic(t, peak, model)


def _generic(t: Transcript, peak: int, model: str | None = None) -> EffectiveLimits:
    model = str(t.meta.get("model") or "") if model is None else model
    table = _table(model)
    recorded = t.meta.get("context_window")  # a tool that records the window it ran with (Goose's context_limit)
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        out = table.max_output if table else _fallback(model)[0].max_output
        return EffectiveLimits(ModelLimits(recorded, out), f"recorded context window {recorded:,} ({t.source})")
    if table is not None:
        limits, source = table, f"recorded model {model}, litellm's table ({t.source}'s own registry not read)"
    else:
        limits, source = _fallback(model)
    recorded = t.meta.get("max_input_tokens")  # the tool's own configuration says what it sent at most (OpenHands)
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        limits = ModelLimits(max(limits.context_window, recorded), limits.max_output, recorded)
        source = f"recorded max_input_tokens {recorded:,} (the tool's LLM configuration); " + source
    if peak > limits.input_limit:
        source += f"; recorded input {_k(peak)} exceeds it"
    return EffectiveLimits(limits, source)


def _gemini_cli(t: Transcript) -> EffectiveLimits:
    """Gemini CLI's ``tokenLimit(model)``: the window its compression threshold is a fraction of."""
    model = str(t.meta.get("model") or "")
    name = model.lower().split("/")[-1]
    window = next((w for prefix, w in GEMINI_CLI_LIMITS if name == prefix or (prefix.endswith("-")
                                                                            and name.startswith(prefix))),
                  GEMINI_CLI_DEFAULT)
    out = (_table(model) or (_family(model) or _fallback(model))[0]).max_output
    what = f"recorded model {model}" if model else "no model recorded"
    return EffectiveLimits(ModelLimits(window, out), f"{what}, Gemini CLI's tokenLimit {window:,}")


def _roo_code(t: Transcript, peak: int) -> EffectiveLimits:
    """Roo Code's own table where it lists the model; else as any tool."""
    model = str(t.meta.get("model") or "")
    found = ROO_OPENAI_MODELS.get(model.lower().split("/")[-1])
    if found is None:
        return _generic(t, peak)
    table = _table(model)
    note = f", not litellm's {_k(table.context_window)}" if table and table.context_window != found[0] else ""
    return EffectiveLimits(ModelLimits(found[0], found[1]),
                           f"recorded model {model}, {ROO_TABLE}: {_k(found[0])}{note}")


def _session_date(t: Transcript) -> str:
    """The session's first recorded date (YYYY-MM-DD), "" when it records none: its start (``started_at``), else
    its first message's time (epoch seconds or milliseconds, or an ISO ``timestamp``)."""
    import datetime
    import re

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


def _opencode(t: Transcript, peak: int) -> EffectiveLimits:
    """OpenCode on GitHub Copilot runs Copilot's limits for the model on the session's date (models.dev), not
    Anthropic's; any other provider as the table says."""
    provider = next((str(m.meta["provider"]) for m in t.messages if isinstance(m.meta.get("provider"), str)), "")
    model = str(t.meta.get("model") or "").lower().split("/")[-1]
    rows = OPENCODE_COPILOT.get(model) if provider == "github-copilot" else None
    if not rows:
        return _generic(t, peak)
    day = _session_date(t)
    date, context, input_, output = next((r for r in reversed(rows) if day and r[0] <= day), rows[-1] if not day
                                         else rows[0])
    limit = f"input {input_:,}, " if input_ else ""
    return EffectiveLimits(ModelLimits(context, output, input_ or None),
                           f"recorded model {model} on github-copilot, models.dev's limits from {date} (context "
                           f"{context:,}, {limit}output {output:,}){'' if day else ': no date recorded, the latest'}")


def _crush(t: Transcript, peak: int) -> EffectiveLimits:
    """Crush on GitHub Copilot runs catwalk's window for the model on the session's date (:data:`CRUSH_COPILOT`),
    not litellm's Copilot figure; any other provider as the table says."""
    model = str(t.meta.get("model") or "").lower().split("/")[-1]
    rows = CRUSH_COPILOT.get(model) if str(t.meta.get("provider") or "") == "copilot" else None
    if not rows:
        return _generic(t, peak)
    day = _session_date(t)
    date, window = next((r for r in reversed(rows) if day and r[0] <= day), rows[-1] if not day else rows[0])
    table = _table(model)
    out = table.max_output if table else _fallback(model)[0].max_output
    return EffectiveLimits(ModelLimits(window, out), f"recorded model {model} on copilot, {CRUSH_TABLE} from {date}: "
                           f"{_k(window)}{'' if day else ' (no date recorded, the latest)'}")


def effective_limits(t: Transcript) -> EffectiveLimits:
    """The window ``t``'s tool used: the recorded model, the tool's default for it and the evidence in the
    transcript (a [1m] suffix, a recorded effective window, an input larger than the default window);
    an unknown model falls back by family, saying so. Offline: litellm's bundled table, read as JSON."""
    peak = max((m.usage.input for m in t.messages if m.usage is not None), default=0)
    if t.source == "claude-code":
        return _claude_code(t, peak)
    if t.source == "codex":
        return _codex(t, peak)
    if t.source == "gemini-cli":
        return _gemini_cli(t)
    if t.source == "roo-code":
        return _roo_code(t, peak)
    if t.source == "opencode":
        return _opencode(t, peak)
    if t.source == "crush":
        return _crush(t, peak)
    return _generic(t, peak)
