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
from compbench.measure import windows_tables as tables
from compbench.measure.cache import CacheModel
from compbench.measure.windows_tables import (
    CRUSH_LOCAL,
    GEMINI_CLI_DEFAULT,
    GEMINI_CLI_LIMITS,
    LITELLM_TOOLS,
    OPENCODE_COPILOT,
    PI_CUSTOM,
    ROO_DEFAULT_MAX_TOKENS,
    ROO_RUNTIME,
    session_date,
)
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

@dataclass(frozen=True, slots=True)
class EffectiveLimits:
    """The limits a tool really ran a transcript with, and a sentence saying where they come from (the
    recorded model, the tool's default for it, evidence in the transcript, or a family fallback).

    ``known`` is False where the tool's own rule yields no window from what the log holds (a model outside its
    table, a local model whose window is the user's configuration, a general table standing in for one the tool
    does not use, a family or generic fallback): the figure is a guess, and a run calibrates the trigger from the
    log's own compactions instead of trusting it."""

    limits: ModelLimits
    source: str
    known: bool = True


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
    """A tool whose own table is not read here: the window its log records, else litellm's table (the tool's own
    only for the tools that read it, :data:`LITELLM_TOOLS`), else the family; unknown where it is a stand-in."""
    model = str(t.meta.get("model") or "") if model is None else model
    table = _table(model)
    recorded = t.meta.get("context_window")  # a tool that records the window it ran with (Goose's context_limit)
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        out = table.max_output if table else _fallback(model)[0].max_output
        return EffectiveLimits(ModelLimits(recorded, out), f"recorded context window {recorded:,} ({t.source})")
    reads = LITELLM_TOOLS.get(t.source)
    if table is not None:
        limits, known = table, reads is not None
        why = reads or f"{t.source}'s own registry not read"
        source = f"recorded model {model}, litellm's table ({why})"
    else:
        (limits, source), known = _fallback(model), False
    recorded = t.meta.get("max_input_tokens")  # the tool's own configuration says what it sent at most (OpenHands)
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        limits, known = ModelLimits(max(limits.context_window, recorded), limits.max_output, recorded), True
        source = f"recorded max_input_tokens {recorded:,} (the tool's LLM configuration); " + source
    return _checked(EffectiveLimits(limits, source, known), peak)


def _checked(e: EffectiveLimits, peak: int) -> EffectiveLimits:
    """A recorded input larger than the window says the tool ran a larger one: the figure is not the tool's."""
    if peak <= e.limits.input_limit:
        return e
    return EffectiveLimits(e.limits, f"{e.source}; recorded input {_k(peak)} exceeds it", known=False)


def _guess(model: str, why: str, peak: int, limits: ModelLimits | None = None, what: str = "") -> EffectiveLimits:
    """The tool's rule yields no window from the log (``why``): the family's (or ``limits``), marked unknown."""
    if limits is None:
        limits, what = _fallback(model)
    return _checked(EffectiveLimits(limits, f"{why}; {what}", known=False), peak)


def _listed(found: tables.Listed, tool: str, model: str, peak: int, recorded_provider: bool = True,
            out: int | None = None) -> EffectiveLimits:
    """The window of ``tool``'s own table, saying which table, from which day, and litellm's figure where it
    differs (the tool's wins)."""
    table = _table(model)
    if out is None:
        out = found.max_output or (table or _fallback(model)[0]).max_output
    note = f", not litellm's {_k(table.context_window)}" if table and table.context_window != found.window else ""
    since = f" from {found.since}" if tool in tables.HISTORY else ""
    where = f" on {found.provider}" if recorded_provider else f" (no provider recorded: {found.provider}'s row)"
    others = [] if recorded_provider else tables.elsewhere(tool, found.model, found.provider, found.window)
    extra = "".join(f"; {x}" for x in (found.note, f"other providers list {', '.join(others)}" if others else "")
                    if x)
    return _checked(EffectiveLimits(ModelLimits(found.window, out), f"recorded model {model}{where}, "
                                    f"{tables.TOOL_TABLES[tool]} ({tables.read_at(tool)}){since}: "
                                    f"{_k(found.window)}{note}{extra}"), peak)


def _provider(t: Transcript, model: str) -> str:
    """The provider the log records for ``model``: the transcript's, else the first message's that used it."""
    if isinstance(t.meta.get("provider"), str) and t.meta["provider"]:
        return str(t.meta["provider"])
    return next((str(m.meta["provider"]) for m in t.messages if m.meta.get("model") == model
                 and isinstance(m.meta.get("provider"), str)), "")


