"""``compbench.reports.glossary`` — Every figure and word the report shows, defined once (the metrics' definitions come
from :data:`compbench.decide.compare.METRICS`, the same text the commands' help prints)."""

from __future__ import annotations

from compbench.decide.metrics import METRICS
from compbench.decide.ranking import TIERS

TERMS: tuple[tuple[str, str], ...] = (
    ("acted", "transcripts on which the strategy changed the model's view at least once (a compaction or a "
              "prune); before its first action a strategy's replay is the reference's"),
    ("calls over the window (refused calls, overflows)",
     "model calls whose prompt exceeds the simulated window: a real API refuses them. Any such call ranks a "
     "strategy below every strategy without one, in every table and chart"),
    ("tier", f"the ranking rule's groups, in order: {', '.join(TIERS)}; see the leaderboard's rule"),
    ("degenerate", "compacting on at least half of the calls: reserves at or above the window, nothing can be kept"),
    ("threshold beyond the window", "inferred from behaviour: the strategy let calls exceed the window before it "
                                    "first acted (a preset whose trigger lies above the window never acts in time)"),
    ("identical configurations", "configurations of one strategy whose every transcript's figures are the same: "
                                 "the parameters that differ change nothing on this dataset"),
    ("frontier", "the Pareto frontier of net savings against needed-fact recall among sound strategies: none "
                 "saves more without losing recall"),
    ("need", "a later step where the recorded agent uses a fact it was given (a user's instruction, a path or error "
             "a tool printed) that neither its previous step nor anything since mentioned"),
    ("met verbatim / carried by a summary", "a met need whose fact was kept word for word (the strategy's doing) "
                                            "or present only in a summary (the summarizer's doing)"),
    ("missed", "needs whose fact was not in the prompt when the agent used it"),
    ("recall range", "from summaries that carry nothing (recall kept verbatim) to summaries that also copy their "
                     "span's paths, commands and errors (recall if summaries also copied)"),
    ("retention at a compaction", "the share of the facts received so far that are still in view right after it"),
    ("facts lost", "facts in view before a compaction and gone after it"),
    ("guard flags", "a summary larger than what it replaced; a user constraint dropped; a path or identifier in "
                    "the summary found nowhere in what it replaced (fabricated)"),
    ("cache re-written", "tokens the next call writes to the prompt cache because the compaction broke the cached "
                         "prefix, and their price over reading them from the cache"),
    ("peak context", "the largest prompt of any call, in tokens (window and hidden overhead included)"),
    ("few", "a figure resting on fewer than 5 transcripts (or sessions): its interval means little and it is "
            "never called significant"),
    ("95% interval", "a percentile bootstrap over sessions (a sub-agent with its parent), 10,000 resamples, "
                     "seeded; a paired difference resamples both strategies together"),
    ("pp", "percentage points: the difference of two percentages"),
    ("median (per transcript)", "the headline figure of the median transcript, beside the pooled one: pooled "
                                "figures are ratios of sums, so a few long transcripts can carry them while the "
                                "typical transcript saves nothing"),
    ("below bar", "misses the verdict's first objective's bar (by default needed-fact recall ≥ 90%): ranked after the "
                  "strategies of its group that meet it, so the leaderboard's first row is the verdict's pick"),
    ("on the edge", "the pick's 95% interval crosses a bar: on other transcripts it may miss it"),
    ("re-acquisition (what each loses)", "the tokens re-acquiring what the view lost adds over the input of none, "
                                         "pooled: re-reads by the rules fitted on real compactions (an edit reads "
                                         "back about half of what the agent had of the file, a path it only names "
                                         "a tenth, orientation a few percent), the re-reads they caused beyond their "
                                         "own rate"),
    ("rank: recall / re-acq.", "the strategy's rank by needed-fact recall (highest first) and by re-acquisition "
                               "(least first); marked where they are far apart (a quarter of the ranked strategies, "
                               "two places at least): the two loss figures disagree on it"),
    ("fact kinds", "files and artifacts (paths the agent touched), specifics (errors, commands, tests, URLs), "
                   "decisions and constraints (what the user set), pending work (what remains to be done)"),
)


def entries() -> list[tuple[str, str]]:
    return [(f"{m.title} ({m.name})", m.doc) for m in METRICS] + list(TERMS)
