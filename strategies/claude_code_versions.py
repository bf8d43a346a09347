"""``compbench.strategies.claude_code_versions`` — Which preset of ``claude-code`` models which Claude Code version, and
what a log shows of the configuration it ran with.

The packages read (``npm pack @anthropic-ai/claude-code@V``: ``cli.js`` through 2.1.9x, then the Bun binary of
``@anthropic-ai/claude-code-linux-x64@V``, its embedded bundle read as text; none of it is kept here): 2.0.76, 2.1.69,
2.1.78, 2.1.81, 2.1.83, 2.1.84, 2.1.85, 2.1.92, 2.1.170, 2.1.183, 2.1.190, 2.1.191, 2.1.193, 2.1.196, 2.1.205,
2.1.210, 2.1.216, 2.1.217, 2.1.219, 2.1.223, 2.1.240, 2.1.250, 2.1.257, 2.1.259, 2.1.260, 2.1.280, 2.1.285-2.1.288,
2.1.290, 2.1.296,
2.1.299, 2.1.304, 2.1.310, 2.1.311 and 2.1.332 (the newest, :data:`NEWEST_READ`), with the changelog of the public
repository (to 2.1.240) and the release notes embedded in the 2.1.299, 2.1.310 and 2.1.332 packages. Each boundary
is the first version whose code differs, the version before it read too:

* **2.1.21**: the 20,000 output reserve (the logs; :mod:`.claude_code`).
* **2.1.84**: skills re-attached after a compaction are capped, 5,000 rough tokens each and 25,000 together (2.1.83
  attaches every invoked skill whole; so do 2.0.76, 2.1.69, 2.1.78, 2.1.81). The plan file is re-attached from 2.0.76.
* **2.1.92**: ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` raised to 100,000 and capped at 1,000,000 (2.1.85 takes it as
  ``parseInt`` reads it); ``autoCompactWindow`` in settings.json an integer in 100,000-1,000,000, else dropped;
  400,000 on a 1M window (reports, :mod:`.claude_code`).
* **2.1.138**: the whole window again on 1M (reports).
* **2.1.191**: the proactive check skipped when the window's source is ``auto`` (:mod:`.claude_code_window`);
  2.1.190 skipped it only behind a server flag.
* **2.1.196**: the server's 500,000 on 1M windows (reports: ``auto (500k tokens)``); claude-sonnet-5's 967,000 from
  2.1.205 is in the same rule here.
* **2.1.217**: the last API round kept; claude-opus-4-8 (2.1.217) and claude-opus-5 (2.1.219) held to 200,000 below
  1M; no server window assumed (a log's own compaction says one: :func:`log_settings`; 2.1.219's at 998,659 on 1M was
  reactive).
* **2.1.223**: ``CLAUDE_CODE_DISABLE_1M_CONTEXT`` holds every native-1M model to 200,000 (a fixed list before); a
  model Claude Code does not know compacts against its assumed window (``unknown-model``).
* **2.1.260**: a native-1M model at 1M compacts against its whole window (967,000), claude-sonnet-5 too.
* **2.1.299**: idle compaction. The per-model ``modelSettings.<model>.autoCompactWindow`` is read from 2.1.288 (2.1.287
  lacks it; reported from 2.1.311); ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` takes ``k``/``M`` suffixes from 2.1.304
  (``parseInt`` before: ``500k`` is 500, raised to 100,000); 2.1.332 caps neither the variable nor the setting at
  1,000,000 (the model's window does). None of these changes when a default session compacts: one preset.

**The threshold's reserve** (``W - min(max output, reserve) - 13,000``) per version is inferred from the logs: one
real data point fits many formulas, so every auto compaction of ../shared is a bound: the largest count (as the
version's preset counts, on the log completed as ``evidence`` says) that did not compact, and the count that did
(preTokens):

* 2.0.76 (2 sessions, Sonnet 4.5 and Opus 4.5): (152,770, 155,548] and (154,797, 155,250], so the
  threshold lies in (154,797, 155,250]: 155,000 = 200k - 32k - 13k, the reserve min(max output,
  32,000) (the CLI's default max output tokens); any reserve in [31,750, 32,202] fits, 20,000 does not,
  nor does seed 002's 95% (190,000).
* 2.1.25–2.1.49 (7 compactions, 4 sessions, Opus 4.5 and 4.6): the counts that did not compact reach
  166,263 (2.1.29), the smallest that did is 167,066 (2.1.25): (166,263, 167,066] holds 167,000 =
  200k - 20k - 13k (a reserve in [19,934, 20,736]); 155,000 is excluded. The change is the 2.1.21
  changelog entry "Fixed auto-compact triggering too early on models with large output token limits"
  (inferred to be this one: no 2.1.0–2.1.20 auto compaction is in ../shared).

Every session ran a 200k window, so a percentage of the window (77.4–77.6% for 2.0, 83.1–83.5% for 2.1)
fits the logs as well as ``W - reserve - 13,000``; the additive form is the bundle's.

**On a 1M window** (``large_window``) Claude Code compacts against an auto-compact window of its own: the user's
CLAUDE_CODE_AUTO_COMPACT_WINDOW / ``autoCompactWindow`` first (``auto_compact_window``), else a default
that Anthropic tunes per model and plan server-side, without a release (anthropics/claude-code #86863, a
maintainer on 2.1.233: "the default window for a model can be tuned on our side without a Claude Code
release"; #65966 names experiment-sourced windows). The rule per version (``large_window``; fidelity picks
the preset from the version a compaction recorded, ``version_preset``) is the default public evidence
shows for each range — a user outside that cohort compacts elsewhere (the Entire team's sessions on the
checkpoint branches of entireio/git-sync and entireio/skills ran to 414k–626k on 1M windows without
compacting, on 2.1.108, 2.1.123, 2.1.126, 2.1.136, 2.1.143, 2.1.146 and 2.1.179):

* 2.1.21–2.1.91, presets ``2.1.21`` and ``2.1.84``: the whole window (1M - 20k - 13k = 967,000). #43989: ``/context``
  shows .../1000k on 2.1.91, "sessions routinely ran to 600k+ tokens without compaction", and going back
  to 2.1.91 restores it.
* 2.1.92–2.1.137, preset ``2.1.92``: 400,000 (367,000). #43989: ``/context`` shows .../400k from 2.1.92;
  #54056: four 2.1.119 compactions at 360,677–366,989; issue 25's held-out 2.1.119–2.1.129 sessions
  match it to the step.
* 2.1.138–2.1.195, presets ``2.1.138`` and ``2.1.191``: the whole window again (967,000). Issue 25's held-out
  2.1.138–2.1.139 sessions compact 60–80 calls after 367,000; 2.1.138's changelog says only "Internal fixes"; #63627
  (2.1.156): 522k of 1M without a compaction; the CLAUDE_CODE_AUTO_COMPACT_WINDOW documentation (undated,
  as quoted by claude-code-log.com): "Defaults to the model's context window: 200K for standard models or
  1M for extended context models"; #72414 reports 2.1.196's 500k default as new.
* 2.1.196–2.1.216, preset ``current``: 500,000 (467,000). #72414: 2.1.196's ``/context`` shows "Auto-compact
  window: auto (500k tokens)" with nothing configured; #72600: a 2.1.196 compaction at preTokens 468,102.

Inferred, not read in a log of ours: the 2.1.138 boundary (2.1.130–2.1.137 unverified), and whole window
rather than 500k for 2.1.138–2.1.195 (reports, no log past 400k that compacted).

From 2.1.191 a 1M window no server window is set for (``auto``) compacts reactively, at the API's limit: so do the
presets from 2.1.191 where they assume none (``2.1.191``, and from ``2.1.217``: 2.1.219's compaction at 998,659).
The presets ``2.1.92`` and ``current`` keep the server's windows the reports show.
"""

