"""``compbench.sdk.tools`` — The real tool a strategy reproduces, declared once on ``@strategy(..., tool=Tool(...))``.

A user brings their own logs to learn what *their* tool's compaction costs them and what to change. That
needs three things of the strategy that reproduces the tool, and every command reads them from this one
declaration (``fidelity``, ``compare --by source``, the report, the run), never from a table of its own:

* **which logs are the tool's** (``formats``: the ``Transcript.source`` values its logs import as) and
  whether the strategy is the one a default run sets beside them (``own``; a variant such as Gemini CLI's
  masking alone says ``own=False``);
* **which preset each log runs at**: with no preset in the spec, an own-tool strategy replays each log at the
  preset of the version that log recorded (``version_preset``), the newest preset (``newest``) for a version
  past the last known, for another tool's logs, or where the log records none; a strategy may read more of a
  log than its version (``log_preset``: the condenser an OpenHands run recorded, Kilo Code's rules);
* **what a user can change**: each parameter a user really sets, named as they write it (an environment
  variable, a config key in a file), with the tool's default, how the tool treats a value (clamps, ignores),
  the exact line to paste, and the values a default run's settings sweep tries (:class:`Setting`).

The rest serves ``compbench fidelity`` (each strategy against its tool's recorded compactions): the versions
each preset models in words, why a compaction recorded without a trigger was a user's ``/compact``, the
configurations that fit what a log records, what its compactions are called where they are no ``/compact``
(``manual_name``, ``auto_name``), and ``designed``: a tool's behaviour that a generic flag would misname
(Goose summarizing one tool pair a turn is its design, not a degenerate strategy).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.data.transcript import Transcript

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def version_tuple(version: str) -> tuple[int, ...] | None:
    """``2.1.49`` -> (2, 1, 49); ``0.142`` -> (0, 142, 0); None for a text with no version in it."""
    m = _VERSION.search(version or "")
    if m is None:
        return None
    return tuple(int(x or 0) for x in m.groups())


# how a preset's why introduces the settings the log itself showed the tool ran with (Tool.log_settings): a run's
# caveats find the sessions so configured by it in ``preset_source``
FROM_LOG = "read off the log"


@dataclass(frozen=True)
class Accepts:
    """The values a tool takes for a setting, in the parameter's units, and what it does with another
    (``outside``, in words, with its source). ``refuse``: the tool ignores such a value, so a configuration
    that sets it replays as if unset — almost surely a typo, refused before a run; else (the tool clamps it,
    or it turns the feature off) the replay does as the tool does and the user is warned. ``unset``: the
    parameter's value for "not set", always taken."""

    lo: float | None = None
    hi: float | None = None
    open_lo: bool = False
    open_hi: bool = False
    outside: str = ""
    refuse: bool = True
    unset: float | None = None

    def holds(self, value: float) -> bool:
        if self.unset is not None and value == self.unset:
            return True
        if self.lo is not None and (value <= self.lo if self.open_lo else value < self.lo):
            return False
        return not (self.hi is not None and (value >= self.hi if self.open_hi else value > self.hi))

    def text(self) -> str:
        """The range as a reader writes it: ``(0, 100]``, ``[100,000, 1,000,000]``, ``>= 20``."""
        def num(x: float) -> str:
            return f"{x:,.0f}" if float(x).is_integer() and abs(x) >= 1000 else f"{x:g}"

        if self.lo is not None and self.hi is not None:
            return f"{'(' if self.open_lo else '['}{num(self.lo)}, {num(self.hi)}{')' if self.open_hi else ']'}"
        if self.lo is not None:
            return f"{'>' if self.open_lo else '>='} {num(self.lo)}"
        return f"{'<' if self.open_hi else '<='} {num(self.hi)}" if self.hi is not None else "any value"


