"""``compbench.cli.run`` — ``compbench run``: replay a dataset through strategies and write a run directory."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from compbench.cli.options import (
    EXECUTION_NAMES,
    IMPORT_HINT,
    REPLAY_NAMES,
    SELECTION_NAMES,
    broken_lines,
    checked_replay,
    configured,
    execution_options,
    noted,
    read_prices,
    refuse_runs,
    replay_options,
    say_unmatched,
    selection,
    selection_options,
    spec_of,
    take,
)
from compbench.cli.run_cache import cache_dir, open_results_cache, remembered_widening, summary_of
from compbench.errors import UsageError

EPILOG = """\b
Examples:
  compbench run --out out/run                                   the bundled samples, every strategy
  compbench run mine --strategy opencode --strategy codex:preset=0.77 --strategy none --out out/run
  compbench run mine --context-window 128000 --summarizer litellm:gpt-4o-mini --out out/run
  compbench run mine --source claude-code --where "steps>=50" --out out/claude   one tool's longer sessions
  compbench run --resume out/run                                continue an interrupted run as it was started
  compbench run mine --no-settings --out out/run                without the sweep of the tools' own settings

Every replay option may be set in compbench.toml ([run]) or pyproject.toml ([tool.compbench.run]); a flag
wins over the file, the file over the default.

Progress goes to stderr with the total and the time left, also when stderr is a log file (a line every
10 s; COMPBENCH_PROGRESS_SECONDS changes it). A run longer than about a minute says first what it will cost
and how to make it shorter.

Results cache: each transcript's rows are kept under its content, the configuration and the versions of the
engine and the strategies, so a re-run replays only what changed (a log imported again, into any dataset,
hits). It lives in COMPBENCH_CACHE_DIR, else $XDG_CACHE_HOME/compbench, else ~/.cache/compbench (or
--results-cache DIR); the least recently used entries are removed past COMPBENCH_CACHE_MAX (default 2G). A
dataset's listing (what a run reads of each transcript, under the data file's size, times and content) and the
summary are kept there too: a re-run over an unchanged dataset parses no transcript.

