"""``compbench.run.spec`` — What determines a run's results: the spec its manifest records and a resumed run reads
back."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from compbench.measure.token_correction import in_use
from compbench.sdk.session import ModelLimits

# summarizer options a manifest may keep: endpoints and folders, never credentials
SAFE_SUMMARIZER_OPTIONS = ("api_base", "cache_dir", "retries", "temperature", "timeout_s")


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's results (and goes into its manifest)."""

    strategies: tuple[str, ...]
    # None: each transcript's own window, the one its tool used (models.effective_limits)
    limits: ModelLimits | None = None
    summarizer: str = "calibrated"
    tokenizer: str = "o200k_base"
    message_overhead: int = 4
    # compbench.measure.token_correction: the recorded model family's ("auto"), "none", or a family
    token_correction: str = "auto"
    # None: each transcript's own hidden overhead (a fixed part and a growth rate, calibrated on its
    # recorded usage, else its agent's defaults: compbench.measure.overhead)
    system_tokens: int | None = 0
    model: str | None = None
    price_model: str | None = None  # None: each transcript at its recorded model (compbench.measure.pricing)
    # None: each summary request at the model that makes it (aider's weak, Goose's fast, else the session's)
    summarizer_model: str | None = None
    seed: int = 0
    gold: str | None = None  # a gold_facts.jsonl file
    prices: dict[str, float] | None = None  # dollars per token, overriding litellm's table
    summarizer_options: dict[str, Any] = field(default_factory=dict)
    # Anthropic's 5-minute or 1-hour cache ("5m" | "1h"), "none": never expires; "auto": each transcript's recorded
    # lifetime, else 5 minutes
    cache_ttl: str = "auto"
    # the configurations of the settings sweep (labels among ``strategies``): each replays only its tool's logs
    settings: tuple[str, ...] = ()
    # the dataset's template lines per source (compbench.data.boilerplate.Templates.to_json())
    boilerplate: dict[str, Any] = field(default_factory=dict)
    # the transcripts replayed: a filter of compbench.data.select ("" every one of the dataset)
    select: str = ""
    keep_empty: bool = False  # sessions with no reply replayed too (compbench.data.dataset.is_empty)

    def manifest(self) -> dict[str, Any]:
        d = asdict(self)
        d["limits"] = asdict(self.limits) if self.limits is not None else None


        d["token_corrections"] = in_use(self.tokenizer, self.token_correction)  # family -> what was applied
        # options can hold an API key or endpoint credentials: keep only what is safe and relevant
        d["summarizer_options"] = {k: v for k, v in sorted(self.summarizer_options.items())
                                   if k in SAFE_SUMMARIZER_OPTIONS}
        return d

    @classmethod
    def from_manifest(cls, d: Mapping[str, Any]) -> RunSpec:
        """The spec a manifest recorded (what :meth:`manifest` wrote; secrets were never in it), at this run format
        (:func:`compbench.store.manifest.upgrade_spec` gave an older one the options added since)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in d.items() if k in fields}
        values["strategies"] = tuple(values["strategies"])
        values["settings"] = tuple(values["settings"])
        values["limits"] = ModelLimits(**values["limits"]) if values.get("limits") else None
        return cls(**values)


def settings_sweep(labels: tuple[str, ...], sources: Iterable[str]) -> tuple[str, ...]:
    """The configurations a run adds for the settings users of the tools present can change: for each own-tool
    strategy in ``labels`` replayed at its logs' own presets (named without a preset or overrides) whose tool
    wrote some of ``sources``, one configuration per swept value of each of its settings (compbench.sdk.tools);
    a value the tool's newest preset already has is left out (it would repeat the strategy's own row)."""
    from compbench.sdk.registry import resolve
    from compbench.sdk.tools import sweep_specs

    present = set(sources)
    out: list[str] = []
    for label in labels:
        c = resolve(label)
        tool = c.info.tool
        if not c.auto or c.overrides or tool is None or not present & set(tool.formats):
            continue
        for spec, setting, value in sweep_specs(c.name, tool):
            if getattr(c.params, setting.param, object()) == value:
                continue
            made = resolve(spec).label
            if made not in labels and made not in out:
                out.append(made)
    return tuple(out)


def with_settings(spec: RunSpec) -> RunSpec:
    """``spec`` with the settings sweep of :func:`settings_sweep` for the tools its dataset holds (the boilerplate
    scan counted each source's transcripts): what ``compbench run`` and ``make demo`` replay by default."""
    sweep = settings_sweep(spec.strategies, (spec.boilerplate.get("transcripts") or {}).keys())
    return dataclasses.replace(spec, strategies=spec.strategies + sweep, settings=spec.settings + sweep)
