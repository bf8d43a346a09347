"""``compbench run``: replay a dataset through strategies and write a run directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from compbench.errors import UsageError


def default_dataset() -> str:
    """The bundled sample dataset, the default input of every command."""
    import compbench

    return str(Path(compbench.__file__).resolve().parents[1] / "datasets" / "samples")


def limits_option(model: str | None, context_window: int | None, max_output: int | None) -> object:
    """Fixed limits for every transcript (from --model / --context-window), or None: each its own."""
    from compbench.models import limits_for
    from compbench.session import ModelLimits

    if model:
        base = limits_for(model)
        return ModelLimits(context_window or base.context_window, max_output or base.max_output,
                           None if context_window else base.max_input)
    if context_window is None:
        return None  # each transcript's own window (the one its tool used)
    return ModelLimits(context_window, max_output or 16_384)


def auto_overhead(system_tokens: int | None, limits: object) -> int | None:
    """``--system-tokens auto`` calibrates each transcript's hidden overhead when the window is its own;
    under a window set for every transcript (--context-window / --model: a smaller window to exercise
    compaction) a real tool's 20-35k system prompt would fill it, so auto means none there."""
    return 0 if system_tokens is None and limits is not None else system_tokens


EPILOG = """\b
Examples:
  compbench run --out out/run                                   the bundled samples, every strategy
  compbench run mine --strategy opencode --strategy codex:preset=0.77 --strategy none --out out/run
  compbench run mine --context-window 128000 --summarizer litellm:gpt-4o-mini --out out/run
  compbench run --resume out/run                                continue an interrupted run as it was started

Progress goes to stderr with the total and the time left, also when stderr is a log file (a line every
10 s; COMPBENCH_PROGRESS_SECONDS changes it).
"""


class SystemTokens(click.ParamType):  # type: ignore[type-arg]
    """``auto`` (None) or a non-negative integer."""

    name = "auto|N"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int | None:
        if value is None or value == "auto":
            return None
        try:
            n = int(str(value).replace("_", ""))
        except ValueError:
            self.fail(f"{value!r} is neither auto nor a number of tokens", param, ctx)
        if n < 0:
            self.fail(f"{n} is negative", param, ctx)
        return n


SYSTEM_TOKENS = SystemTokens()