from __future__ import annotations

import re

from compbench.sdk import Accepts, Setting, Transcript
from compbench.strategies.claude_code_restore import RESTORE_FILES, SKILLS_BUDGET, TOKENS_PER_SKILL
from compbench.strategies.claude_code_text import (
    RESUME_217,
    STRUCTURED_PROMPT,
    SUMMARY_PREFIX_21,
    SUMMARY_SUFFIX_21,
    TRANSCRIPT_LINE,
)
from compbench.strategies.claude_code_window import HELD_WINDOW, IDLE_TOKENS, ONE_M, SOURCE_RULES, model_default

NEWEST_READ = (2, 1, 332)  # the newest package read: a later version runs at the newest preset, and says so
NEWEST = "2.1.299"
OUTPUT_RESERVE_20 = 32_000  # 2.0.x: min(max output, 32,000) reserved; inferred from 2.0.76's 155,000 trigger
OUTPUT_RESERVE = 20_000  # 2.1.21+: MAX_OUTPUT_TOKENS_FOR_SUMMARY (2.1 bundle, issue #31806); 167,000 in the logs
AUTOCOMPACT_BUFFER = 13_000  # AUTOCOMPACT_BUFFER_TOKENS (bundle, issue #12004: ``nx1 = 13000``)
WINDOW_FLOOR, WINDOW_CAP = 100_000, 1_000_000  # CLAUDE_CODE_AUTO_COMPACT_WINDOW's bounds (2.1.92 on)
# the server's auto-compact window on a 1M window, per version (the docstring gives the evidence; 0: none)
LARGE_WINDOW_92 = 400_000  # 2.1.92-2.1.137 (#43989, #54056)
LARGE_WINDOW = 500_000  # 2.1.196-2.1.216 (#72414, #72600)
# The first version each preset models, newest first
FIRST_VERSIONS = (((2, 1, 299), "2.1.299"), ((2, 1, 260), "2.1.260"), ((2, 1, 223), "2.1.223"),
                  ((2, 1, 217), "2.1.217"), ((2, 1, 196), "current"), ((2, 1, 191), "2.1.191"),
                  ((2, 1, 138), "2.1.138"), ((2, 1, 92), "2.1.92"), ((2, 1, 84), "2.1.84"), ((2, 1, 21), "2.1.21"))