Ctrl-C or SIGTERM: the transcripts in hand are finished and written, and the command that resumes is printed.
"""


@click.command(epilog=EPILOG, short_help="Replay a dataset through strategies into a run directory.")
@click.argument("dataset", required=False)
@click.option("--strategy", "strategies", multiple=True, metavar="NAME[:k=v,...]",
              help="Strategy spec; repeatable. Default: all built-in strategies. [strategy.NAME] in compbench.toml "
                   "sets its parameters (a spec's own win).")
@replay_options
@selection_options
@execution_options
@click.option("--out", "out", type=click.Path(file_okay=False), help="Run directory to write.")
@click.option("--force", is_flag=True, help="Replace an existing run directory.")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False),
              help="Continue an interrupted run in this directory, with the options and dataset it was started "
                   "with (an option given again must match; a differing one is named).")
@click.option("--no-settings", "no_settings", is_flag=True,
              help="Leave out the settings sweep: by default each own-tool strategy is also replayed, on its tool's "
                   "logs only, at a few values of the settings its users set (the results' swept column says 'sweep').")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Replay every transcript, and keep nothing in the results cache.")
@click.option("--rebuild-cache", "rebuild_cache", is_flag=True,
              help="Replay every transcript and store the fresh rows in the results cache.")
@click.option("--results-cache", "results_cache", type=click.Path(file_okay=False),
              help="The results cache's directory (default: COMPBENCH_CACHE_DIR, else $XDG_CACHE_HOME/compbench, else "
                   "~/.cache/compbench).")
@click.option("--quiet", is_flag=True, help="No estimate, progress or summary table.")
@click.pass_context
def run(ctx: click.Context, /, dataset: str | None, strategies: tuple[str, ...], out: str | None, force: bool,
        resume_dir: str | None, no_settings: bool, no_cache: bool, rebuild_cache: bool, results_cache: str | None,
        quiet: bool, **options: Any) -> None:
    """Replay DATASET (default: the bundled samples) through strategies and write a run directory."""
    from compbench.config import find
    from compbench.data.dataset import default_dataset, is_dataset
    from compbench.data.importing import iter_transcripts, replayable
    from compbench.progress import Progress, dataset_total
    from compbench.run.cache import cache_root
    from compbench.run.estimate import Meter, estimate, record_speed, said
    from compbench.run.listing import is_empty
    from compbench.run.stop import Interrupted
    from compbench.run.write import selected, started_with, write_run

    if bool(out) == bool(resume_dir):
        raise UsageError("give --out RUN_DIR for a new run, or --resume RUN_DIR to continue one")
    if no_cache and rebuild_cache:
        raise UsageError("--no-cache and --rebuild-cache exclude each other: give one")
    out = out or resume_dir
    assert out is not None
    replay, execution = take(options, REPLAY_NAMES), take(options, EXECUTION_NAMES)
    chosen = selection(take(options, SELECTION_NAMES)).before_replay()
    given = {name for name in ctx.params
             if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE}
    done: list[str] = []
    spec = None
    labels: tuple[str, ...] = ()
    checked = None  # the replay options, checked before the logs are read (a new run's)
    unmatched: set[str] = set()  # the alternatives of --source / --where said to match nothing, said once
    if resume_dir:
        spec, path, _ = started_with(Path(resume_dir))
        done = committed_ids(Path(resume_dir))
        _check_resume(resume_dir, spec, path, given, {**ctx.params, "select": chosen.text()})
        api_key = replay["api_key"]
        if api_key and spec.summarizer.partition(":")[0] in ("litellm", "cache-only"):
            from dataclasses import replace

            spec = replace(spec, summarizer_options={**spec.summarizer_options, "api_key": api_key})
    else:
        path = dataset or str(default_dataset())
        refuse_runs([path], "run")
        labels = configured(strategies, find())
        checked = checked_replay(replay)  # a mistyped option ends here, before the logs are read
        for line in setting_values(labels):  # a value the tool ignores ends here, before any work
            click.echo(f"warning: {line}", err=True)

    def warn(msg: str) -> None:  # merges and files passed over on the way, as `datasets import` says them
        click.echo(f"warning: {msg}", err=True)

    look = None
    refs = None  # a dataset's transcripts by reference: listed once, read only where replayed, by the worker
    reading = Progress(sys.stderr, dataset_total(path), verb="read") if not quiet else None
    if is_dataset(path):
        from compbench.run.listing import listing

        with broken_lines(IMPORT_HINT):  # kept beside the results (not with --no-cache: then nothing is kept)
            refs = listing(path, cache_dir(path, results_cache) if not no_cache else Path(), keep=not no_cache,
                           trust=not rebuild_cache, tick=reading.tick if reading else None)
    if reading is not None:  # one pass before the replays: what they will cost (and, for raw logs, the scan)
        from compbench.run.estimate import survey

        keep_empty = spec.keep_empty if spec is not None else bool(replay["keep_empty"])
        with broken_lines(IMPORT_HINT):  # the run's warnings are the run's: said once, as it reads again
            look = survey(refs if refs is not None else iter_transcripts(path, warn=lambda _: None),
                          _matches(spec.select if spec is not None else chosen.text(), keep_empty),
                          scan=spec is None and refs is None, skip=done,
                          tick=reading.tick if refs is None else None)
        reading.close()
    if spec is None:
        with broken_lines(IMPORT_HINT):  # the boilerplate scan reads every transcript first (unless done above)
            scanned = look.scanner.templates().to_json() if look is not None and look.scanner is not None else None
            spec = spec_of(labels, replay, path, chosen.text(), boilerplate=scanned, checked=checked)
        say_unmatched(chosen, {"source": (spec.boilerplate.get("transcripts") or {}).keys()}, unmatched)
        if not no_settings:  # the tools present: the scan counted each source's transcripts
            from compbench.run.spec import with_settings

            spec = with_settings(spec)
    cache = open_results_cache(spec, path, no_cache, rebuild_cache, results_cache, quiet)
    total = None if spec.select else dataset_total(path)
    if look is not None:
        total = len(done) + len(look.items)
        root = cache.root if cache is not None else cache_root(results_cache)  # where this machine's speed is kept
        cost = estimate(spec, look.items, execution["workers"], cache, root, raw=not is_dataset(path),
                        load=os.getloadavg()[0], listed=refs is not None)
        if said(cost):
            for line in advice(cost, no_settings=no_settings):
                click.echo(line, err=True)
    progress = Progress(sys.stderr, total, len(done)) if not quiet else None
    meter = Meter()

    def notify(msg: str) -> None:
        if progress:
            progress.note(msg)
        else:
            click.echo(msg, err=True)

    def again() -> Any:  # the logs read again for a widened sweep: warnings were said the first time
        if refs is not None:
            return replayable(refs, spec.keep_empty, empty=is_empty)
        return replayable(iter_transcripts(path), spec.keep_empty)

    try:
        with broken_lines(IMPORT_HINT):
            stream = refs if refs is not None else iter_transcripts(path, warn=warn)
            replayed = selected(spec, replayable(stream, spec.keep_empty, warn, progress.tick if progress else None,
                                                 empty=is_empty), path, noted(unmatched))
            manifest = write_run(Path(out), spec, path, replayed, execution["workers"],
                                 progress.tick if progress else None, force, resume=resume_dir is not None,
                                 executor=execution["executor"], concurrency=execution["concurrency"],
                                 ray_address=execution["ray_address"],
                                 widen=remembered_widening(cache) if spec.settings else None, again=again, cache=cache,
                                 meter=meter, notify=notify)
    except Interrupted as e:
        if progress:
            progress.close()
        click.echo(str(e), err=True)
        sys.exit(e.exit_code)  # as the signal's own exit would be (click's Exit is a return code here)
    except KeyboardInterrupt:
        if progress:
            progress.close()
        n = len(committed_ids(Path(out)))
        click.echo(f"stopped at once: {n:,} transcripts written; resume with: compbench run --resume {out}", err=True)
        sys.exit(130)
    finally:
        if cache is not None:
            record_speed(cache.root, meter)
            cache.prune()
    if progress:
        progress.close()
    if cache is not None and not quiet:
        click.echo(f"results cache: {cache.hits:,} transcripts read from {cache.root}, {meter.replays:,} replayed",
                   err=True)
    for failed in manifest.errors:
        click.echo(f"warning: {failed['transcript_id']}: {failed['error']}", err=True)
    if not quiet:
        click.echo(summary_of(Path(out), cache.root if cache is not None else None))
        click.echo(f"run written to {out}")


def setting_values(labels: Sequence[str]) -> list[str]:
    """Each value a configuration gives one of its tool's settings, against what the tool takes
    (:class:`compbench.sdk.tools.Accepts`, declared on the strategy's ``Setting``), before any replay: a value
    the tool ignores is refused in one line (the configuration would replay as if unset: a typo, and a row
    that claims to measure a setting it does not), one it clamps or that turns the feature off is returned as
    a warning (the replay does as the tool does). Bounds every configuration keeps whatever its tool
    (``param(lo=, hi=)``: a negative window) are refused where the spec is resolved."""
    from compbench.strategies import resolve

    warnings: list[str] = []
    for label in labels:
        c = resolve(label)
        tool = c.info.tool
        if tool is None:
            continue
        for item in filter(None, c.label.partition(":")[2].split(",")):
            key, _, raw = item.partition("=")
            setting = tool.setting(key.strip())
            accepts = setting.accepts if setting is not None else None
            if setting is None or accepts is None:
                continue
            try:
                value = float(raw)
            except ValueError:
                continue
            if accepts.holds(value):
                continue
            unset = f", {accepts.unset:g} leaves it unset" if accepts.unset is not None else ""
            head = (f"{c.label}: {setting.name} ({c.name}'s {key.strip()}) takes {accepts.text()}{unset}; "
                    f"{accepts.outside}")
            if accepts.refuse:
                raise UsageError(f"{head}, so {raw} would replay as if it were unset")
            warnings.append(f"{head}: the replay does as the tool does with {raw}")
    return warnings


# options that do not change a run's results: they may differ on --resume
FREE = {"workers", "executor", "ray_address", "concurrency", "quiet", "force", "resume_dir", "out", "api_key",
        "no_settings", "no_cache", "rebuild_cache", "results_cache"}


def _check_resume(run: str, spec: Any, path: str, given: set[str], params: dict[str, Any]) -> None:
    """Every option given again on --resume must be the one the run was started with: the differing ones
    are named, with the run's value, in one line."""
    from compbench.strategies import resolve

    limits = spec.limits
    recorded: dict[str, Any] = {
        "dataset": path, "strategies": spec.strategies, "summarizer": spec.summarizer, "model": spec.model,
        "context_window": limits.context_window if limits is not None else None,
        "max_output": limits.max_output if limits is not None else None, "tokenizer": spec.tokenizer,
        "message_overhead": spec.message_overhead, "system_tokens": spec.system_tokens,
        "token_correction": spec.token_correction, "cache_ttl": spec.cache_ttl,
        "price_model": spec.price_model, "prices_file": spec.prices,
        "api_base": spec.summarizer_options.get("api_base"), "cache_dir": spec.summarizer_options.get("cache_dir"),
        "select": spec.select, "keep_empty": spec.keep_empty}
    if given & {"sources", "where"}:  # the filter as one: --source and --where together make the run's selection
        given = given | {"select"}
    wanted = dict(params)
    if params.get("dataset") is not None:
        given = given | {"dataset"}
    if "strategies" in given:
        wanted["strategies"] = tuple(resolve(x).label for x in params["strategies"])
    if "prices_file" in given and params.get("prices_file"):
        wanted["prices_file"] = read_prices(params["prices_file"])
    differ = []
    for name in sorted(given - FREE):
        if name not in recorded:
            continue
        mine, theirs = wanted.get(name), recorded[name]
        if name == "dataset" and mine is not None and Path(str(mine)).resolve() == Path(str(theirs)).resolve():
            continue
        if isinstance(theirs, tuple):
            theirs, mine = ",".join(theirs), ",".join(mine or ())
        if mine != theirs:
            flag = ("DATASET" if name == "dataset" else "--source/--where" if name == "select" else
                    "--" + name.replace("_", "-").replace("-file", "s"))
            shown = ("auto" if theirs is None and name == "system_tokens" else
                     repr(theirs or "") if name == "select" else theirs)
            mine = repr(mine or "") if name == "select" else mine
            differ.append(f"{flag} {shown!s} in the run, {mine!s} given")
    if differ:
        raise UsageError(f"cannot resume {run}: {'; '.join(differ)} (leave them out: --resume takes the run's own "
                         "options)")


def committed_ids(out: Path) -> list[str]:
    """The transcripts an interrupted run has written (its committed batches)."""
    from compbench.store.rundir import committed_batches, partial_of

    return [tid for b in committed_batches(partial_of(out)) for tid in b["ids"]]


def _matches(select: str, keep_empty: bool) -> Any:
    """Whether a transcript is one the run replays: not an empty session (unless kept), picked by its
    ``--source`` / ``--where``."""
    from compbench.data.select import parse
    from compbench.run.listing import fields, is_empty

    chosen = parse(select) if select else None
    return lambda t: (keep_empty or not is_empty(t)) and (chosen is None or chosen.matches(fields(t)))


def advice(e: Any, *, no_settings: bool = False) -> list[str]:
    """The estimate (:class:`compbench.run.estimate.Estimate`) in words, and how to make the run shorter: the
    tools that cost most, a filter, the settings sweep, fewer strategies, every core."""
    from compbench.progress import duration

    def took(seconds: float) -> str:
        return duration(seconds) if seconds >= 1 else "under a second"

    with_workers = f" with {e.workers} workers" if e.workers > 1 else ""
    busy = f" (the machine is busy: {e.busy:.1f} times its CPU time)" if e.busy > 1.2 else ""
    head = (f"estimate: about {took(e.wall_seconds)}{with_workers} to replay {e.replays:,} transcripts under "
            f"{e.configurations} configurations{busy}")
    if e.cached:
        head += f"; {took(e.cached_seconds)} for the {e.cached:,} the results cache already holds"
    ways = []
    if len(e.by_source) > 1:
        costly = sorted(e.by_source.items(), key=lambda kv: (-kv[1][1], kv[0]))
        shares = ", ".join(f"{src} {n} ({s / e.replay_seconds:.0%})" for src, (n, s) in costly[:4])
        ways.append(f"--source TOOL replays one tool's logs (transcripts, share of the time: {shares})")
    ways.append('--where "steps<=200" (or model~NAME, project~NAME) replays fewer transcripts')
    if e.settings and not no_settings:
        ways.append(f"--no-settings leaves out the {e.settings} configurations of the tools' settings sweep")
    ways.append("--strategy NAME (repeatable) replays only the strategies named")
    cpus = os.cpu_count() or 1
    if e.workers < cpus:
        ways.append(f"--workers {cpus} uses every core")
    return [head, "to make it shorter: " + "; ".join(ways)]