def read_prices(path: str) -> dict[str, float]:
    """A price file: dollars per million tokens for input, output, cache_read, cache_write."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        keys = ("input", "output", "cache_read", "cache_write")
        return {k: float(data[k]) / 1e6 for k in keys}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"{path}: a JSON object with input, output, cache_read and cache_write prices "
                         f"(dollars per million tokens) ({type(e).__name__}: {e})") from None


@click.command(epilog=EPILOG, short_help="Replay a dataset through strategies into a run directory.")
@click.argument("dataset", required=False)
@click.option("--strategy", "strategies", multiple=True, metavar="NAME[:k=v,...]",
              help="Strategy spec; repeatable. Default: all built-in strategies.")
@click.option("--summarizer", default="calibrated", show_default=True,
              help="calibrated (offline, fitted on real summaries) | extractive (offline, copies) | "
                   "litellm:MODEL | cache-only:DIR[@MODEL] | mock (content-free)")
@click.option("--model", help="Simulated model: window and output limit from litellm's bundled table.")
@click.option("--context-window", type=click.IntRange(min=1),
              help="Simulated window for every transcript (default: each transcript's own, the one its tool used "
                   "for the recorded model).")
@click.option("--max-output", type=click.IntRange(min=1), help="Simulated max output tokens (default 16384).")
@click.option("--tokenizer", default="o200k_base", show_default=True,
              type=click.Choice(["o200k_base", "cl100k_base", "chars4", "chars4-round"]))
@click.option("--message-overhead", default=4, show_default=True, type=click.IntRange(min=0),
              help="Tokens each message adds to the prompt beyond its content (role, separators).")
@click.option("--token-correction", default="auto", show_default=True,
              help="auto: counts scaled to the recorded model family's tokenizer (Claude, Gemini; fitted on real "
                   "usage, see `datasets inspect --calibrate`); none; or a family name to force it.")
@click.option("--system-tokens", default="auto", show_default=True, type=SYSTEM_TOKENS,
              help="Tokens of system prompt and tool schemas not recorded in transcripts: a number for every "
                   "transcript, or auto (the default: each transcript's own, calibrated on its recorded usage as "
                   "`datasets inspect --calibrate` does, else its agent's default overhead; 0 under a "
                   "--context-window / --model set for every transcript).")
@click.option("--price-model", help="Model whose prices cost the run (default: --model or claude-sonnet-4-5).")
@click.option("--prices", "prices_file", type=click.Path(exists=True, dir_okay=False),
              help='JSON price file overriding the table: {"input", "output", "cache_read", "cache_write"} '
                   "in dollars per million tokens.")
@click.option("--cache-ttl", type=click.Choice(["5m", "1h", "none"]), default="5m", show_default=True,
              help="The provider's prompt-cache lifetime: Anthropic's 5-minute or 1-hour cache (writes at 1.25x or "
                   "2x input), or none (never expires; for comparison with older runs).")
@click.option("--api-base", help="Endpoint for litellm summarizers (e.g. a local OpenAI-compatible server).")
@click.option("--api-key", envvar="COMPBENCH_API_KEY", help="API key for litellm summarizers; never stored.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Response cache for litellm summarizers.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Replay transcripts in N local processes (or N Ray CPUs).")
@click.option("--executor", type=click.Choice(["local", "threads", "ray"]), default="local", show_default=True,
              help="local processes (--workers), threads (--concurrency, for rate-limited models) or a Ray cluster.")
@click.option("--ray-address", help="Ray cluster address (with --executor ray); default: a local instance.")
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(min=1),
              help="Transcripts in flight at once in threads: bounded concurrency for litellm summarizers.")
@click.option("--out", "out", type=click.Path(file_okay=False), help="Run directory to write.")
@click.option("--force", is_flag=True, help="Replace an existing run directory.")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False),
              help="Continue an interrupted run in this directory, with the options and dataset it was started "
                   "with (an option given again must match; a differing one is named).")
@click.option("--quiet", is_flag=True, help="No progress or summary table.")
@click.pass_context
def run(ctx: click.Context, dataset: str | None, strategies: tuple[str, ...], summarizer: str, model: str | None,
        context_window: int | None, max_output: int | None, tokenizer: str, message_overhead: int,
        token_correction: str, system_tokens: int | None, price_model: str | None, prices_file: str | None,
        cache_ttl: str, api_base: str | None, api_key: str | None,
        cache_dir: str | None, workers: int, executor: str, ray_address: str | None, concurrency: int,
        out: str | None, force: bool, resume_dir: str | None, quiet: bool) -> None:
    """Replay DATASET (default: the bundled samples) through strategies and write a run directory."""
    from compbench.dataset import iter_transcripts
    from compbench.progress import Progress, dataset_total
    from compbench.rundir import recorded, write_run

    if bool(out) == bool(resume_dir):
        raise UsageError("give --out RUN_DIR for a new run, or --resume RUN_DIR to continue one")
    out = out or resume_dir
    assert out is not None
    given = {name for name in ctx.params
             if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE}
    done = 0
    if resume_dir:
        spec, path, done = recorded(Path(resume_dir))
        _check_resume(resume_dir, spec, path, given, ctx.params)
        if api_key and spec.summarizer.partition(":")[0] in ("litellm", "cache-only"):
            from dataclasses import replace

            spec = replace(spec, summarizer_options={**spec.summarizer_options, "api_key": api_key})
    else:
        spec, path = _new_spec(dataset, strategies, summarizer, model, context_window, max_output, tokenizer,
                               message_overhead, system_tokens, price_model, prices_file, api_base, api_key, cache_dir,
                               token_correction=token_correction, cache_ttl=cache_ttl)
    progress = Progress(sys.stderr, dataset_total(path), done) if not quiet else None

    def warn(msg: str) -> None:  # merges and files passed over on the way, as `datasets import` says them
        click.echo(f"warning: {msg}", err=True)

    manifest = write_run(Path(out), spec, path, iter_transcripts(path, warn=warn), workers,
                         progress.tick if progress else None, force, resume=resume_dir is not None,
                         executor=executor, concurrency=concurrency, ray_address=ray_address)
    if progress:
        progress.close()
    for e in manifest["errors"]:
        click.echo(f"warning: {e['transcript_id']}: {e['error']}", err=True)
    if not quiet:
        from compbench.summary import summary_table

        click.echo(summary_table(Path(out)))
        click.echo(f"run written to {out}")


def _new_spec(dataset: str | None, strategies: tuple[str, ...], summarizer: str, model: str | None,
              context_window: int | None, max_output: int | None, tokenizer: str, message_overhead: int,
              system_tokens: int | None, price_model: str | None, prices_file: str | None, api_base: str | None,
              api_key: str | None, cache_dir: str | None, *, token_correction: str = "auto",
              cache_ttl: str = "5m") -> tuple[Any, str]:
    """The spec of a new run from the command line, and its dataset."""
    from compbench.correction import check_mode
    from compbench.facts.boilerplate import scan_dataset
    from compbench.facts.sources import gold_file_for
    from compbench.models import lookup
    from compbench.runs import DEFAULT_PRICE_MODEL, RunSpec
    from compbench.session import ModelLimits
    from compbench.strategies import resolve, runnable

    specs = tuple(resolve(s).label for s in strategies) if strategies else tuple(runnable())
    if len(set(specs)) != len(specs):
        raise UsageError("the same strategy configuration is given twice")
    limits = limits_option(model, context_window, max_output)
    assert limits is None or isinstance(limits, ModelLimits)
    pm = price_model or model or DEFAULT_PRICE_MODEL
    lookup(pm)
    options: dict[str, object] = {}
    if summarizer.partition(":")[0] in ("litellm", "cache-only"):
        options = {k: v for k, v in (("api_base", api_base), ("api_key", api_key), ("cache_dir", cache_dir)) if v}
    path = dataset or default_dataset()
    gold = gold_file_for(path)
    return RunSpec(strategies=specs, limits=limits, summarizer=summarizer, tokenizer=tokenizer,
                   message_overhead=message_overhead, token_correction=check_mode(token_correction),
                   system_tokens=auto_overhead(system_tokens, limits), model=model, price_model=pm,
                   gold=str(gold) if gold else None, prices=read_prices(prices_file) if prices_file else None,
                   summarizer_options=options, boilerplate=scan_dataset(path), cache_ttl=cache_ttl), path


# options that do not change a run's results: they may differ on --resume
FREE = {"workers", "executor", "ray_address", "concurrency", "quiet", "force", "resume_dir", "out", "api_key"}


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
        "api_base": spec.summarizer_options.get("api_base"), "cache_dir": spec.summarizer_options.get("cache_dir")}
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
            flag = "DATASET" if name == "dataset" else "--" + name.replace("_", "-").replace("-file", "s")
            shown = "auto" if theirs is None and name == "system_tokens" else theirs
            differ.append(f"{flag} {shown!s} in the run, {mine!s} given")
    if differ:
        raise UsageError(f"cannot resume {run}: {'; '.join(differ)} (leave them out: --resume takes the run's own "
                         "options)")
