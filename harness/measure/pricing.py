"""``compbench.measure.pricing`` — What a session is priced at: the model that recorded it, unless the run names one.

A Codex session ran on GPT, a mini-swe-agent session on Gemini: pricing every session at one model (the
former default, Claude Sonnet 4.5) misstates what each cost and what a strategy saves in dollars. Each
transcript is priced at its recorded model (:func:`compbench.measure.token_correction.recorded_model`), found in
litellm's bundled table under its own name or its provider's (``vertex_ai/gemini-3-pro-preview`` for a
recorded ``google/gemini-3-pro-preview``); ``--price-model`` (or ``--model``) prices every transcript at one
model. A transcript without a recorded model, or whose model the table does not price, gets the default,
and its ``price_model_source`` says so.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from compbench.data.transcript import Transcript

DEFAULT_PRICE_MODEL = "claude-sonnet-4-5"
# litellm's keys for a bare model name, by the provider's own prefix first (a reseller's entry may lack prices)
PROVIDER_PREFIXES = ("", "anthropic/", "openai/", "gemini/", "vertex_ai/")


def _priced(entry: dict[str, Any]) -> bool:
    return bool(entry.get("input_cost_per_token"))


@cache
def price_entry(model: str) -> str | None:
    """The litellm key whose prices apply to ``model`` (None: the table prices no such model): the name as
    given, then without its provider prefix under each provider's prefix, then their dated variants —
    only entries with prices. Memoized: a dataset's transcripts share a few models, and an unknown one
    costs a scan of the table."""
    from compbench.errors import UsageError
    from compbench.measure.models import model_table

    try:
        table = model_table()
    except UsageError:
        return None
    bare = model.split("/")[-1]
    names = [model, *(p + bare for p in PROVIDER_PREFIXES)]
    for name in dict.fromkeys(names):
        if name in table and _priced(table[name]):
            return name
    for name in dict.fromkeys(names):
        dated = sorted(k for k in table if k.startswith(name + "-") and _priced(table[k]))
        if dated:
            return dated[0]
    return None


def price_model_for(t: Transcript, given: str | None) -> tuple[str, str]:
    """The model ``t`` is priced at and why: ``given`` (the run's ``--price-model`` / ``--model``) for every
    transcript, else its recorded model, else the default (saying which and why)."""
    from compbench.measure.token_correction import recorded_model

    if given:
        return given, f"{given}: --price-model (every transcript)"
    model = recorded_model(t)
    base = model[:-4] if model.lower().endswith("[1m]") else model
    if not base:
        return DEFAULT_PRICE_MODEL, f"no recorded model: the default {DEFAULT_PRICE_MODEL}"
    key = price_entry(base)
    if key is None:
        return DEFAULT_PRICE_MODEL, (f"recorded model {model} not priced in litellm's table: the default "
                                     f"{DEFAULT_PRICE_MODEL}")
    return key, f"recorded model {model}" + (f" (litellm's {key})" if key != base else "")
