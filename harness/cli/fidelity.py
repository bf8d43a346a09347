"""``compbench.cli.fidelity`` — ``compbench fidelity``: strategies against the compactions the real tools recorded."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from compbench.cli.options import SKIP_LINES_HINT, TOKENIZER, broken_lines, refuse_runs

# the default view (it fits 160 columns): what a reader compares first; --wide and JSON have every column
COMPACT = ("tool", "transcript", "n", "trigger", "preset", "step real → ours", "tokens real → ours", "kept set",
           "facts kept: real,cal.,extr.", "re-acq p→o")


def compact_rows(rows: Sequence[Any]) -> list[list[str]]:
    """The rows of :data:`COMPACT`: real and ours side by side, the transcript id clipped in the middle."""
    from compbench.cli.compare_view import clip

    def n(v: int | None) -> str:
        return "–" if v is None else f"{v:,}"

    return [[r.tool, clip(r.transcript, 18), str(r.n), r.trigger, r.preset, f"{r.real_step} → {n(r.our_step)}",
             f"{n(r.real_tokens)} → {n(r.our_tokens)}",
             "–" if r.kept_jaccard is None else f"{r.kept_jaccard:.2f}",
             f"{r.kept_real},{r.kept_calibrated},{r.kept_extractive}",
             f"{n(r.reacq_predicted)}→{n(r.reacq_observed)}"] for r in rows]


ITEMS = ("key", "why", "had", "latest", "predicted", "observed")


SMALL_ITEM = 100  # tokens: items predicted and observed below this are summed up in one line


def items_text(found: Sequence[Any], fmt: str) -> str:
    """Each real compaction's heading (predicted, observed, natural, excess) and its items' table, largest
    first; the items under :data:`SMALL_ITEM` tokens either way in one line."""
    from compbench.cli.render import table
    out = []
    for d in found:
        out.append(f"{d.tool} {d.transcript} #{d.n} ({d.trigger}, {d.split}): predicted {d.reacq_predicted:,} "
                   f"(orientation {d.reacq_orientation:,}), observed {d.reacq_observed:,}, natural "
                   f"{d.reacq_natural:,} (what agents re-read in {d.steps_after} steps where nothing was compacted; "
                   f"this session {d.natural_rate:,.0f} a step before it), excess {d.reacq_excess:,}")
        big = [x for x in d.items if max(x.predicted, x.observed) >= SMALL_ITEM]
        small = [x for x in d.items if max(x.predicted, x.observed) < SMALL_ITEM]
        if big:
            out.append(table(list(ITEMS), [[x.key, x.why, f"{x.size:,}", f"{x.latest:,}", f"{x.predicted:,}",
                                             f"{x.observed:,}"] for x in big], fmt))
        if small:
            out.append(f"  and {len(small)} items under {SMALL_ITEM} tokens: predicted "
                       f"{sum(x.predicted for x in small):,}, observed {sum(x.observed for x in small):,}")
        out.append("")
    return "\n".join(out).rstrip("\n")


@click.command(short_help="Each strategy against the compactions the real tools recorded.")
@click.argument("datasets", nargs=-1)
@click.option("--format", "fmt", default="table", show_default=True, type=click.Choice(["table", "markdown", "json"]))
@TOKENIZER
@click.option("--out", "run_dir", type=click.Path(file_okay=False),
              help="Also write fidelity.json into this (run) directory, for the HTML report.")
@click.option("--on-error", type=click.Choice(["fail", "skip", "skip-lines"]), default="fail", show_default=True,
              help="For raw files, as `datasets import`: fail on the first unreadable file or line; skip "
                   "unreadable files; skip-lines: also keep a file with broken lines, skipping only those.")
@click.option("--wide", is_flag=True, help="Every column (calibration, window source, cause): lines as wide as they "
                                           "need; the default view fits 160 columns.")
@click.option("--items", is_flag=True, help="Instead of the table, each real compaction's re-acquisition item by item: "
                                            "key, why it is predicted, what the agent had of it, its latest delivery, "
                                            "predicted and observed tokens (JSON with --format json).")
def fidelity(datasets: tuple[str, ...], fmt: str, tokenizer: str, run_dir: str | None, on_error: str,
             wide: bool, items: bool) -> None:
    """Compare each strategy with the tool's own compactions in DATASETS (default: the bundled samples;
    pass ../shared/transcripts ../shared/real-compactions to include the logs that cannot be bundled).

    Each row says which window the tool used and where that figure comes from. Per real compaction with
    a readable summary it also prints the facts of the summarized span kept by the real summary, by the
    calibrated summarizer and by the extractive one on the same span."""
    import itertools
    import sys

    from compbench.cli.render import table
    from compbench.data.dataset import default_dataset
    from compbench.data.importing import iter_transcripts
    from compbench.errors import UsageError
    from compbench.progress import Progress, dataset_total
    from compbench.validation.fidelity import COLUMNS, agreement_note, as_json, kept_note, reacquisition_note

    paths = list(datasets) or [str(default_dataset())]
    totals = [dataset_total(p) for p in paths]
    progress = Progress(sys.stderr, sum(t for t in totals if t is not None) if None not in totals else None,
                        verb="fidelity: read")

    def warn(msg: str) -> None:
        progress.note(f"warning: {msg}")

    def counted(p: str) -> Any:
        for t in iter_transcripts(p, on_error, warn):
            progress.tick()
            yield t

    refuse_runs(paths, "fidelity")
    with broken_lines(SKIP_LINES_HINT):
        transcripts = list(itertools.chain.from_iterable(counted(p) for p in paths))
    progress.close()
    rows = compared(transcripts, tokenizer)
    if not rows:
        raise UsageError(f"no tool-made compaction in {', '.join(paths)}")
    data = as_json(rows)
    if run_dir:
        d = Path(run_dir)
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / ".fidelity.json.tmp"
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
        tmp.replace(d / "fidelity.json")
    if items:
        if fmt == "json":
            click.echo(json.dumps(data["reacquisition_items"], indent=2, ensure_ascii=False))
        else:
            from compbench.validation.fidelity import reacquisition_items

            click.echo(items_text(reacquisition_items(rows), fmt))
    elif fmt == "json":
        click.echo(json.dumps(data["records"], indent=2, ensure_ascii=False))
    elif fmt == "table" and not wide:
        click.echo(table(list(COMPACT), compact_rows(rows), fmt))
        from compbench.cli.compare_view import wrap

        for line in [*wrap(kept_note(rows)), *wrap(agreement_note(checking(transcripts))),
                     *(x for part in reacquisition_note(rows).split("\n") for x in wrap(part)), *wrap(
                "cal.: the calibrated summarizer, extr.: the extractive one, on the same span; --wide: every column "
                "(real and our summary sizes, calibration, window and its source, cause); re-acq p→o: tokens of "
                "content re-read after the real compaction, predicted from its view → observed; --format json: "
                "every field")]:
            click.echo(line)
        for line in per_tool(rows, transcripts):
            click.echo("\n".join(wrap(line, indent="      ")))
    else:
        click.echo(table(list(COLUMNS), data["rows"], fmt))
        if fmt == "table":
            click.echo(kept_note(rows))
            click.echo(agreement_note(checking(transcripts)))
            click.echo(reacquisition_note(rows))
        click.echo("\n".join(per_tool(rows, transcripts)))


def compared(transcripts: Sequence[Any], tokenizer: str) -> list[Any]:
    """:func:`compbench.validation.fidelity.fidelity`, transcript by transcript with progress on stderr, as ``run``
    shows it: the replays of every preset at each real compaction are most of the command's time."""
    import sys

    from compbench.measure.tokens import TokenCounter
    from compbench.progress import Progress
    from compbench.summarizers.extractive import ExtractiveSummarizer
    from compbench.validation.fidelity import rows_for

    counter = TokenCounter(tokenizer)
    summarizer = ExtractiveSummarizer()
    progress = Progress(sys.stderr, len(transcripts), verb="fidelity: compared")
    rows = []
    for t in transcripts:
        rows += rows_for(t, counter, summarizer)
        progress.tick(t.id)
    progress.close()
    return rows


