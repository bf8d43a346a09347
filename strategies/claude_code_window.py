"""``compbench.strategies.claude_code_window`` — Which window Claude Code compacts against, where that window comes
from, and the two compactions that need no threshold: the reactive one at the API's "prompt is too long" and the
idle one before the prompt cache expires.

Claude Code is closed source; what follows is read from its published packages (the versions read are listed in
:mod:`.claude_code_versions`), function by function:

* **The window's source** (``TK`` in 2.1.217, ``XS`` in 2.1.332): the environment variable first
  (``CLAUDE_CODE_AUTO_COMPACT_WINDOW``: ``env``), then ``autoCompactWindow`` in settings.json (``settings``; a per-model
  ``modelSettings.<model>.autoCompactWindow`` replaces the top-level value for that model), then what Anthropic's
  server sends (``clientdata``, ``experiment``: here ``server``), then a model default (``model-default``), then
  ``unknown-model`` (2.1.223 on, a model Claude Code does not know), else ``auto``: the model's whole window.
* **Reactive when the source is auto** (2.1.191 on: ``if (reactiveSupported() && source === "auto") return false``
  at the top of the proactive check; 2.1.170-2.1.190 skipped it only behind a server flag that bypassed it for every
  model, ``tengu_amber_redwood3``): with no source but ``auto`` the proactive check never compacts; the request goes
  out and Claude Code compacts when the API refuses it as too long (``prompt_too_long``; a request whose input plus
  ``max_tokens`` exceeds the window has its ``max_tokens`` lowered instead). That refusal comes when the request's
  own tokens exceed the model's window: the last call's usage plus the messages since, as the replay counts them
  (the log's ``preTokens`` is Claude Code's rougher estimate: 2.1.219's 998,659 on a 1M window).
* **The model defaults** per rule (:data:`SOURCE_RULES`): a 1M-capable model held below 1M (claude-sonnet-4-6 and
  claude-opus-4-6 from 2.1.191, claude-opus-4-8 from 2.1.217, claude-opus-5 from 2.1.219, any native-1M model from
  2.1.223, when ``CLAUDE_CODE_DISABLE_1M_CONTEXT`` holds it) compacts against 200,000; claude-sonnet-5 has a table
  (967,000 in 2.1.205-2.1.259, its whole 1M window from 2.1.260); from 2.1.260 a model whose own window is 1M
  compacts against it (``native1mHere``). Every other model at its own window is ``auto``: claude-sonnet-4-5,
  claude-opus-4-5 and claude-haiku-4-5 at 200k compact reactively, about 33,000 tokens later than a threshold would.
* **Precomputed summaries** (gated by a server flag, ``tengu_sepia_moth``, off by default in every package read; a
  log shows one as ``compactMetadata.precomputed``): armed when the count reaches ``min(0.8 x (W - reserve),
  W - reserve - 13,000)``, the summary covers the conversation up to there and what came after is kept verbatim when
  the compaction comes (``messagesToPreserve: [...precomputed, ...messagesSince]``).
* **Idle compaction** (2.1.299 on; the code is in 2.1.296 behind a server flag, announced for everyone in 2.1.299's
  notes, without the flag in 2.1.332): a timer armed at the end of a turn fires at ``lastActivityAt + 0.9 x (expiresAt -
  lastActivityAt)``, 54 minutes after the last request on the one-hour prompt cache (on the five-minute cache it is
  never armed), and compacts when the last call's tokens (input with the cache, plus output) are at least
  ``max(100,000, CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS or 200,000)`` and ``"idleCompaction"`` is not false. A log shows
  it as an automatic compaction before the prompt that ended the gap. Not modelled: the timer lapses when it fires
  more than a minute late (a laptop asleep), which no log records.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from compbench.sdk import Entry

HELD_WINDOW = 200_000  # the window a 1M-capable model is held to, and every model's before the 1M window
ONE_M = 1_000_000
# Claude Code's model catalogue (2.1.217 and 2.1.332 packages): the models whose own window is 1M ("native_1m")
NATIVE_1M = ("claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-fable-5",
              "claude-mythos-5", "claude-haiku-5")
PRECOMPUTE_SHARE = 0.2  # tengu_amber_rokovoko's default: the precomputed summary arms at 80% of W - reserve
IDLE_SECONDS = 3_240  # 0.9 x the one-hour cache lifetime (rss = 0.9 in 2.1.332, EMo in 2.1.299)
IDLE_TOKENS = 200_000  # the idle compaction's default minimum
IDLE_FLOOR = 100_000  # Math.max(1e5, CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS)
SOURCES = ("", "auto", "env", "settings", "server", "model-default", "unknown-model")


@dataclass(frozen=True)
class SourceRule:
    """One version range's model defaults (see the module docstring)."""

    held: frozenset[str] = frozenset()  # models whose window below 1M is a 200,000 model default
    held_native: bool = False  # 2.1.223: any native-1M model held below 1M
    table: Mapping[str, int] = field(default_factory=dict)  # model -> its default auto-compact window
    native_at_1m: bool = False  # 2.1.260: a native-1M model at its own 1M window
    unknown_model: bool = False  # 2.1.223: a model Claude Code does not know is held to its assumed window