def _pi(t: Transcript, peak: int) -> EffectiveLimits:
    """pi compacts at ``model.contextWindow`` (agent-session.ts ``_checkCompaction``): its registry's figure for the
    provider and model the log records, at the session's date. A model the registry does not list is one the user's
    ``~/.pi/agent/models.json`` defines (contextWindow, 128,000 when it gives none): not in the log."""
    model = str(t.meta.get("model") or "")
    provider = _provider(t, model)
    found = tables.listed("pi", model, provider, session_date(t))
    if found is not None:
        return _listed(found, "pi", model, peak, bool(provider))
    why = (f"model {model or '(none recorded)'}{f' on {provider}' if provider else ''} is not in "
           f"{tables.TOOL_TABLES['pi']} ({tables.read_at('pi')}): pi's window for it is its ~/.pi/agent/models.json "
           f"contextWindow, not in the log")
    if _family(model) is not None:
        return _guess(model, why, peak)
    return _guess(model, why, peak, ModelLimits(*PI_CUSTOM), f"pi's default for such a model, {PI_CUSTOM[0]:,}")


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
    """Roo Code (and its fork Kilo Code, each from its own ``packages/types/src/providers``) runs a model at its
    table's contextWindow and reserves from its maxTokens (8,192 where the table gives none). The log records the
    model, not the provider: the first provider listing it (:data:`compbench.measure.windows_tables.PROVIDER_ORDER`)
    is taken and the others' different figures said. A model no table lists is a router's or a local server's,
    whose window the tool reads at run time."""
    tool = "kilo-code" if t.source == "kilo-code" else "roo-code"
    model = str(t.meta.get("model") or "")
    found = tables.listed(tool, model)
    if found is not None:
        return _listed(found, tool, model, peak, recorded_provider=False,
                       out=found.max_output or ROO_DEFAULT_MAX_TOKENS)
    name = "Kilo Code" if tool == "kilo-code" else "Roo Code"
    why = (f"model {model or '(none recorded)'} is not in {tables.TOOL_TABLES[tool]} ({tables.read_at(tool)}): "
           f"{ROO_RUNTIME.format(tool=name)}")
    return _guess(model, why, peak)


def _opencode(t: Transcript, peak: int) -> EffectiveLimits:
    """OpenCode on GitHub Copilot runs Copilot's limits for the model on the session's date (models.dev), not
    Anthropic's; any other provider as the table says."""
    provider = next((str(m.meta["provider"]) for m in t.messages if isinstance(m.meta.get("provider"), str)), "")
    model = str(t.meta.get("model") or "").lower().split("/")[-1]
    rows = OPENCODE_COPILOT.get(model) if provider == "github-copilot" else None
    if not rows:
        return _generic(t, peak)
    day = session_date(t)
    date, context, input_, output = next((r for r in reversed(rows) if day and r[0] <= day), rows[-1] if not day
                                         else rows[0])
    limit = f"input {input_:,}, " if input_ else ""
    return EffectiveLimits(ModelLimits(context, output, input_ or None),
                           f"recorded model {model} on github-copilot, models.dev's limits from {date} (context "
                           f"{context:,}, {limit}output {output:,}){'' if day else ': no date recorded, the latest'}")


def _crush(t: Transcript, peak: int) -> EffectiveLimits:
    """Crush compacts at a share of ``CatwalkCfg.ContextWindow``: catwalk's window for the provider and model the
    log records, at the session's date (Crush fetches catwalk at run time). A model catwalk does not list (a
    local or OpenAI-compatible provider's) has the window of the user's configuration: not in the log
    (:data:`~compbench.measure.windows_tables.CRUSH_LOCAL`)."""
    model = str(t.meta.get("model") or "")
    provider = str(t.meta.get("provider") or "")
    found = tables.listed("catwalk", model, provider, session_date(t))
    if found is not None:
        return _listed(found, "catwalk", model, peak, bool(provider))
    if provider in tables.providers("catwalk"):
        why = f"model {model or '(none recorded)'} is not in catwalk's {provider} list ({tables.read_at('catwalk')})"
    elif provider:
        why = f"provider {provider!r} is not one of catwalk's (a local or OpenAI-compatible server of the user's)"
    else:
        why = f"model {model or '(none recorded)'} is in no catwalk list and no provider is recorded"
    return _guess(model, f"{why}: {CRUSH_LOCAL}", peak)


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
    if t.source in ("roo-code", "kilo-code"):
        return _roo_code(t, peak)
    if t.source == "pi":
        return _pi(t, peak)
    if t.source == "opencode":
        return _opencode(t, peak)
    if t.source == "crush":
        return _crush(t, peak)
    return _generic(t, peak)