def checking(transcripts: Sequence[Any]) -> Any:
    """``transcripts`` with progress as they are read for the calibrated summarizer's check against the real
    summaries (:func:`compbench.validation.fidelity.agreement_note`)."""
    import sys

    from compbench.progress import Progress

    progress = Progress(sys.stderr, len(transcripts), verb="fidelity: checked the calibrated summarizer on")
    for t in transcripts:
        yield t
        progress.tick(t.id)
    progress.close()




def faithful(rows: Sequence[Any], transcripts: Sequence[Any]) -> list[Any]:
    """Each real compaction once: the row of the tool's own strategy at the preset a run replays its log at (the
    log's version's), else the compaction's first row."""
    from compbench.sdk.registry import own_strategy, resolve

    preset: dict[str, str] = {}
    for t in transcripts:
        own = own_strategy(t.source)
        if own is not None:
            preset[t.id] = resolve(own).for_log(t)[0].preset or "seed"
    out: dict[tuple[str, int], Any] = {}
    for r in rows:
        key = (r.transcript, r.n)
        if key not in out or (r.preset == preset.get(r.transcript) != out[key].preset):
            out[key] = r
    return list(out.values())


def per_tool(rows: Sequence[Any], transcripts: Sequence[Any]) -> list[str]:
    """One line per tool: how far its own strategy reproduces the tool's automatic compactions (the share whose
    trigger fires within two calls of the real one, as a run checks it: :data:`compbench.run.trigger.WITHIN`; one
    that never fires disagrees; one the log cannot place, without usage, is not counted), the messages it keeps
    (median Jaccard with the real kept set), and the re-acquisition it predicts against what the agents re-read."""
    import statistics

    from compbench.run.trigger import WITHIN as NEAR  # calls: a trigger this close to the real one agrees, as a run

    lines = ["by tool: its own strategy at the preset of each log's version; kept set: median Jaccard with the real "
             "one (compactions compared); re-acquisition: tokens of content re-read after the real compactions"]
    by: dict[str, list[Any]] = {}
    for r in faithful(rows, transcripts):
        by.setdefault(r.tool, []).append(r)
    version = {t.id: str(t.meta.get("tool_version") or "") for t in transcripts}
    for tool, got in sorted(by.items()):
        auto, trigger = _agreement(got, NEAR)
        kept = [r.kept_jaccard for r in got if r.kept_jaccard is not None]
        kept_text = f"kept set {statistics.median(kept):.2f} ({len(kept)})" if kept else "kept set –"
        pred = [r for r in got if r.reacq_predicted is not None and r.reacq_observed is not None]
        p, o = sum(r.reacq_predicted for r in pred), sum(r.reacq_observed for r in pred)
        reacq = (f"re-acquisition {p:,} predicted / {o:,} observed" + (f" (x{p / o:.2f})" if o else "")
                 if pred else "re-acquisition –")
        lines.append(f"  {tool}: {len(got)} real compaction{'s' * (len(got) != 1)} ({auto} automatic): {trigger}; "
                     f"{kept_text}; {reacq}{newest(tool)}")
        lines.extend(_per_preset(got, version, NEAR))
    return lines


