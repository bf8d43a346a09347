"""``compbench.measure.pricing`` — What a session is priced at: the model that recorded it, unless the run names one.

A Codex session ran on GPT, a mini-swe-agent session on Gemini: pricing every session at one model (the
former default, Claude Sonnet 4.5) misstates what each cost and what a strategy saves in dollars. Each
transcript is priced at its recorded model (:func:`compbench.measure.token_correction.recorded_model`), found in
litellm's bundled table under its own name or another provider's for the same model
(``vertex_ai/gemini-3-pro-preview`` for a recorded ``google/gemini-3-pro-preview``, Bedrock's
``anthropic.claude-opus-4-1-20250805-v1:0`` for ``claude-opus-4.1``: Anthropic's names written with dots, a date
or a region are the same model); ``--price-model`` (or ``--model``) prices every transcript at one model.

* A **local model** (a local provider recorded beside it — Ollama, LM Studio, llama.cpp, MLX —, an Ollama size
  tag such as ``qwen3:4b``, an ``mlx-community/`` or GGUF name, or an open-weights family litellm does not
  price) costs $0 (:data:`LOCAL`), and its ``price_model_source`` says so.
* A **Gemini CLI** session that records no model (its ``/chat share`` exports do not) ran Gemini CLI's default,
  ``gemini-2.5-pro`` (``DEFAULT_GEMINI_MODEL`` in ``packages/core/src/config/models.ts``, the same from v0.2.0
  to v0.56.0).
* A model the table does not price is priced at the default, and **flagged** (the source starts with
  :data:`UNPRICED`; the run's summary names them): never silently.

A summary request is priced at the model that makes it (:func:`summarizer_models`): aider's weak model, Goose's
fast model, else the session's own; ``--summarizer-model`` names one for all of them.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from compbench.data.transcript import Transcript

DEFAULT_PRICE_MODEL = "claude-sonnet-4-5"
LOCAL = "local"  # the price model of a model that runs on the user's machine: $0
UNPRICED = "UNPRICED"  # the source of a recorded model the table does not price (priced at the default)
GEMINI_CLI_DEFAULT = "gemini-2.5-pro"  # DEFAULT_GEMINI_MODEL, v0.2.0-v0.56.0
# litellm's keys for a bare model name, by the provider's own prefix first (a reseller's entry may lack prices)
PROVIDER_PREFIXES = ("", "anthropic/", "openai/", "gemini/", "vertex_ai/")
LOCAL_PROVIDERS = frozenset({"ollama", "ollama_chat", "lmstudio", "lm_studio", "lm-studio", "llamacpp", "llama.cpp",
                             "llama-cpp", "mlx", "mlx-lm", "local", "localai", "jan"})
_OLLAMA_TAG = re.compile(r":(latest|e?\d+(\.\d+)?[bmk](\b|[-_])|\d+x\d+b)", re.I)  # qwen3:4b, gpt-oss:20b, gemma3n:e4b
_LOCAL_NAME = re.compile(r"(^|/)(mlx-community|lmstudio-community)/|\.gguf$|(^|/)(ollama|ollama_chat|lm_studio)/", re.I)
# Open-weights families: a name of one that litellm does not price was run by the user (a heuristic)
_OPEN_WEIGHTS = re.compile(r"(^|/)(qwen|gemma|llama|gpt-oss|mistral|mixtral|phi-?\d|deepseek-r1|smollm|granite|"
                           r"olmo|codellama|starcoder|nemotron)", re.I)
_REGION = re.compile(r"^(us|eu|apac|global|au|jp|ca)\.")
_DATE = re.compile(r"-(20\d{6}|\d{4}-\d{2}-\d{2})$")


def _priced(entry: dict[str, Any]) -> bool:
    return bool(entry.get("input_cost_per_token"))


def _bare(key: str) -> str:
    """A table key as the model's own name: no provider prefix, region, ``anthropic.`` namespace, Bedrock
    version suffix or Vertex ``@`` tag."""
    name = _REGION.sub("", key.split("/")[-1])
    name = name.removeprefix("anthropic.")
    name = re.sub(r"-v\d+(:\d+)?$", "", name).split("@")[0]
    return name.lower()


def _names(model: str) -> list[str]:
    """The names ``model`` may be listed under: as written, Anthropic's dots as dashes, without its date."""
    bare = _bare(model)
    out = [bare.replace(".", "-"), bare] if bare.startswith("claude") else [bare]
    out += [_DATE.sub("", n) for n in out]
    return list(dict.fromkeys(out))


@cache
def price_entry(model: str) -> str | None:
    """The litellm key whose prices apply to ``model`` (None: the table prices no such model): the name as
    given, then without its provider prefix under each provider's prefix, then their dated variants, then any
    provider's entry for the same model (its own name once prefixes, regions and versions are set aside) — only
    entries with prices. Memoized: a dataset's transcripts share a few models, and an unknown one costs a scan
    of the table."""
    from compbench.errors import UsageError
    from compbench.measure.models import model_table

    try:
        table = model_table()
    except UsageError:
        return None
    names = [model]
    for bare in dict.fromkeys((model.split("/")[-1], *_names(model))):  # as written, then Anthropic's dashes
        names += [p + bare for p in PROVIDER_PREFIXES]
    for name in dict.fromkeys(names):
        if name in table and _priced(table[name]):
            return name
    for name in dict.fromkeys(names):
        dated = sorted(k for k in table if k.startswith(name + "-") and _priced(table[k]))
        if dated:
            return dated[0]
    wanted = _names(model)
    for want in wanted:  # the same model under another provider: the native-looking key first, then by name
        same = sorted((k.count("/"), k.count("."), k) for k in table if _priced(table[k])
                      and (_bare(k) == want or _DATE.sub("", _bare(k)) == want))
        if same:
            return same[0][2]
    return None


