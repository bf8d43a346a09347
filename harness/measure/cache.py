"""``compbench.measure.cache`` — The prompt cache a provider runs, as the replay models it: what a call reads, what it
writes, what expires.

Per provider (the price model's family), from the providers' documentation (November 2026):

- **Anthropic** (prompt caching): a cache write costs 1.25× the input price for the 5-minute cache and 2×
  for the 1-hour one; a read 0.1×; an entry lives 5 minutes (or 1 hour) after its last use; prefixes
  shorter than 1,024 tokens (2,048 on Haiku models) are not cached.
- **OpenAI** (automatic prompt caching): no write premium; reads at the model's cached-input price;
  prompts of 1,024 tokens or more, hits "in increments of 128 tokens"; entries live 5–10 minutes after
  their last use (up to an hour off peak): 10 minutes is modelled.
- **Gemini** (implicit caching): no write premium; reads at the cached price; 1,024 tokens minimum (Flash;
  Pro models need more: 4,096 is modelled for them); the lifetime is not documented: no expiry modelled.
  How much of a prefix is read is not documented either: recorded Gemini 3 Pro usage (mini-swe-agent
  sessions) reads about 4,000, 8,000, 12,000 ... tokens while the prefix grows, so reads are modelled
  in whole multiples of the minimum (inferred from four sessions of one agent; a heuristic).
- Anything else: reads and writes at the table's prices, no minimum, no expiry.

The lifetime is the one the recording asked for (``--cache-ttl auto``, :func:`ttl_for`): Claude Code 2.1 writes
to Anthropic's 1-hour cache (its usage splits ``cache_creation`` by lifetime; the importer flags such
responses ``cache_ttl: "1h"``), earlier versions and other tools to the 5-minute one. Modelled at 5 minutes,
the 2.1 sessions of ``../shared/real-compactions`` read 93.5% of their prompts from the cache where they
recorded 96.2% (one session 59% vs 96%); at their recorded lifetime, 96.7%.

A call reads the longest prefix unchanged since the previous call (the loop tracks it) unless the cache is
cold: the gap between the two calls' recorded timestamps exceeds the lifetime, or the prefix is shorter
than the minimum. Transcripts that record no timestamps (Codex messages, synthetic sessions) never expire:
the report says the figure assumes a warm cache there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

ANTHROPIC_WRITE_5M = 1.25  # Anthropic prompt caching: 5-minute cache writes at 1.25x input
ANTHROPIC_WRITE_1H = 2.0  # 1-hour cache writes at 2x input
ANTHROPIC_MIN_PREFIX = 1_024  # Opus / Sonnet; Haiku models 2,048
ANTHROPIC_HAIKU_MIN_PREFIX = 2_048
OPENAI_MIN_PREFIX = 1_024  # automatic caching from 1,024 tokens
OPENAI_TTL_S = 600.0  # "5 to 10 minutes of inactivity"
OPENAI_STEP = 128  # "cache hits occur in increments of 128 tokens"
GEMINI_MIN_PREFIX = 1_024  # implicit caching, Flash models
GEMINI_PRO_MIN_PREFIX = 4_096


@dataclass(frozen=True, slots=True)
class CacheModel:
    """How one provider caches prompts: the write premium (× input price), the lifetime of an entry after
    its last use (None: never expires), the shortest prefix it caches."""

    provider: str
    write_premium: float = 1.0
    ttl_s: float | None = None
    min_prefix: int = 0
    granularity: int = 1  # a read is a whole multiple of this many tokens

    def describe(self) -> str:
        ttl = "no expiry" if self.ttl_s is None else f"entries expire {self.ttl_s / 60:g} min after their last use"
        steps = f", read in steps of {self.granularity:,} tokens" if self.granularity > 1 else ""
        return (f"{self.provider}: writes at {self.write_premium:g}x input, {ttl}, "
                f"prefixes under {self.min_prefix:,} tokens not cached{steps}")

    def alive(self, last_use: float | None, now: float | None) -> bool:
        """An entry last used at ``last_use`` still serves a call at ``now`` (unknown times: assumed alive)."""
        return self.ttl_s is None or now is None or last_use is None or now - last_use <= self.ttl_s

    def written(self, prompt: int) -> int:
        """The tokens a request marked for caching writes: all it sends past what it read, none under the
        minimum (a provider caches no shorter prefix)."""
        return prompt if prompt >= max(self.min_prefix, 1) else 0

    def readable(self, prefix: int) -> int:
        """The tokens a call reads from a cached ``prefix``: none under the minimum, else whole steps."""
        if prefix < self.min_prefix or prefix <= 0:
            return 0
        return prefix - prefix % self.granularity


NO_CACHE_MODEL = CacheModel("table prices", 1.0, None, 0)


def cache_model_for(price_model: str, ttl: str = "5m") -> CacheModel:
    """The cache of the provider serving ``price_model``; ``ttl`` chooses Anthropic's 5-minute or 1-hour
    cache ("5m" | "1h"), or "none" for a cache that never expires (the former model, for comparison);
    resolve ``auto`` per transcript first (:func:`ttl_for`)."""
    name = price_model.lower().split("/")[-1]
    if name.startswith(("claude", "anthropic")):
        one_hour = ttl == "1h"
        model = CacheModel("anthropic", ANTHROPIC_WRITE_1H if one_hour else ANTHROPIC_WRITE_5M,
                           3600.0 if one_hour else 300.0,
                           ANTHROPIC_HAIKU_MIN_PREFIX if "haiku" in name else ANTHROPIC_MIN_PREFIX)
    elif name.startswith(("gpt", "o1", "o3", "o4", "codex", "chatgpt")):
        model = CacheModel("openai", 1.0, OPENAI_TTL_S, OPENAI_MIN_PREFIX, OPENAI_STEP)
    elif name.startswith("gemini"):
        minimum = GEMINI_PRO_MIN_PREFIX if "pro" in name else GEMINI_MIN_PREFIX
        model = CacheModel("gemini", 1.0, None, minimum, minimum)
    else:
        model = NO_CACHE_MODEL
    if ttl == "none":
        return CacheModel(model.provider, model.write_premium, None, model.min_prefix, model.granularity)
    return model


TTLS = ("auto", "5m", "1h", "none")  # --cache-ttl: auto is each transcript's recorded lifetime, else 5 minutes


def recorded_ttl(messages: Sequence[Any]) -> str | None:
    """The cache lifetime a recording asked for: "1h" when its responses wrote to Anthropic's 1-hour cache
    (the importer's ``cache_ttl`` on a message: Claude Code 2.1 asks for it), else None (the 5-minute
    default, or a log that does not say)."""
    return "1h" if any(m.meta.get("cache_ttl") == "1h" for m in messages if m.role == "assistant") else None


def ttl_for(messages: Sequence[Any], ttl: str) -> tuple[str, str]:
    """The lifetime a run models for a transcript and why: ``ttl`` when the run sets one, else (``auto``) the
    recorded one, else Anthropic's default 5 minutes."""
    if ttl != "auto":
        return ttl, f"{ttl}: --cache-ttl (every transcript)"
    recorded = recorded_ttl(messages)
    return (recorded, f"{recorded}: recorded") if recorded else ("5m", "5m: the default (none recorded)")


def message_time(meta: Mapping[str, Any]) -> float | None:
    """Seconds since the epoch of a recorded message, from the importers' ``timestamp`` (ISO 8601) or
    ``time`` (epoch milliseconds, OpenCode); None when the log has none."""
    stamp = meta.get("timestamp")
    if isinstance(stamp, str) and stamp:
        try:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    t = meta.get("time")
    if isinstance(t, int | float) and not isinstance(t, bool) and t > 0:
        return float(t) / 1000.0 if t > 1e11 else float(t)
    return None


def none_reads(inputs: Sequence[tuple[int, float | None]], model: CacheModel) -> list[int]:
    """What ``none`` reads from ``model``'s cache at each call, given each call's input tokens and time:
    the whole previous prompt (``none`` only appends) while the entry is warm, as the loop computes it.
    The run's check of the cache model replays it under the recorded provider's cache this way."""
    out: list[int] = []
    prev_input, prev_time = -1, None
    for total, now in inputs:
        out.append(model.readable(prev_input) if prev_input >= 0 and model.alive(prev_time, now) else 0)
        prev_input = total
        if now is not None:
            prev_time = now
    return out
