"""``compbench.measure.models`` — Model windows and prices from litellm's bundled model table, read as JSON without
importing litellm.

``import litellm`` costs about two seconds and would fetch a remote price map; the table ships inside
the package as ``model_prices_and_context_window_backup.json`` and is all compbench needs.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
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
# The models Claude Code's own catalogue runs at a native 1M window without a suffix ("native_1m": the 2.1.217 and
# 2.1.332 packages; the same list as compbench.strategies.claude_code_window.NATIVE_1M), from 2.1.117 (its changelog:
# "Opus 4.7 sessions ... computing against a 200K context window instead of Opus 4.7's native 1M")
CLAUDE_NATIVE_1M = re.compile(r"(^|[/.])claude-(opus-4-[78]|opus-5|sonnet-5|fable-5|mythos-5|haiku-5)(\b|-|$)")
CLAUDE_NATIVE_1M_FROM = (2, 1, 117)
CODEX_EFFECTIVE_PERCENT = 95  # Codex records model_context_window = context_window * 95 / 100 (model_family.rs)
CODEX_GPT5_WINDOW = 272_000  # Codex's catalog (codex-rs/core/models.json): context_window of the GPT-5 family
# The models Codex's catalog lists at 272,000 with the default 95% effective window (the 0.140 / 0.142 rollouts of
# gpt-5.5 record 258,400 and compact at 0.9 x 272,000 = 244,800, matched to the step). A model outside it (Codex
# 0.145-0.146's gpt-5.6-sol records 258,400 and compacted at 224-236k, 0.9 x 258,400 = 232,560: issue 32's
# held-out rollouts) has its recorded window taken as its window: the log says what the tool used.
CODEX_95_MODELS = re.compile(r"^(gpt-5(\.[1-5])?(-codex(-max|-mini)?|-mini|-nano|-chat-latest)?|codex-mini-latest)"
                             r"(-\d{4}-\d{2}-\d{2})?$")
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
    """Claude Code runs a model at 200k unless the 1M window is on: a "[1m]" suffix says so, a model its catalogue
    runs at a native 1M (2.1.117 on), and a recorded input larger than 200k. litellm lists Opus 4.6 and Sonnet 4.6
    at 1M: not used (Claude Code needs the suffix for them)."""
    names = _models(t)
    suffixed = next((n for n in names if n.lower().endswith(ONE_M_SUFFIX)), "")
    model = (suffixed or (names[0] if names else ""))
    base = model[: -len(ONE_M_SUFFIX)] if suffixed else model
    table = _table(base)
    out = table.max_output if table else (_family(base) or _fallback(base))[0].max_output
    if suffixed:
        return EffectiveLimits(ModelLimits(CLAUDE_1M_WINDOW, out), f"{suffixed}: [1m] suffix, the 1M window")
    v = re.match(r"(\d+)\.(\d+)\.(\d+)", str(t.meta.get("tool_version") or "").strip())
    if CLAUDE_NATIVE_1M.search(base.lower()) and (v is None or tuple(map(int, v.groups())) >= CLAUDE_NATIVE_1M_FROM):
        return EffectiveLimits(ModelLimits(CLAUDE_1M_WINDOW, out), f"recorded model {base}: Claude Code's catalogue "
                               "runs it at its native 1M window (2.1.117 on)")
    if peak > CLAUDE_CODE_WINDOW:
        return EffectiveLimits(ModelLimits(CLAUDE_1M_WINDOW, out), f"recorded model {base or 'unknown'}; input "
                               f"{_k(peak)} > 200k: 1M window inferred")
    note = f", not litellm's {_k(table.context_window)}" if table and table.context_window != CLAUDE_CODE_WINDOW else ""
    what = f"recorded model {base}" if base else "no model recorded"
    return EffectiveLimits(ModelLimits(CLAUDE_CODE_WINDOW, out), f"{what}, Claude Code default 200k{note}")


def _codex(t: Transcript, peak: int) -> EffectiveLimits:
    """Codex records the window it uses (``model_context_window``) in every token count: for a model its
    catalog lists at 272,000 it is 95% of the model's window, read back from it; for any other model the
    recorded window is the window. Without it, Codex's catalog value for the family."""
    model = str(t.meta.get("model") or "")
    table = _table(model)
    out = table.max_output if table else (_family(model) or _fallback(model))[0].max_output
    recorded = t.meta.get("model_context_window")
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        if not CODEX_95_MODELS.match(model.lower().split("/")[-1]):
            return EffectiveLimits(ModelLimits(recorded, out), f"recorded model_context_window {recorded:,} "
                                   f"({model or 'no model recorded'}: not a model Codex's catalog lists at 95% of "
                                   f"{CODEX_GPT5_WINDOW:,}): the window")
        window = -(-recorded * 100 // CODEX_EFFECTIVE_PERCENT)
        return EffectiveLimits(ModelLimits(window, out), f"recorded model_context_window {recorded:,} = "
                               f"{CODEX_EFFECTIVE_PERCENT}% of {window:,}")
    if model.lower().startswith(("gpt-5", "codex")):
        return EffectiveLimits(ModelLimits(CODEX_GPT5_WINDOW, out), f"recorded model {model}, Codex's "
                               f"catalog {_k(CODEX_GPT5_WINDOW)}")
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