PRESET_VERSIONS = {"2.1.299": "2.1.299-2.1.332 (2.1.332: the newest package read)", "2.1.260": "2.1.260-2.1.298",
                   "2.1.223": "2.1.223-2.1.259", "2.1.217": "2.1.217-2.1.222", "current": "2.1.196-2.1.216",
                   "2.1.191": "2.1.191-2.1.195", "2.1.138": "2.1.138-2.1.190", "2.1.92": "2.1.92-2.1.137",
                   "2.1.84": "2.1.84-2.1.91", "2.1.21": "2.1.21-2.1.83", "2.0": "2.0.x-2.1.20"}  # fidelity's rows
# the source rule each preset runs (claude_code_window.SOURCE_RULES), for log_settings
PRESET_RULES = {"2.1.299": "2.1.260", "2.1.260": "2.1.260", "2.1.223": "2.1.223", "2.1.217": "2.1.217",
                "current": "2.1.205", "2.1.191": "2.1.191"}
RESTORE = {"restore_files": RESTORE_FILES, "read_before_edit": True}
ATTACH = {"restore_skills": True, "skills_budget": 0, "skill_tokens": 0, "restore_plan": True}  # 2.0.76-2.1.83
ATTACH_84 = {**ATTACH, "skills_budget": SKILLS_BUDGET, "skill_tokens": TOKENS_PER_SKILL}  # 2.1.84 on
V20 = {"output_reserve": OUTPUT_RESERVE_20, "autocompact_buffer": AUTOCOMPACT_BUFFER,
       "compact_prompt": STRUCTURED_PROMPT, **RESTORE, **ATTACH}
