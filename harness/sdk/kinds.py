"""``compbench.sdk.kinds`` — The words a run's rows carry from the layer that writes them to the layers that read
them: the baseline's and the reference's labels, the settings sweep's mark (``swept``), the recorded strategy's
compaction keys, a widening round's batch keys.

Each was a string literal written in one module (the recorded strategy, the run engine, the run writer) and
matched as a literal in others (the engine, measure, decide, the CLI, the reports); a typo in either place
matched nothing and said nothing. They live here, in the SDK, because it is the lowest layer every writer can
import: the recorded strategy writes :data:`RECORDED_META` and strategies speak the SDK only
(``tools/layers.py``). The values are the ones run directories already hold: changing one changes every
stored run, so none may change.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

# -- configuration labels the verdicts treat apart (results ``strategy`` and ``name``)
RECORDED: Final = "recorded"  # compbench.strategies.recorded: each log's own compactions, the tool as it ran
REFERENCE: Final = "none"  # compbench.strategies.none: never acts, the reference every saving is measured from

# -- the results ``swept`` column: whether a row is the settings sweep's (replayed on its own tool's logs only);
# run format 4 renamed it from ``settings`` (compbench.store.manifest upgrades older runs)
SWEPT: Final = "swept"  # the column's name
Swept: TypeAlias = Literal["sweep", ""]
SWEEP: Final[Swept] = "sweep"
NOT_SWEPT: Final[Swept] = ""

# -- compaction ``meta`` keys the recorded strategy writes (its trigger; the prompt the log recorded after)
RECORDED_META: Final = "recorded"
INFERRED_META: Final = "inferred"  # a compaction the log does not mark: found at a fall of the recorded prompt

# -- a widening round's committed batch (compbench.run.write): the configurations it adds, the transcripts done
WIDENED: Final = "widened"
WIDENED_IDS: Final = "widened_ids"