@dataclass(frozen=True)
class Setting:
    """One parameter of the strategy as the tool's user writes it.

    ``line`` is what they paste, with ``{value}`` where the value goes (``export
    CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={value}``, a TOML line, a JSON fragment); ``written`` turns the
    parameter's value into what they write when the two differ (a fraction the tool takes as a percentage);
    ``sweep`` holds the parameter values a default run tries for the tool's logs (empty: not swept);
    ``note`` says how the tool treats a value (what it clamps, ignores or refuses), with its source;
    ``accepts`` the same as a range a run checks a configuration against before it starts (:class:`Accepts`).

    What advice needs beyond the line (compbench.decide.advice): ``where`` names the file and key path (or the
    shell) exactly; ``limits()`` the closed range of values ``accepts`` admits (a best value at its end is at
    the tool's limit, not at the edge of what was tried); ``honoured(version)`` why a recorded version does not
    read the setting ("" where it does); ``caveat(version, window)`` a known limit of the setting for logs of
    that version and window ("" where none); ``line_for(source, version)`` the line and place a log's tool and
    version read, where they differ (OpenHands V0's ``config.toml`` against V1's settings); ``unset_at`` where
    the parameter's "unset" value (0 or None: the tool's own default) sits among the values tried, for a
    setting whose default is computed (Claude Code's override, unset, is about 93% of the window less the
    reserve)."""

    param: str
    name: str
    where: str
    default: str
    line: str
    sweep: tuple[Any, ...] = ()
    note: str = ""
    written: Callable[[Any], str] | None = None
    accepts: Accepts | None = None
    honoured: Callable[[str], str] | None = None
    caveat: Callable[[str, int], str] | None = None
    # (source, version) -> (line, where); None: ``line`` and ``where``
    line_for: Callable[[str, str], tuple[str, str] | None] | None = None
    unset_at: float | None = None  # where the parameter's "unset" value (0, None) sits among the values, in its units

    def limits(self) -> tuple[float, float] | None:
        """The closed range of values to try that ``accepts`` admits (an open end moved in by 1% of the span):
        where a settings sweep stops widening, and a best value there is at the tool's limit. None without both
        ends."""
        a = self.accepts
        if a is None or a.lo is None or a.hi is None:
            return None
        inset = (a.hi - a.lo) * 0.01
        return a.lo + (inset if a.open_lo else 0.0), a.hi - (inset if a.open_hi else 0.0)

    def shown(self, value: Any) -> str:
        """``value`` as the user writes it."""
        return self.written(value) if self.written is not None else plain(value)

    def paste_for(self, value: Any, version: str, source: str = "") -> tuple[str, str]:
        """The line that sets ``value`` in the tool that wrote ``source`` logs at ``version``, and where it goes."""
        found = self.line_for(source, version) if self.line_for is not None else None
        line, where = found if found is not None else (self.line, self.where)
        return line.replace("{value}", self.shown(value)), where

    def paste(self, value: Any) -> str:
        """The exact line that sets ``value`` in the tool."""
        shown = self.written(value) if self.written is not None else plain(value)
        return self.line.replace("{value}", shown)


def plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class Tool:
    """The real tool a strategy reproduces (see the module docstring). A plug-in sets the first few; the rest
    serve ``compbench fidelity`` on the tool's real logs.

    - ``name``: as its users call it; ``formats``: the ``Transcript.source`` values of its logs (those an
      importer writes: ``compbench datasets inspect`` shows them); ``own``: the strategy a default run sets
      beside those logs (False for a variant, and never for an example);
    - ``newest``: the preset of a version past the last known, of another tool's log, of a log without a
      version; ``version_preset(version)``: the preset of a recorded version (None: ``newest``);
      ``log_preset(transcript)``: a preset read off more of the log than its version, with why, or None;
      ``log_settings(transcript)``: settings the log shows the tool ran with (parameter -> value as spec text,
      with why), or None (Claude Code's auto-compact window, read off a 1M-window session's own compactions);
      a user's override of any of them replaces them all (theirs is a setting to try, not the log's);
      ``preset_versions``: each preset's versions, in words (``fidelity`` prints them);
    - ``settings``: what users set (:class:`Setting`), each naming a parameter of the strategy;
    - ``manual_compaction(tokens_before, window)``: why a compaction recorded without a trigger, below what
      the tool compacts at by itself, was a user's ``/compact`` ("" if it could have been automatic);
      ``recorded_preset(source, layout)``: the preset that models the tool as a log's recorded compaction
      shows it; ``fidelity_specs(transcript)``: the ``(preset label, spec)`` configurations ``fidelity``
      replays a log at; ``own_count``: the tool's trigger counts with its own estimate, so a log without
      per-call usage still places it;
    - ``designed``: flag name -> why the tool's behaviour is its design (``compare`` says so instead of the
      flag); ``manual_name`` / ``auto_name``: what its compactions are called where they are no ``/compact``.
    """

    name: str
    formats: tuple[str, ...]
    own: bool = True
    newest: str | None = None
    version_preset: Callable[[str], str | None] | None = None
    log_preset: Callable[[Transcript], tuple[str | None, str] | None] | None = None
    log_settings: Callable[[Transcript], tuple[dict[str, str], str] | None] | None = None
    preset_versions: Mapping[str, str] = field(default_factory=dict)
    settings: tuple[Setting, ...] = ()
    manual_compaction: Callable[[int, int], str] | None = None
    fidelity_specs: Callable[[Transcript], list[tuple[str, str]]] | None = None
    recorded_preset: Callable[[str, str], str | None] | None = None
    own_count: bool = False
    designed: Mapping[str, str] = field(default_factory=dict)
    # what fidelity calls the tool's compactions when not a /compact and an automatic trigger (aider's summaries)
    manual_name: str = ""
    auto_name: str = ""

    def writes(self, source: str) -> bool:
        return source in self.formats

    def preset_for(self, t: Transcript, presets: Sequence[str]) -> tuple[str | None, str]:
        """The preset a default run replays ``t`` at, and why, in words (``preset_source``).

        The tool's own log: what the log shows of its configuration (``log_preset``), else the preset of
        the version it recorded; a version past the last the presets model, one that cannot be read, none
        at all, or another tool's log: the newest preset. ``None``: the parameters' own defaults."""
        newest = self.newest if self.newest in presets else None
        if not self.writes(t.source):
            return newest, f"a {t.source} log, not {self.name}'s: {self._newest(newest)}"
        if self.log_preset is not None:
            found = self.log_preset(t)
            if found is not None:
                return found
        version = str(t.meta.get("tool_version") or "")
        if not version:
            return newest, f"no {self.name} version recorded: {self._newest(newest)}"
        if version_tuple(version) is None:
            return newest, f"{self.name} version {version!r} cannot be read: {self._newest(newest)}"
        picked = self.version_preset(version) if self.version_preset is not None else None
        if picked is None or (picked not in presets and picked != "seed"):
            return newest, f"{self.name} {version}: no preset models it, {self._newest(newest)}"
        # "seed" names the parameters' own defaults (the seeds' description), a preset no table lists
        return (None if picked == "seed" and picked not in presets else picked), \
            f"{self.name} {version} recorded: the preset that models it"

    def _newest(self, newest: str | None) -> str:
        return f"the newest preset ({newest})" if newest else "the strategy's defaults"

    def setting(self, param: str) -> Setting | None:
        return next((s for s in self.settings if s.param == param), None)


def sweep_specs(name: str, tool: Tool) -> list[tuple[str, Setting, Any]]:
    """The configurations of a default run's settings sweep for ``tool``: one per swept value of each
    setting, the rest at the log's own preset (``NAME:param=value``)."""
    return [(f"{name}:{s.param}={plain(v)}", s, v) for s in tool.settings for v in s.sweep]