V21 = {"output_reserve": OUTPUT_RESERVE, "autocompact_buffer": AUTOCOMPACT_BUFFER, "count_trailing": True,
       "compact_prompt": STRUCTURED_PROMPT, "summary_prefix": SUMMARY_PREFIX_21, "summary_suffix": SUMMARY_SUFFIX_21,
       "manual_suffix": TRANSCRIPT_LINE, **RESTORE, **ATTACH}
V92 = {**V21, **ATTACH_84, "window_floor": WINDOW_FLOOR}
# 2.1.217: the last API round kept verbatim (compactMetadata.preservedSegment), the continuation after a manual
# compaction too, in its new wording; no server window assumed (a log's own compaction says one)
V217 = {**V92, "large_window": 0, "keep_last_round": True, "source_rule": "2.1.217",
        "summary_suffix": TRANSCRIPT_LINE + "\n" + RESUME_217, "manual_suffix": TRANSCRIPT_LINE + "\n" + RESUME_217}
PRESETS: dict[str, dict[str, object]] = {  # the versions each models: claude_code_versions.PRESET_VERSIONS
    "2.1.299": {**V217, "source_rule": "2.1.260", "idle_compact": True},
    "2.1.260": {**V217, "source_rule": "2.1.260"},
    "2.1.223": {**V217, "source_rule": "2.1.223"},
    "2.1.217": V217,
    "current": {**V92, "large_window": LARGE_WINDOW, "source_rule": "2.1.205"},
    "2.1.191": {**V92, "large_window": 0, "source_rule": "2.1.191"},
    "2.1.138": {**V92, "large_window": 0},
    "2.1.92": {**V92, "large_window": LARGE_WINDOW_92},
    "2.1.84": {**V21, **ATTACH_84, "large_window": 0},
    "2.1.21": {**V21, "large_window": 0},
    "2.0": V20,
}
ENV = 'the shell environment, or "env" in ~/.claude/settings.json (no release note says a version ignores the latter)'
# the override's unset value among the percentages tried: the default threshold is 167,000 of a 200k window's 180,000
# (the window less the output reserve), about 92.8%
UNSET_PCT = round(100 * (200_000 - OUTPUT_RESERVE - AUTOCOMPACT_BUFFER) / (200_000 - OUTPUT_RESERVE), 1)


def override_caveat(version: str, window: int) -> str:
    """What limits CLAUDE_AUTOCOMPACT_PCT_OVERRIDE on a log of ``version`` at ``window`` (the packages above): from
    2.1.191 a window whose source is "auto" compacts only reactively, at the API's limit, leaving nothing for the
    override to lower unless the window is set; on a 1M window, proactive compaction depends on the version and
    where the window comes from."""
    parts = _parts(version) or (0, 0, 0)
    if window > HELD_WINDOW:
        return ("on a 1M window the override acts only where the window's source is not \"auto\" (from 2.1.191) and "
                "no server flag turns proactive compaction off (2.1.170-2.1.190)")
    if parts >= (2, 1, 191):
        return ("from 2.1.191 a window whose source is \"auto\" (claude-sonnet-4-5, claude-opus-4-5, claude-haiku-4-5 "
                "at 200k) compacts only at the API's limit: set CLAUDE_CODE_AUTO_COMPACT_WINDOW too for the override "
                "to act")
    return ""
