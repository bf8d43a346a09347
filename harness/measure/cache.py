"""``compbench.measure.cache`` — The prompt cache a provider runs, as the replay models it: what a call reads, what it
writes, what expires.

Per provider (the price model's family), from the providers' documentation (November 2026):

- **Anthropic** (prompt caching): a cache write costs 1.25× the input price for the 5-minute cache and 2×
  for the 1-hour one; a read 0.1×; an entry lives 5 minutes (or 1 hour) after its last use; prefixes
  shorter than 1,024 tokens (2,048 on Haiku models) are not cached.
- **OpenAI** (automatic prompt caching): no write premium; reads at the model's cached-input price;
  prompts of 1,024 tokens or more, hits "in increments of 128 tokens"; entries live 5–10 minutes after
  their last use (up to an hour off peak): 10 minutes is modelled.
- **Gemini** (implicit caching, ai.google.dev/gemini-api/docs/caching, updated 2026-10-13): no write premium;
  reads at the cached price; "enabled by default for all Gemini 2.5 and newer models", a hit is best-effort
  ("to increase the chance of an implicit cache hit ... send requests with similar prefix in a short amount of
  time"); the minimum prompt is 2,048 tokens on Gemini 2.5 Flash and Pro and 4,096 on Gemini 3 and later (the
  page's May 2026 version said 1,024 / 4,096). The lifetime is not documented: no expiry is modelled. What the
  logs show (issue 41): no Gemini CLI log in ``../shared`` records its cache reads (its one real log is a
  ``/chat share`` markdown export, without usage), so the Gemini figures rest on the four mini-swe-agent sessions
  of ``gemini-3-pro-preview`` (via OpenRouter, November 2025; 145 calls, no timestamps) that record
  ``cached_tokens``: (1) reads come in steps of about 2,048 tokens (2,043, 4,059, 5,971, 8,011, 10,050 ...: odd
  multiples too, so not the 4,096-token steps read off them before), modelled as whole 2,048-token steps;
  (2) the first read comes once the previous prompt passed 2,048 tokens, below the 4,096 the page lists for
  Gemini 3 models: that model is given 2,048 (the log wins), other Gemini 3+ models the page's 4,096; (3) 22 of
  the 139 calls whose previous prompt reached 2,048 tokens read nothing at all (15.8%: the best-effort misses),
  mostly short prefixes (3.8% of the tokens whole steps would read), and the hits read a little under whole
  steps (3,987 of 4,096): together the recorded reads are 95.2% (4,037,810 / 4,239,360) of the whole 2,048-token
  steps of the previous prompts, the expected hit rate applied to every read (a call-level rate, 117/139, would
  put the sessions at 78.6%: the cost is in the long prefixes, which hit). Modelled so, the four sessions'
  simulated share is 88.9% where they recorded 88.9% (in sample: fitted on them; per session, simulated /
  recorded, 77.8/58.8, 86.1/75.4, 90.8/94.8, 84.3/78.7%), against 90.2% under the previous model. Resting on four
  sessions of one agent and one model, without timestamps, the fit says nothing of expiry: human-paced Gemini
  CLI sessions, with gaps between prompts, may miss more (issue 41's held-out Gemini CLI logs recorded 65.0%
  where the replay simulated 97.1%; not in ``../shared``, so not fitted here).
- **OpenHands** runs its model through litellm, so its calls get the serving provider's cache above (Anthropic's
  for Claude models, with the ``cache_control`` marks OpenHands sets). No OpenHands log in ``../shared`` records
  its cache reads: documentation only (issue 41's held-out OpenHands logs recorded 92.8% where the replay
  simulated 98.1%; not fitted).
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

import math
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
GEMINI_MIN_PREFIX = 2_048  # implicit caching: Gemini 2.5 Flash and Pro (docs, 2026-10-13)
GEMINI_3_MIN_PREFIX = 4_096  # Gemini 3 and later (docs, 2026-10-13)
GEMINI_LOGGED_MIN = {"gemini-3-pro-preview": 2_048}  # read from 2,048 in its logs (four mini-swe-agent sessions)
GEMINI_STEP = 2_048  # reads in steps of about 2,048 tokens (the same sessions)
GEMINI_HIT_RATE = 4_037_810 / 4_239_360  # recorded reads / whole 2,048-token steps of the warm prefixes (same sessions)


@dataclass(frozen=True, slots=True)
class CacheModel:
    """How one provider caches prompts: the write premium (× input price), the lifetime of an entry after
    its last use (None: never expires), the shortest prefix it caches."""

    provider: str
    write_premium: float = 1.0
    ttl_s: float | None = None
    min_prefix: int = 0
    granularity: int = 1  # a read is a whole multiple of this many tokens
    hit_rate: float = 1.0  # the expected share of a cacheable read served (a best-effort cache misses some calls)

    def describe(self) -> str:
        ttl = "no expiry" if self.ttl_s is None else f"entries expire {self.ttl_s / 60:g} min after their last use"
        steps = f", read in steps of {self.granularity:,} tokens" if self.granularity > 1 else ""
        hits = f", {self.hit_rate:.1%} of reads served (best effort)" if self.hit_rate < 1 else ""
        return (f"{self.provider}: writes at {self.write_premium:g}x input, {ttl}, "
                f"prefixes under {self.min_prefix:,} tokens not cached{steps}{hits}")

    def alive(self, last_use: float | None, now: float | None) -> bool:
        """An entry last used at ``last_use`` still serves a call at ``now`` (unknown times: assumed alive)."""
        return self.ttl_s is None or now is None or last_use is None or now - last_use <= self.ttl_s

    def written(self, prompt: int) -> int:
        """The tokens a request marked for caching writes: all it sends past what it read, none under the
        minimum (a provider caches no shorter prefix)."""
        return prompt if prompt >= max(self.min_prefix, 1) else 0

    def readable(self, prefix: int) -> int:
        """The tokens a call reads from a cached ``prefix``: none under the minimum, else whole steps, times the
        expected hit rate (rounded down: deterministic, the mean of a best-effort cache's hits and misses)."""
        if prefix < self.min_prefix or prefix <= 0:
            return 0
        whole = prefix - prefix % self.granularity
        return whole if self.hit_rate >= 1 else math.floor(whole * self.hit_rate)


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
        minimum = GEMINI_LOGGED_MIN.get(name, GEMINI_MIN_PREFIX if name.startswith(("gemini-2", "gemini-1"))
                                        else GEMINI_3_MIN_PREFIX)
        model = CacheModel("gemini", 1.0, None, minimum, GEMINI_STEP, GEMINI_HIT_RATE)
    else:
        model = NO_CACHE_MODEL
    if ttl == "none":
        return CacheModel(model.provider, model.write_premium, None, model.min_prefix, model.granularity,
                          model.hit_rate)
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
