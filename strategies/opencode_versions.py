"""``compbench.strategies.opencode_versions`` — which OpenCode version runs which preset, and what its users set.

Kept apart from :mod:`compbench.strategies.opencode` (what a compaction does) because it is a table read off
published packages, one boundary a row, and grows with every release.

Read from the published ``opencode-linux-x64`` packages (npm; the bundled JavaScript of ``bin/opencode``), since
anomalyco/opencode is over the size a snapshot may have here, and from the pull requests that made each change:

* **1.3.x** (``preset=1.3``): today's overflow (``overflow.ts``: ``count >= usable``, cache writes counted,
  ``limit.input − (compaction.reserved ?? min(20,000, maxOutputTokens))``) and no verbatim tail; its
  ``compaction.ts`` (fd78ec63) prunes unless ``compaction.prune`` is false. The tail came with #21822, merged
  2026-04-10, after 1.3.17 (the last 1.3 release before 1.4.6 of 2026-04-15); 1.3.2's package bundles its code in a
  form this reading could not search, so the 1.3 side rests on the merge date.
* **1.4.0–1.18.16** (``preset=1.4``): a verbatim tail of the newest ``compaction.tail_turns`` user turns (default
  ``DEFAULT_TAIL_TURNS`` 2; 0 or less keeps none) within ``compaction.preserve_recent_tokens`` (``tail_tokens``
  until #23491 of 2026-04-20, i.e. through 1.4.x; 1.14 reads the new name), by default ``clamp(floor(usable ×
  0.25), 2,000, 8,000)``. Read in 1.14.34, 1.17.18, 1.18.10, 1.18.14 and 1.18.16. 1.4.0–1.4.2 may predate the
  merge; the 1.4 series (to 1.4.11) came out around it, so it is given the tail.
* **1.18.17 on** (``preset=current``): no turn count unless ``tail_turns`` is set (every turn within the budget),
  and the budget's ceiling 15,000 (#40906); read in 1.18.17, 1.18.18, 1.18.19, 1.18.20, 1.18.25, 1.18.30 and
  1.18.34. In every package read, ``compaction.reserved`` is used as given (no cap at the output ceiling) and only
  beside a model's input limit, and a model with ``limit.context: 0`` never compacts (``usable`` 0, ``isOverflow``
  false).

Kilo Code's OpenCode-based builds (Kilo-Org/kilocode ``packages/opencode/src/kilocode/session/overflow.ts`` at
b32ab1748a0b, ``KiloSessionOverflow``; the same code in the ``@kilocode/cli-linux-x64`` 7.7.2 package, absent from
7.0.33, the only earlier one published here) add ``compaction.threshold_percent``: the overflow limit becomes
``min(usable, floor((limit.input || limit.context) × percent / 100))``, checked after each step and, before a request
that starts a turn (not a tool-loop continuation), on an estimate of the outgoing request: ``ceil(chars/4 of its JSON
× 1.3)``. Unset, Kilo compacts as OpenCode does. (7.7.9 takes the percentage of ``limit.context`` alone and projects the
request from the last reported usage plus the inflated new messages; ``preset=kilo`` models 7.7.2.) Their logs have no importer here (Kilo Code's logs in compbench are
the legacy extension's, a Roo Code fork, replayed by ``roo-code`` at its ``kilo`` preset), so ``preset=kilo`` and the
parameter are for a user who sets it, and no version boundary is applied.
"""

from __future__ import annotations

import re

from compbench.sdk import Accepts, Setting, Tool
from compbench.strategies.opencode_prompts import CONTINUE_TEXT_CURRENT

COMPACTION_BUFFER = 20_000  # session/overflow.ts 08f74b9b, reserve beside a dedicated input limit
DEFAULT_TAIL_TURNS = 2  # compaction.ts DEFAULT_TAIL_TURNS, 1.4.0-1.18.16 (packages 1.14.34-1.18.16)
MAX_PRESERVE_RECENT_TOKENS_1_4 = 8_000  # compaction.ts, 1.4.0-1.18.16
KILO_THRESHOLD_DEFAULT = 80.0  # preset=kilo: a value to start from; Kilo itself sets none (unset = OpenCode's rule)