SETTINGS_FILE = "~/.claude/settings.json (or a project's .claude/settings.json)"
# What Claude Code's users set, as they write it, and how each version reads it (the packages above)
SETTINGS = (
    Setting("autocompact_pct_override", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", ENV, "unset: 167,000 of a 200k window",
            "export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={value}", sweep=(60.0, 80.0), unset_at=UNSET_PCT,
            caveat=override_caveat,
            accepts=Accepts(0, 100, open_lo=True, unset=0, outside="Claude Code ignores any other value"),
            note="a percentage of the window less the output reserve (parseFloat); it can only lower the threshold "
                 "(above about 92 on a 200k window it changes nothing), a value outside (0, 100] is ignored; from "
                 "2.1.191 it acts only where the window's source is not auto (set in the environment or settings.json, "
                 "the server's, or the model's default): claude-sonnet-4-5, claude-opus-4-5 or claude-haiku-4-5 at "
                 "200k compact at the API's limit whatever it says"),
    Setting("auto_compact_window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW", ENV,
            "the model's window, or Anthropic's default for the model",
            "export CLAUDE_CODE_AUTO_COMPACT_WINDOW={value}",
            accepts=Accepts(100_000, 1_000_000, unset=0, refuse=False,
                            outside="Claude Code 2.1.92 and later raise or cap it into that range"),
            note="whole tokens: read with parseInt through 2.1.303 (\"500k\" reads as 500, then raised to 100,000), "
                 "with k and M suffixes from 2.1.304; from 2.1.92 a value below 100,000 is raised to 100,000 and one "
                 "above 1,000,000 capped (2.1.332 caps it at the model's window only), before 2.1.92 taken as read; "
                 "never above the model's window; it comes before settings.json, and from 2.1.191 a window set here "
                 "is compacted before the API's limit"),
    Setting("settings_window", "autoCompactWindow", SETTINGS_FILE, "unset", "\"autoCompactWindow\": {value}",
            note="an integer from 100,000 to 1,000,000 (2.1.92-2.1.311; at least 100,000 in 2.1.332): any other value "
                 "is dropped, not clamped; \"modelSettings\": {\"<model>\": {\"autoCompactWindow\": N}} (2.1.288 on) "
                 "sets it for one model and replaces the top-level value for that model; "
                 "CLAUDE_CODE_AUTO_COMPACT_WINDOW comes first"),
    Setting("disable_1m", "CLAUDE_CODE_DISABLE_1M_CONTEXT", ENV, "unset: a 1M window where the model has one",
            "export CLAUDE_CODE_DISABLE_1M_CONTEXT={value}", written=lambda v: "1" if v else "0",
            note="2.1.50 on: the model runs at 200,000; from 2.1.223 every native-1M model is held there by the "
                 "proactive check, before that only claude-sonnet-4-6 and claude-opus-4-6 (claude-opus-4-8 from "
                 "2.1.217, claude-opus-5 from 2.1.219): another native-1M model grew to the API's own limit"),
    Setting("idle_compact", "idleCompaction", SETTINGS_FILE, "true (2.1.299 on)", "\"idleCompaction\": {value}",
            note="false turns idle compaction off (read from 2.1.290; /config's Idle compaction row from 2.1.302); "
                 "it acts only on the one-hour prompt cache, 54 minutes after the last request"),
    Setting("idle_compact_tokens", "CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS", ENV, f"{IDLE_TOKENS:,}",
            "export CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS={value}",
            note="a whole number of tokens, the last call's input with the cache plus its output; below 100,000 it is "
                 "raised to 100,000 (2.1.290 on)"),
)
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def _parts(version: str) -> tuple[int, ...] | None:
    m = _VERSION.match(version.strip())
    return tuple(int(x) for x in m.groups()) if m else None


def version_preset(version: str) -> str | None:
    """The preset of a recorded Claude Code version (``major.minor.patch``, a suffix ignored); None for one newer
    than the newest package read or one it cannot read (the newest preset then, and the results say why)."""
    parts = _parts(version)
    if parts is None or parts > NEWEST_READ:
        return None
    return next((preset for first, preset in FIRST_VERSIONS if parts >= first), "2.0")


def newest_read() -> str:
    return ".".join(map(str, NEWEST_READ))


def log_preset(t: Transcript) -> tuple[str | None, str] | None:
    """A log of a version newer than the newest package read runs at the newest preset, saying so; None otherwise."""
    version = str(t.meta.get("tool_version") or "")
    parts = _parts(version)
    if parts is None or parts <= NEWEST_READ:
        return None
    return NEWEST, (f"Claude Code {version} recorded, newer than {newest_read()} (the newest package read): the "
                    f"newest preset ({NEWEST}); its trigger is checked against the log's own compactions "
                    "(compbench fidelity), and a run reads them below where they show the window")