def local_model(t: Transcript, model: str) -> str:
    """Why ``model`` ran on the user's machine ('' when nothing says so): a local provider recorded beside it,
    a local model's name, or an open-weights family the table does not price."""
    providers = {str(v).lower() for v in (t.meta.get("provider"), *(m.meta.get("provider") for m in t.messages[:50]))
                 if isinstance(v, str)}
    local = sorted(providers & LOCAL_PROVIDERS)
    if local:
        return f"provider {local[0]}"
    if _LOCAL_NAME.search(model) or _OLLAMA_TAG.search(model):
        return "a local model's name"
    if _OPEN_WEIGHTS.search(model) and price_entry(model) is None:
        return "an open-weights model litellm does not price (a heuristic)"
    return ""


def price_model_for(t: Transcript, given: str | None) -> tuple[str, str]:
    """The model ``t`` is priced at and why: ``given`` (the run's ``--price-model`` / ``--model``) for every
    transcript, else its recorded model (:data:`LOCAL` for a local one), else the tool's default (Gemini CLI),
    else the default (saying which and why; a model the table does not price is flagged :data:`UNPRICED`)."""
    from compbench.measure.token_correction import recorded_model

    if given:
        return given, f"{given}: --price-model (every transcript)"
    model = recorded_model(t)
    base = model[:-4] if model.lower().endswith("[1m]") else model
    if not base and t.source == "gemini-cli":
        return GEMINI_CLI_DEFAULT, (f"no recorded model: Gemini CLI's default {GEMINI_CLI_DEFAULT} "
                                    "(DEFAULT_GEMINI_MODEL, v0.2.0-v0.56.0)")
    if not base:
        return DEFAULT_PRICE_MODEL, f"no recorded model: the default {DEFAULT_PRICE_MODEL}"
    why = local_model(t, base)
    if why:
        return LOCAL, f"recorded model {model}: a local model ({why}), $0"
    key = price_entry(base)
    if key is None:
        return DEFAULT_PRICE_MODEL, (f"{UNPRICED}: recorded model {model} not priced in litellm's table: the default "
                                     f"{DEFAULT_PRICE_MODEL}")
    return key, f"recorded model {model}" + (f" (litellm's {key})" if key != base else "")


# The summarizer models of the tools whose summaries another model writes, by the session's main model or
# provider: aider's weak model (aider/resources/model-settings.yml at 5dc9490bb35f, for the families listed; else
# the main model, aider's own fallback); Goose's fast model (providers/anthropic.rs ANTHROPIC_DEFAULT_FAST_MODEL,
# openai.rs, google.rs; else the main model)
AIDER_WEAK = (("claude-opus-4", "claude-3-5-haiku-20241022"), ("claude-sonnet-4", "claude-3-5-haiku-20241022"),
              ("claude-3-7-sonnet", "claude-3-5-haiku-20241022"), ("claude-3-5-sonnet", "claude-3-5-haiku-20241022"),
              ("gpt-4.1", "gpt-4.1-mini"), ("gpt-4o", "gpt-4o-mini"), ("gpt-5", "gpt-5-nano"), ("o3", "gpt-4.1-mini"),
              ("gemini-2.5-pro", "gemini-2.5-flash"), ("deepseek", "deepseek-chat"))
GOOSE_FAST = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4o-mini", "google": "gemini-2.5-flash"}


def summarizer_models(t: Transcript, main: str, given: str | None = None) -> dict[str, tuple[str, str]]:
    """Per summary request's ``model`` role ("" the session's own model, "weak", "fast"): the price model of the
    model that makes it, and why. ``given`` (``--summarizer-model``) names one for every role."""
    if given:
        return dict.fromkeys(("", "weak", "fast"), (given, f"{given}: --summarizer-model"))
    out = {"": (main, "the session's model")}
    if t.source == "aider":
        recorded = str(t.meta.get("weak_model") or "")
        base = recorded.split("/")[-1]
        weak = recorded or next((w for prefix, w in AIDER_WEAK if base.startswith(prefix)), "")
        if not weak:
            name = str(t.meta.get("model") or "").split("/")[-1].lower()
            weak = next((w for prefix, w in AIDER_WEAK if name.startswith(prefix)), "")
        key = price_entry(weak) if weak else None
        out["weak"] = ((key, f"aider's weak model {weak}" + (" (recorded)" if recorded else " (its model settings)"))
                       if key else (main, "aider's weak model unknown: the main model (aider's fallback)"))
    if t.source == "goose":
        fast = str(t.meta.get("fast_model") or "") or GOOSE_FAST.get(str(t.meta.get("provider") or ""), "")
        key = price_entry(fast) if fast else None
        out["fast"] = ((key, f"Goose's fast model {fast}") if key
                       else (main, "Goose's fast model unknown: the main model"))
    return out