# today's overflow.ts, shared by every preset after the seed
_OVERFLOW: dict[str, object] = {"input_buffer": COMPACTION_BUFFER, "at_limit": True, "count_cache_write": True}
_CURRENT: dict[str, object] = {
    **_OVERFLOW,
    "tail": True,  # session/compaction.ts select(), preserveRecentBudget
    "prompt": "anchored",  # core/src/session/compaction.ts 8b9b5784 buildPrompt + SUMMARY_TEMPLATE
    "prune": False,  # session/compaction.ts: if (!cfg.compaction?.prune) return
    "continue_text": CONTINUE_TEXT_CURRENT,  # session/compaction.ts fd78ec63
}
PRESETS: dict[str, dict[str, object]] = {
    "current": _CURRENT,
    "1.4": {**_CURRENT, "tail_turns": DEFAULT_TAIL_TURNS, "tail_max": MAX_PRESERVE_RECENT_TOKENS_1_4},
    "1.3": {**_OVERFLOW, "continue_text": CONTINUE_TEXT_CURRENT},
    "kilo": {**_CURRENT, "threshold_percent": KILO_THRESHOLD_DEFAULT},
}
PRESET_VERSIONS = {
    "seed": "1.2.x and earlier (1.2.5's log)",
    "1.3": "1.3.x: today's overflow, no tail (the tail came 2026-04-10, #21822)",
    "1.4": "1.4.0-1.18.16: a tail of 2 turns within 8,000 tokens (read in packages 1.14.34-1.18.16)",
    "current": "1.18.17 on: every turn within 15,000 tokens (read in packages 1.18.17-1.18.34)",
}
_VERSION = re.compile(r"\s*(\d+)\.(\d+)(?:\.(\d+))?")


def version_preset(version: str) -> str:
    """The preset of a recorded OpenCode version; a text that is no version (``dev``) gets the newest."""
    m = _VERSION.match(version)
    if m is None:
        return "current"
    v = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    if v < (1, 3, 0):
        return "seed"
    if v < (1, 4, 0):
        return "1.3"
    return "1.4" if v < (1, 18, 17) else "current"


def _tail_honoured(version: str) -> str:
    m = _VERSION.match(version)
    if m is not None and (int(m.group(1)), int(m.group(2))) < (1, 4):
        return f"OpenCode {version} keeps no verbatim tail: compaction.tail_turns and its token budget came in 1.4"
    return ""


def _tail_tokens_line(source: str, version: str) -> tuple[str, str] | None:
    """1.4.x reads ``tail_tokens`` (renamed ``preserve_recent_tokens`` by #23491, 2026-04-20, before 1.14)."""
    m = _VERSION.match(version)
    if m is not None and (int(m.group(1)), int(m.group(2))) == (1, 4):
        return '{"compaction": {"tail_tokens": {value}}}', "opencode.json, compaction.tail_tokens"
    return None


# What OpenCode's users set (opencode.json "compaction"; OPENCODE_DISABLE_AUTOCOMPACT / OPENCODE_DISABLE_PRUNE force
# the switches off). The keys are as each package's config schema reads them.
SETTINGS = (
    Setting("prune", "compaction.prune", "opencode.json, compaction.prune",
            "on through 1.3 (compaction.ts fd78ec63), off in today's code", '{"compaction": {"prune": {value}}}',
            sweep=(True, False),
            note="protects the newest 40,000 estimated tokens of tool output; prunes only when it saves 20,000"),
    Setting("auto", "compaction.auto", "opencode.json, compaction.auto", "true", '{"compaction": {"auto": {value}}}',
            note="false (or OPENCODE_DISABLE_AUTOCOMPACT=1) never compacts by itself"),
    Setting("reserved", "compaction.reserved", "opencode.json, compaction.reserved",
            "min(20,000, the model's output limit)", '{"compaction": {"reserved": {value}}}',
            accepts=Accepts(0, None, outside="OpenCode's schema takes a whole number of tokens"),
            note="used as given, above the output limit too, and only for a model that declares an input limit "
                 "(usable = limit.input - reserved); without one usable stays context - the output limit"),
    Setting("tail_turns", "compaction.tail_turns", "opencode.json, compaction.tail_turns",
            "2 (1.4.0-1.18.16); every turn within the token budget from 1.18.17",
            '{"compaction": {"tail_turns": {value}}}', honoured=_tail_honoured,
            accepts=Accepts(0, None, outside="OpenCode's schema takes a whole number"),
            note="the newest user turns kept verbatim after a compaction, within the token budget; 0 keeps none"),
    Setting("tail_tokens", "compaction.preserve_recent_tokens", "opencode.json, compaction.preserve_recent_tokens",
            "clamp(usable / 4, 2,000, 8,000) through 1.18.16, clamp(usable / 4, 2,000, 15,000) from 1.18.17",
            '{"compaction": {"preserve_recent_tokens": {value}}}', honoured=_tail_honoured,
            line_for=_tail_tokens_line, accepts=Accepts(0, None, outside="OpenCode's schema takes a whole number"),
            note="the tail's budget in OpenCode's chars/4 estimate, used as given; 1.4.x calls it "
                 "compaction.tail_tokens"),
)
# fidelity sets OpenCode's versions beside its logs; preset=kilo is another tool's rule, not one of them
OPENCODE_PRESETS = ("seed", "1.3", "1.4", "current")
TOOL = Tool("OpenCode", ("opencode",), newest="current", version_preset=lambda v: version_preset(v),
            preset_versions=PRESET_VERSIONS, settings=SETTINGS,
            fidelity_specs=lambda t: [(p, f"opencode:preset={p}") for p in OPENCODE_PRESETS])