def log_settings(t: Transcript) -> tuple[dict[str, str], str] | None:
    """What the log shows of the configuration: Anthropic tunes windows per model and plan without a release
    (anthropics/claude-code #86863), so where a log shows it, it beats the version table:

    * its first automatic compaction: above the effective window (the window - 20,000) it was the API's "prompt is too
      long" (a reactive compaction, the source ``auto``, 2.1.191 on); on a 1M window below it, the window it
      compacted against (tokens before + 20,000 reserve + 13,000 buffer); on a 200k window where the version's rule
      says the model would compact reactively, below it, a window set somewhere (the source ``server``);
    * ``/autocompact``'s report of the window and its source (the importer's ``meta["autocompact_window"]``);
    * a compaction that used a precomputed summary (``compactMetadata.precomputed``, a server flag)."""
    values: dict[str, str] = {}
    said: list[str] = []
    parts = _parts(str(t.meta.get("tool_version") or "")) or (0, 0, 0)
    reactive = parts >= (2, 1, 191)
    first = next((c for c in t.compactions if c.trigger == "auto" and c.tokens_before), None)
    if first is not None and first.tokens_before is not None:
        before = first.tokens_before
        window = ONE_M if before > HELD_WINDOW else HELD_WINDOW
        if reactive and before > window - OUTPUT_RESERVE:
            values["window_source"] = "auto"
            said.append(f"its first automatic compaction at {before:,} tokens, past the {window:,} window's "
                        f"{window - OUTPUT_RESERVE - AUTOCOMPACT_BUFFER:,} threshold: reactive, at the API's limit")
        elif window == ONE_M:
            inferred = before + OUTPUT_RESERVE + AUTOCOMPACT_BUFFER
            values.update({"auto_compact_window": str(inferred), "window_from_log": "true"})
            said.append(f"its auto-compact window {inferred:,} inferred from the log's first automatic compaction at "
                        f"{before:,} tokens (+ {OUTPUT_RESERVE:,} output reserve + {AUTOCOMPACT_BUFFER:,} buffer), "
                        "not the version's default")
        elif reactive and _auto_source(t, parts, window):
            values["window_source"] = "server"
            said.append(f"its first automatic compaction at {before:,} tokens, below a 200k window: a window was set "
                        "(the version would compact this model only at the API's limit)")
    shown = t.meta.get("autocompact_window")
    if not values and isinstance(shown, dict) and isinstance(shown.get("source"), str):
        values.update(_shown(shown))
        said.append(f"/autocompact reported the window as {shown.get('text') or shown['source']}")
    if any(isinstance(c.meta.get("compact_metadata"), dict) and c.meta["compact_metadata"].get("precomputed") is True
           for c in t.compactions):
        values["precompute"] = "true"
        said.append("a compaction used a precomputed summary (compactMetadata.precomputed)")
    return (values, "; ".join(said)) if values else None


def _auto_source(t: Transcript, parts: tuple[int, ...], window: int) -> bool:
    """The version's rule gives this log's model no default on ``window``: it would compact only reactively."""
    preset = next((p for first, p in FIRST_VERSIONS if parts >= first), "2.0")
    rule = SOURCE_RULES.get(PRESET_RULES.get(preset, ""))
    return rule is not None and model_default(rule, str(t.meta.get("model") or ""), window) is None


def _shown(shown: dict[str, object]) -> dict[str, str]:
    """The settings ``/autocompact``'s report names: an environment variable or a settings value, the server's
    window, or none (``auto``)."""
    source, tokens = shown.get("source"), shown.get("tokens")
    n = str(tokens) if isinstance(tokens, int) and tokens > 0 else ""
    if source == "env" and n:
        return {"auto_compact_window": n}
    if source == "settings" and n:
        return {"settings_window": n}
    if source == "server" and n:
        return {"large_window": n, "window_source": "server"}
    return {"window_source": "auto"} if source == "auto" else {}
