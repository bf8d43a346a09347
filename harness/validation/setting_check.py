"""``compbench.validation.setting_check`` — Did a setting take effect? The user's next logs against the configuration
that was advised, and against the tool's default.

Advice ends on a figure the next logs should show ("your sessions should compact near 110,000 tokens"). A user who
pastes the line and works on can check it: each automatic compaction their tool recorded since is compared, as
``compbench fidelity`` and every run compare them (:mod:`compbench.run.trigger`), with where the advised
configuration compacts and where the tool's default does. Where the advised configuration lands within 2 calls of
at least 90% of them and the default does not, the setting took effect; where the default does and the advised
one does not, the tool did not read it (a misspelt key, a file not read, a version that ignores it); where both
land alike the logs cannot tell them apart (the sessions never reached the point where they differ).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from compbench.data.transcript import Transcript
from compbench.errors import UsageError
from compbench.run import trigger

SHARE = 0.9  # of the automatic compactions a configuration must land within 2 calls of


@dataclass(frozen=True)
class SettingCheck:
    """The new logs of the setting's tool against the advised configuration and the default."""

    tool: str
    setting: str  # the configuration checked
    default: str
    transcripts: int
    automatic: int
    manual: int
    unchecked: int
    advised_within: int
    default_within: int
    checked: int
    recorded_tokens: int | None  # the median of the real automatic compactions' recorded counts

    @property
    def outcome(self) -> str:
        """``took effect``, ``not in effect``, ``cannot tell`` or ``not reproduced`` (neither fits)."""
        if not self.checked:
            return "cannot tell"
        a, d = self.advised_within / self.checked, self.default_within / self.checked
        if a >= SHARE and d >= SHARE:
            return "cannot tell"
        if a >= SHARE:
            return "took effect"
        if d >= SHARE:
            return "not in effect"
        return "not reproduced"

    def text(self) -> str:
        head = (f"{self.tool}: {self.transcripts:,} transcript{'s' * (self.transcripts != 1)}, {self.automatic:,} "
                f"automatic compaction{'s' * (self.automatic != 1)} ({self.manual:,} manual set aside"
                + (f", {self.unchecked:,} without usage to place them" if self.unchecked else "") + ")")
        if not self.checked:
            return head + ": no automatic compaction to check (the sessions may not have reached the threshold yet)"
        where = f"; recorded at {self.recorded_tokens:,} tokens (median)" if self.recorded_tokens else ""
        said = {"took effect": "the setting took effect",
                "not in effect": "the setting is NOT in effect: your tool compacted where its default does (check "
                                 "the file and key the advice named, and that your version reads it)",
                "cannot tell": "cannot tell: the setting and the default compact at the same calls on these logs",
                "not reproduced": "neither the setting nor the default lands where your tool compacted (another "
                                  "setting, a window, or a version the presets do not model)"}[self.outcome]
        return (f"{head}: {self.setting} lands within 2 calls of {self.advised_within} of {self.checked}, the default "
                f"({self.default}) of {self.default_within}{where}: {said}")


def check_setting(transcripts: Iterable[Transcript], spec: str, tokenizer: str = "o200k_base") -> SettingCheck:
    """``spec`` (``claude-code:autocompact_pct_override=60``) against the compactions its tool recorded in
    ``transcripts``; the other tools' logs are passed over."""
    from compbench.measure.tokens import TokenCounter
    from compbench.run.engine import conditioned
    from compbench.run.missing_usage import complete
    from compbench.run.spec import RunSpec
    from compbench.sdk.registry import resolve
    from compbench.summarizers.extractive import ExtractiveSummarizer

    advised = resolve(spec)
    tool = advised.info.tool
    if tool is None or not advised.overrides:
        raise UsageError(f"--setting {spec!r}: expected a tool's strategy with the setting advised "
                         "(NAME:param=value, as the verdict names it)")
    default = resolve(advised.name)
    run = RunSpec(strategies=(advised.name,), tokenizer=tokenizer)
    counter, quiet = TokenCounter(tokenizer), ExtractiveSummarizer()
    n = automatic = manual = unchecked = a_within = d_within = checked = 0
    tokens: list[int] = []
    for t in transcripts:
        if not tool.writes(t.source):
            continue
        n += 1
        t = complete(t)[0]
        t, config, _, session = conditioned(run, t, counter.scoped(t))
        found = trigger.points(t, config.limits)
        a = trigger.check(t, advised.for_log(t)[0], config, session, quiet, found)
        d = trigger.check(t, default.for_log(t)[0], config, session, quiet, found)
        automatic, manual, unchecked = automatic + a.automatic, manual + a.manual, unchecked + a.unchecked
        checked += a.checked
        a_within, d_within = a_within + a.within, d_within + d.within
        tokens += [t.compactions[p.n].tokens_before or 0 for p in found[0] if t.compactions[p.n].tokens_before]
    if not n:
        raise UsageError(f"no {tool.name} log among the transcripts given")
    return SettingCheck(tool.name, advised.label, default.label, n, automatic, manual, unchecked, a_within, d_within,
                        checked, int(statistics.median(tokens)) if tokens else None)