_HELD = frozenset({"claude-sonnet-4-6", "claude-opus-4-6"})
_HELD_217 = _HELD | {"claude-opus-4-8", "claude-opus-5"}  # opus-4-8 in 2.1.217, opus-5 in 2.1.219
SOURCE_RULES: dict[str, SourceRule] = {
    "2.1.191": SourceRule(_HELD),
    "2.1.205": SourceRule(_HELD, table={"claude-sonnet-5": 967_000}),
    "2.1.217": SourceRule(_HELD_217, table={"claude-sonnet-5": 967_000}),
    "2.1.223": SourceRule(_HELD_217, True, {"claude-sonnet-5": 967_000}, unknown_model=True),
    "2.1.260": SourceRule(_HELD_217, True, {"claude-sonnet-5": ONE_M}, native_at_1m=True, unknown_model=True),
}
_PREFIX = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic\.")  # Bedrock's us.anthropic.claude-...
_SUFFIX = re.compile(r"(?:\[1m\]|-v\d+(?::\d+)?|@\d{8}|-\d{8})+$")


def canonical(model: str) -> str:
    """A recorded model name as Claude Code keys its tables: no provider prefix, date, version or [1m] tag."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return _SUFFIX.sub("", _PREFIX.sub("", name))


def native_1m(model: str) -> bool:
    return canonical(model).startswith(NATIVE_1M)


def known(model: str) -> bool:
    """A model Claude Code's catalogue knows (a Claude model; others are held to their assumed window, 2.1.223)."""
    name = canonical(model)
    return name.startswith("claude-") or name in ("opus", "sonnet", "haiku", "fable", "mythos", "best", "opusplan")


def session_model(entries: Sequence[Entry]) -> str:
    """The model of the session's last recorded response ("" when the log names none)."""
    for e in reversed(entries):
        model = e.message.meta.get("model") if e.role == "assistant" else None
        if isinstance(model, str) and model and model != "<synthetic>":
            return model
    return ""


def model_default(rule: SourceRule, model: str, window: int) -> int | None:
    """The rule's default auto-compact window for ``model`` running at ``window`` (None: none, the source is auto)."""
    name = canonical(model)
    if window < ONE_M and (name in rule.held or (rule.held_native and native_1m(model))):
        return HELD_WINDOW
    if name in rule.table:
        return rule.table[name]
    if rule.native_at_1m and window >= ONE_M and native_1m(model):
        return window
    return None


def stamp(meta: Mapping[str, object]) -> float | None:
    """Seconds since the epoch of a recorded message (its ISO 8601 ``timestamp``), None without one."""
    value = meta.get("timestamp")
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def prompt_after_idle(entries: Sequence[Entry]) -> tuple[int, int] | None:
    """``(last response, prompt)`` positions when the newest entries are a user's prompt that came
    :data:`IDLE_SECONDS` or more after the last response on the one-hour cache; None otherwise."""
    last = next((i for i in range(len(entries) - 1, -1, -1) if entries[i].role == "assistant"), None)
    if last is None:
        return None
    prompt = next((i for i in range(last + 1, len(entries)) if entries[i].role == "user"
                   and not any(entries[i].message.meta.get(k) for k in ("is_meta", "local_command", "compaction"))),
                  None)
    if prompt is None:
        return None
    start, end = stamp(entries[last].message.meta), stamp(entries[prompt].message.meta)
    if start is None or end is None or end - start < IDLE_SECONDS or not one_hour_cache(entries[:last + 1]):
        return None
    return last, prompt


def one_hour_cache(entries: Sequence[Entry]) -> bool:
    """The session's last request that wrote to the prompt cache wrote to the one-hour cache (the importer flags it
    ``cache_ttl: "1h"``); the idle timer is never armed on the five-minute cache."""
    for e in reversed(entries):
        usage = e.message.usage
        if e.role == "assistant" and usage is not None and usage.cache_write > 0:
            return e.message.meta.get("cache_ttl") == "1h"
    return False
