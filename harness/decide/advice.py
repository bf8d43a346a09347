"""``compbench.decide.advice`` — A setting a user may paste, shown only where the evidence on their own logs holds it
up; elsewhere the setting named by its real name, with the condition that failed.

A wrong line in someone's config is worse than none. So for each setting of a tool that a run swept on that
tool's logs, the best value tried is held to five conditions (:data:`CONDITIONS`), each measured on the user's
logs, and shown as advice only when all hold:

* **reproduces** — the tool's own strategy at the log's preset lands within 2 calls of at least
  :data:`REPRODUCE_SHARE` of the log's own automatic compactions (:mod:`compbench.run.trigger`, after any
  calibration of the window, which is said), and the ``recorded`` row's self-check (its next prompt after each
  real compaction against the log's) is within :data:`SELF_CHECK_MARGIN`: otherwise the replay does not stand
  for the tool, and a change to its threshold predicts nothing;
* **reach** — at least :data:`MIN_REACH` transcripts reach the setting's threshold (the configuration acted on
  them): a figure on two transcripts is an anecdote;
* **better** — the paired change of effective savings against *as it ran* is significant, positive, and its
  lower bound is above the replay's own error (the self-check's median, in points);
* **interior** — the best value is not at the edge of the values tried, unless that edge is the tool's own
  limit (``Setting.accepted``): the best may lie beyond;
* **honoured** — the versions that wrote the logs read the setting, as far as the tool's source or
  documentation shows (``Setting.honoured``); a known limit (``Setting.caveat``) is shown with the line.

Manual compactions are set aside: a transcript the user compacted by hand (``/compact``, or a compaction below
what the tool makes by itself) is part of *as it ran*, never evidence for or against an automatic threshold, so
every figure here is over the transcripts the tool compacted automatically or never compacted.

The ranking among a setting's values is effective savings (which carries the re-acquisition validated against
real compactions); needed-fact recall is shown beside it as what it is, a heuristic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compbench.sdk.kinds import RECORDED
from compbench.sdk.tools import Setting, Tool

REPRODUCE_SHARE = 0.9  # of the log's automatic compactions the strategy must land within 2 calls of
SELF_CHECK_MARGIN = 0.20  # the recorded row's next-prompt error (median) the replay may have: its figures rest on it
MIN_REACH = 5  # transcripts the setting's threshold must be reached on
CONDITIONS = ("reproduces", "reach", "better", "interior", "honoured")


@dataclass(frozen=True)
class Condition:
    """One condition of the gate: met or not, and the evidence (or the failure) in words."""

    key: str
    met: bool
    text: str


@dataclass(frozen=True)
class Candidate:
    """A setting of the tool at its best value tried on the user's logs, with the gate's conditions.

    ``label`` is the configuration (None: no value tried beats the tool's default); ``lines`` what the user
    pastes and ``where`` where it goes; ``expect`` the figure their next logs should show, and how to check it."""

    setting: Setting
    label: str | None
    value: str
    tried: tuple[str, ...]
    lines: tuple[str, ...]
    where: str
    expect: str
    caveats: tuple[str, ...]
    change: Any  # compbench.decide.toolverdict.Change, against as it ran
    figures: str
    conditions: tuple[Condition, ...]

    @property
    def advised(self) -> bool:
        return bool(self.conditions) and all(c.met for c in self.conditions)

    @property
    def failed(self) -> list[Condition]:
        return [c for c in self.conditions if not c.met]


def comparable(rows: Any) -> Any:
    """The rows of transcripts where the tool compacted automatically or never (no manual compaction)."""
    if "manual_compactions" not in rows.columns:
        return rows
    return rows[rows["manual_compactions"] == 0]


def per_transcript(rows: Any) -> Any:
    """One row per transcript (the columns a run writes alike on every row of a transcript)."""
    return rows.drop_duplicates("transcript_id")


def manual_set_aside(rows: Any) -> tuple[int, int]:
    """Manual compactions in these logs, and the transcripts that hold them (set aside from a settings sweep)."""
    if "manual_compactions" not in rows.columns:
        return 0, 0
    t = per_transcript(rows)
    return int(t["manual_compactions"].sum()), int((t["manual_compactions"] > 0).sum())


def reproduction(rows: Any, self_check: tuple[int, float, float] | None) -> Condition:
    """Whether the tool's strategy lands where the log's automatic compactions are, and the as-it-ran replay
    matches the log after them (on the comparable transcripts)."""
    if "trigger_checked" not in rows.columns:
        return Condition("reproduces", False, "this run predates the check of the tool's own compactions: rerun it")
    t = per_transcript(comparable(rows))
    auto, checked, within = (int(t[c].sum()) for c in ("auto_compactions", "trigger_checked", "trigger_within"))
    calibrated = int(t.loc[t["trigger_checked"] > 0, "window_calibrated"].sum()) if "window_calibrated" in t else 0
    if checked == 0:
        if auto:
            return Condition("reproduces", False, f"your logs' {auto:,} automatic compaction{'s' * (auto != 1)} "
                             "cannot be placed (no per-call token usage recorded): the strategy's trigger is unchecked")
        text = "no automatic compaction in these logs to check the strategy against"
        aside = per_transcript(rows)
        aside = aside[aside["manual_compactions"] > 0] if "manual_compactions" in aside else aside.iloc[:0]
        a_checked, a_within = int(aside["trigger_checked"].sum()), int(aside["trigger_within"].sum())
        if a_checked:  # the tool's automatic compactions sit only beside manual ones: said, not counted
            text = (f"no automatic compaction in the transcripts compared; in those set aside for a manual compaction, "
                    f"{a_within:,} of {a_checked:,} within 2 calls")
    else:
        share = within / checked
        how = (f" after calibrating the window from the log on {calibrated:,} transcript{'s' * (calibrated != 1)}"
               if calibrated else "")
        said = f"{within:,} of {checked:,} of your tool's automatic compactions within 2 calls{how}"
        if share < REPRODUCE_SHARE:
            return Condition("reproduces", False,
                             f"the strategy does not reproduce your tool's compactions on these logs ({said})")
        text = f"reproduces your tool's compactions ({said})"
    guessed = _guessed(t)
    if guessed * 2 > len(t):
        return Condition("reproduces", False, f"the window of {guessed:,} of {len(t):,} transcripts is not in the "
                         "tool's own model table and none of their compactions shows it (see results: window_source): "
                         "their figures rest on a guess")
    if guessed:
        text += (f"; {guessed:,} transcript{'s' * (guessed != 1)} at a window no table gives and no compaction shows "
                 "(their figures rest on a guess)")
    if self_check is not None and self_check[1] > SELF_CHECK_MARGIN:
        return Condition("reproduces", False, f"the replay of as it ran is {self_check[1]:.1%} off the log's next "
                         f"prompt after its compactions (median; the margin is {SELF_CHECK_MARGIN:.0%})")
    if self_check is not None:
        text += f"; as it ran within {self_check[1]:.1%} of the log's next prompt (median)"
    return Condition("reproduces", True, text)


def _guessed(t: Any) -> int:
    """Transcripts whose window the tool's table does not give and whose own compactions did not calibrate it."""
    if "window_known" not in t.columns:
        return 0
    unknown = ~t["window_known"].astype(bool)
    if "window_calibrated" in t.columns:
        unknown &= ~t["window_calibrated"].astype(bool)
    return int(unknown.sum())


def reach(rows: Any, label: str) -> Condition:
    """At least :data:`MIN_REACH` transcripts on which ``label`` acted."""
    mine = comparable(rows)
    mine = mine[mine["strategy"] == label]
    acted = int((mine["first_action_step"] >= 0).sum()) if "first_action_step" in mine else 0
    if acted < MIN_REACH:
        return Condition("reach", False, f"too few transcripts reach the threshold ({acted} of {MIN_REACH} needed)")
    return Condition("reach", True, f"{acted:,} of {len(mine):,} transcripts reach it")


def better(change: Any, self_check: tuple[int, float, float] | None, have_recorded: bool) -> Condition:
    """The paired change of effective savings against as it ran: significant, positive, above the replay's error."""
    from compbench.decide.headline import HEADLINE

    if not have_recorded:
        return Condition("better", False, f"as it ran is not in this run (add --strategy {RECORDED})")
    d = change.diffs.get(HEADLINE) if change is not None else None
    if d is None or math.isnan(d.value) or not d.n:
        return Condition("better", False, "no transcript to compare with as it ran")
    shown = change.text()
    if not d.significant or d.value <= 0:
        return Condition("better", False, f"not better than as it ran ({shown})")
    error = self_check[1] if self_check is not None else 0.0
    if d.lo <= error:
        return Condition("better", False, f"its gain's lower bound ({d.lo * 100:+.1f} pp) is within the replay's own "
                         f"error ({error:.1%}, the self-check's median)")
    return Condition("better", True, f"better than as it ran: {shown}")


def numeric(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def interior(setting: Setting, best: Any, tried: Sequence[Any]) -> Condition:
    """The best value is between values tried, or at the tool's own limit."""
    nums = [x for x in (numeric(v) for v in tried) if x is not None]
    b = numeric(best)
    if b is None or len(nums) < 2:
        return Condition("interior", True, "a switch: every value tried")
    lo, hi = min(nums), max(nums)
    if lo < b < hi:
        return Condition("interior", True, f"between values tried ({_values(setting, nums)})")
    limit = setting.limits()
    if limit is not None and (b <= limit[0] or b >= limit[1]):
        return Condition("interior", True, f"at the tool's limit ({_value(setting, b)})")
    side = "lowest" if b <= lo else "highest"
    bound = ""
    if limit is not None:
        bound = f"; the tool accepts {'down' if side == 'lowest' else 'up'} to " + _value(
            setting, limit[0] if side == "lowest" else limit[1])
    return Condition("interior", False, f"the best value is at the edge of the values tried ({_value(setting, b)}, "
                     f"the {side} of {_values(setting, nums)}{bound}): the best may lie beyond")


def _value(setting: Setting, v: float) -> str:
    return setting.shown(int(v) if float(v).is_integer() else v)


def _values(setting: Setting, nums: Sequence[float]) -> str:
    return ", ".join(_value(setting, v) for v in sorted(set(nums)))


def honoured(setting: Setting, versions: Sequence[str]) -> tuple[Condition, tuple[str, ...]]:
    """Whether the logs' versions read the setting; the versions that do not, named."""
    if setting.honoured is None:
        return Condition("honoured", True, "read by every version in these logs, as far as its source shows"), ()
    missed: dict[str, str] = {}
    for v in sorted(set(versions)):
        why = setting.honoured(v) if v else ""
        if why:
            missed[v] = why
    if not missed:
        return Condition("honoured", True, "read by the versions in these logs"), ()
    n = sum(1 for v in versions if v in missed)
    shown = "; ".join(f"{v}: {why}" for v, why in list(missed.items())[:3])
    if n * 2 > len(versions):
        return Condition("honoured", False, f"most of these logs' versions do not read it ({shown})"), ()
    return Condition("honoured", True, "read by most versions in these logs"), (f"not read by {shown}",)


def caveats(setting: Setting, rows: Any) -> tuple[str, ...]:
    """The setting's known limits on these logs (per version and window), each once, with how many transcripts."""
    if setting.caveat is None:
        return ()
    t = per_transcript(rows)
    counts: dict[str, int] = {}
    for v, w in zip(t.get("tool_version", [""] * len(t)), t["window"], strict=True):
        text = setting.caveat(str(v or ""), int(w))
        if text:
            counts[text] = counts.get(text, 0) + 1
    return tuple(f"{text} ({k} of {len(t)} transcripts)" for text, k in counts.items())


def expected(compactions: Any, label: str, transcripts: Sequence[str]) -> int | None:
    """Where ``label`` compacted on these logs (the median of its first compactions' tokens): what the user's
    next logs should show once the setting is in."""
    if compactions is None or compactions.empty:
        return None
    c = compactions[(compactions["strategy"] == label) & compactions["transcript_id"].isin(list(transcripts))
                    & compactions["ok"]]
    if c.empty:
        return None
    first = c.sort_values(["transcript_id", "seq"]).drop_duplicates("transcript_id")["tokens_before"]
    return int(first.median())


def check_line(label: str, near: int | None, source: str) -> str:
    """What the next logs should show, and the command that checks it."""
    where = f"near {near:,} tokens" if near else "where this configuration does"
    return (f"after this, your {source} sessions should compact {where}; `compbench check-setting LOGS --setting "
            f"{label}` on your next logs checks it took effect")


def tool_settings(tool: Tool) -> list[Setting]:
    """The settings a default run sweeps."""
    return [s for s in tool.settings if s.sweep]