def _agreement(got: Sequence[Any], near_calls: int) -> tuple[int, str]:
    """How many of ``got`` are automatic, and how many of those the trigger lands within ``near_calls`` of, of
    those the log can place, in words."""
    # automatic: every compaction not asked for by the user, as a run's trigger check counts them ("auto
    # (inferred)": told by a fall in the log; "unknown": a log that does not say, above the tool's threshold)
    auto = [r for r in got if r.trigger.split(" ")[0] != "manual"]
    placed = [r for r in auto if r.d_steps is not None or "strategy never compacted" in r.cause]
    near = sum(1 for r in placed if r.d_steps is not None and abs(r.d_steps) <= near_calls)
    trigger = (f"trigger within {near_calls} calls {near}/{len(placed)} ({near / len(placed):.0%})" if placed else
               "no automatic one to place" if not auto else "trigger not placed")
    if len(auto) > len(placed):
        trigger += f" ({len(auto) - len(placed)} without the usage to place it)"
    return len(auto), trigger


def _per_preset(got: Sequence[Any], version: dict[str, str], near_calls: int) -> list[str]:
    """Trigger agreement per preset the tool's logs replayed at, with the log versions it covered: where a
    tool's agreement rests on one version's logs, or a newer version misses, this line says so. Only when the
    tool's compactions span more than one preset or version (one line would repeat the tool's)."""
    from compbench.sdk.tools import version_tuple

    groups: dict[str, list[Any]] = {}
    for r in got:
        groups.setdefault(r.preset or "seed", []).append(r)
    seen = {version.get(r.transcript, "") for r in got}
    if len(groups) < 2 and len(seen) < 2:
        return []

    def order(v: str) -> tuple[int, tuple[int, ...], str]:
        t = version_tuple(v)
        return (0, t, v) if t is not None else (1, (), v)

    out = []
    for preset, rows in sorted(groups.items(), key=lambda kv: min(order(version.get(r.transcript, ""))
                                                                   for r in kv[1])):
        auto, trigger = _agreement(rows, near_calls)
        vs = sorted({version.get(r.transcript, "") for r in rows} - {""}, key=order)
        logs = (f"logs {vs[0]}" + (f"–{vs[-1]}" if len(vs) > 1 else "") if vs else "logs of unrecorded version")
        out.append(f"    preset {preset} ({logs}): {len(rows)} real, {auto} automatic: {trigger}")
    return out


def newest(source: str) -> str:
    """The newest version the tool's own strategy models, in words ("" where it declares none): a log of a later
    version replays at that preset, so its trigger is checked (and calibrated) against the log's compactions."""
    from compbench.sdk.registry import get, own_strategy

    own = own_strategy(source)
    tool = get(own).tool if own is not None else None
    if tool is None or not tool.newest:
        return ""
    said = tool.preset_versions.get(tool.newest, "")
    return f"; newest modelled: {own} preset {tool.newest}" + (f" ({said})" if said else "")
