"""``compbench.cli.options`` — The option sets every command that replays shares (``run``, ``tune``; ``fidelity``'s
tokenizer): declared once, so a replay option means the same thing, has the same default and the same help
everywhere, and a configuration file (``[run]``, :mod:`compbench.config`) sets it for all of them.

:func:`replay_options` adds what determines a run's numbers (summarizer, window, tokenizer, overhead,
prices, cache); :func:`execution_options` how it is executed (workers, executor). :func:`spec_of` turns
their values into the :class:`~compbench.run.engine.RunSpec` both commands write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import click

from compbench.errors import UsageError

if TYPE_CHECKING:
    from compbench.config import Config
    from compbench.run.spec import RunSpec
    from compbench.sdk.session import ModelLimits

F = TypeVar("F", bound=Callable[..., Any])
TOKENIZERS = ("o200k_base", "cl100k_base", "chars4", "chars4-round")


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


class Registered(click.ParamType):  # type: ignore[type-arg]
    """A name a registry knows (a format, an executor): an unknown one fails with the registry's did-you-mean."""

    def __init__(self, lookup: Callable[[str], object], metavar: str) -> None:
        self.lookup = lookup
        self.name = metavar

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            self.lookup(str(value))
        except UsageError as e:
            self.fail(str(e), param, ctx)
        return str(value)

def _executor(name: str) -> object:
    from compbench.run.executors import EXECUTORS

    return EXECUTORS.get(name)


TOKENIZER = click.option("--tokenizer", default="o200k_base", show_default=True, type=click.Choice(TOKENIZERS),
                         help="o200k_base / cl100k_base (tiktoken, offline) or the seeds' chars4 heuristics.")

REPLAY: tuple[Callable[[F], F], ...] = (
    click.option("--summarizer", default="calibrated", show_default=True,
                 help="calibrated (offline, fitted on real summaries) | extractive (offline, copies) | "
                      "litellm:MODEL | cache-only:DIR[@MODEL] | mock (content-free) | a plug-in's."),
    click.option("--model", help="Simulated model: window and output limit from litellm's bundled table."),
    click.option("--context-window", type=click.IntRange(min=1),
                 help="Simulated window for every transcript (default: each transcript's own, the one its tool "
                      "used for the recorded model)."),
    click.option("--max-output", type=click.IntRange(min=1), help="Simulated max output tokens (default 16384)."),
    TOKENIZER,
    click.option("--message-overhead", default=4, show_default=True, type=click.IntRange(min=0),
                 help="Tokens each message adds besides its text (role, separators)."),
    click.option("--token-correction", default="auto", show_default=True,
                 help="auto: counts scaled to the recorded model family's tokenizer (Claude, Gemini; fitted on "
                      "real usage, see `datasets inspect --calibrate`); none; or a family name to force it."),
    click.option("--system-tokens", default="auto", show_default=True, type=SYSTEM_TOKENS,
                 help="Tokens of system prompt and tool schemas not recorded in transcripts: a number for every "
                      "transcript, or auto: each transcript's own (a fixed part from its first recorded call and "
                      "a growth rate from the others, else its agent's defaults) on its own window; 0 under a "
                      "--context-window / --model set for every transcript."),
    click.option("--cache-ttl", default="auto", show_default=True, type=click.Choice(["auto", "5m", "1h", "none"]),
                 help="The provider's prompt-cache lifetime: auto (each transcript's recorded one: Claude Code "
                      "2.1 asks for Anthropic's 1-hour cache; else 5 minutes), Anthropic's 5-minute or 1-hour "
                      "cache for every transcript, or none (never expires)."),
    click.option("--price-model", help="Model whose prices cost every transcript (default: --model, else each "
                                       "transcript's recorded model; claude-sonnet-4-5 where none is recorded)."),
    click.option("--summarizer-model", help="Model whose prices cost every summary request (default: the model that "
                                            "makes it: aider's weak model, Goose's fast model, else the "
                                            "transcript's own)."),
    click.option("--prices", "prices_file", type=click.Path(exists=True, dir_okay=False),
                 help='JSON price file overriding the table: {"input", "output", "cache_read", "cache_write"} '
                      "in dollars per million tokens."),
    click.option("--api-base", help="Endpoint for litellm summarizers (e.g. a local OpenAI-compatible server)."),
    click.option("--api-key", envvar="COMPBENCH_API_KEY", help="API key for litellm summarizers; never stored."),
    click.option("--cache-dir", type=click.Path(file_okay=False), help="Response cache for litellm summarizers."),
    click.option("--keep-empty", is_flag=True, help="Replay sessions with no reply too (left out by default: "
                                                    "nothing to replay, they would only dilute the counts)."),
)
REPLAY_NAMES = ("summarizer", "model", "context_window", "max_output", "tokenizer", "message_overhead",
                "token_correction", "system_tokens", "cache_ttl", "price_model", "summarizer_model", "prices_file",
                "api_base", "api_key", "cache_dir", "keep_empty")

EXECUTION: tuple[Callable[[F], F], ...] = (
    click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
                 help="Replay transcripts in N local processes (or N Ray CPUs)."),
    click.option("--executor", default="local", show_default=True, type=Registered(_executor, "local|threads|ray|..."),
                 help="local | threads | ray | a plug-in's (the compbench.run.executors entry points)."),
    click.option("--ray-address", help="Ray cluster address (with --executor ray); default: a local instance."),
    click.option("--concurrency", default=1, show_default=True, type=click.IntRange(min=1),
                 help="Transcripts in flight at once in threads: bounded concurrency for litellm summarizers."),
)
EXECUTION_NAMES = ("workers", "executor", "ray_address", "concurrency")


SELECTION: tuple[Callable[[F], F], ...] = (
    click.option("--source", "sources", multiple=True, metavar="TOOL",
                 help="Only the transcripts this tool recorded (claude-code, codex, gemini-cli, ...); repeatable, "
                      "or a,b."),
    click.option("--where", metavar="EXPR",
                 help='Only the transcripts that match, e.g. "model~sonnet and steps>=50": FIELD OP VALUE joined '
                      "by and; OP = != < <= > >= ~ (contains); fields: source, model, project, session, "
                      "transcript_id, steps (compare and report: also every per-transcript results column, such "
                      "as window or reference_input_tokens); a|b for either, * and ? as wildcards."),
)
SELECTION_NAMES = ("sources", "where")


def _stack(options: tuple[Callable[[F], F], ...]) -> Callable[[F], F]:
    def deco(f: F) -> F:
        for option in reversed(options):
            f = option(f)
        return f

    return deco


replay_options = _stack(REPLAY)
execution_options = _stack(EXECUTION)
selection_options = _stack(SELECTION)


def selection(values: Mapping[str, Any]) -> Any:
    """The :class:`compbench.data.select.Selection` of ``--source`` / ``--where`` (parsed: a bad filter ends here,
    in one line, before any work)."""
    from compbench.data.select import parse

    return parse(values.get("where"), tuple(values.get("sources") or ()))


def say_unmatched(chosen: Any, values: Mapping[str, Any], said: set[str]) -> None:
    """Each alternative of ``--source`` / ``--where`` that matched no transcript (``values``: field -> what the
    transcripts held), once, on stderr: before a replay, from the dataset's scan (the sources it counted); every
    other field's once the replay has read the dataset (:func:`noted`, through the filter)."""
    for line in chosen.unmatched(values) if chosen else ():
        noted(said)(line)


def noted(said: set[str]) -> Callable[[str], None]:
    """A line said once on stderr as a note (an alternative of a filter that matched nothing)."""
    def note(line: str) -> None:
        if line not in said:
            said.add(line)
            click.echo(f"note: {line}", err=True)

    return note


def take(values: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """Remove and return the values of one option set from a command's keyword arguments."""
    return {n: values.pop(n) for n in names}


def limits_option(model: str | None, context_window: int | None, max_output: int | None) -> ModelLimits | None:
    """Fixed limits for every transcript (from --model / --context-window), or None: each its own."""
    from compbench.measure.models import limits_for
    from compbench.sdk.session import ModelLimits

    if model:
        base = limits_for(model)
        return ModelLimits(context_window or base.context_window, max_output or base.max_output,
                           None if context_window else base.max_input)
    if context_window is None:
        return None  # each transcript's own window (the one its tool used)
    return ModelLimits(context_window, max_output or 16_384)


def auto_overhead(system_tokens: int | None, limits: ModelLimits | None) -> int | None:
    """``--system-tokens auto`` calibrates each transcript's hidden overhead when the window is its own;
    under a window set for every transcript (--context-window / --model: a smaller window to exercise
    compaction) a real tool's 20-35k system prompt would fill it, so auto means none there."""
    return 0 if system_tokens is None and limits is not None else system_tokens


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


def spec_of(strategies: tuple[str, ...], replay: Mapping[str, Any], dataset: str, select: str = "",
            boilerplate: dict[str, object] | None = None, checked: Checked | None = None) -> RunSpec:
    """The run spec of replay options ``replay`` (:data:`REPLAY_NAMES`) over ``dataset`` (the transcripts
    ``select`` picks: :mod:`compbench.data.select`): its gold facts and boilerplate templates found beside it (or
    ``boilerplate``, the scan a caller made as it read the logs), an API key kept out of anything written.
    ``checked``: :func:`checked_replay` of the same options, where the caller checked them already."""
    from compbench.data.importing import scan_dataset
    from compbench.measure.facts.sources import gold_file_for
    from compbench.run.spec import RunSpec

    r = dict(replay)
    c = checked if checked is not None else checked_replay(r)
    gold = gold_file_for(dataset)
    return RunSpec(strategies=strategies, limits=c.limits, summarizer=r["summarizer"], tokenizer=r["tokenizer"],
                   message_overhead=r["message_overhead"], token_correction=c.correction,
                   system_tokens=auto_overhead(r["system_tokens"], c.limits), model=r["model"],
                   price_model=c.price_model, summarizer_model=c.summarizer_model, gold=str(gold) if gold else None,
                   prices=c.prices, summarizer_options=c.options, cache_ttl=r["cache_ttl"],
                   boilerplate=scan_dataset(dataset) if boilerplate is None else boilerplate, select=select,
                   keep_empty=bool(r.get("keep_empty")))


class Checked(NamedTuple):
    """Replay options checked and resolved (:func:`checked_replay`)."""

    limits: ModelLimits | None
    price_model: str | None
    summarizer_model: str | None
    options: dict[str, object]
    correction: str
    prices: dict[str, float] | None


def checked_replay(replay: Mapping[str, Any]) -> Checked:
    """The replay options checked before any transcript is read (a typo ends the command at once, in one line):
    the window, the token correction, the prices file, the price and summarizer models, and the summarizer's
    options (an API key among them)."""
    from compbench.measure.models import lookup
    from compbench.measure.token_correction import check_mode
    from compbench.summarizers import info

    r = dict(replay)
    backend = info(r["summarizer"])  # an unknown summarizer fails here, before any work
    limits = limits_option(r["model"], r["context_window"], r["max_output"])
    correction = check_mode(r["token_correction"])
    prices = read_prices(r["prices_file"]) if r["prices_file"] else None
    price_model = r["price_model"] or r["model"] or None  # None: each transcript at its recorded model
    if price_model:
        lookup(price_model)
    summarizer_model = r.get("summarizer_model") or None
    if summarizer_model:
        lookup(summarizer_model)
    options: dict[str, object] = {}
    if backend.name in ("litellm", "cache-only"):
        options = {k: r[k] for k in ("api_base", "api_key", "cache_dir") if r[k]}
    return Checked(limits, price_model, summarizer_model, options, correction, prices)


def configured(specs: tuple[str, ...], config: Config) -> tuple[str, ...]:
    """Strategy specs resolved to their labels, each with its ``[strategy.NAME]`` parameters beneath its own
    (no spec: every strategy a run of all replays)."""
    from compbench.config import apply_to_spec
    from compbench.strategies import resolve, runnable

    labels = tuple(resolve(apply_to_spec(config, s)).label for s in (specs or tuple(runnable())))
    if len(set(labels)) != len(labels):
        raise UsageError("the same strategy configuration is given twice")
    return labels


def config_defaults(ctx: click.Context, command: click.Command, config: Config) -> dict[str, Any]:
    """``command``'s option defaults from the configuration, checked: a key that is no option of it fails
    with a did-you-mean (a typo must not be ignored)."""
    import difflib

    values = config.options(command.name or "run")
    # an option is named in the file as on the command line (``prices`` for --prices), without the dashes
    dest = {o.lstrip("-").replace("-", "_"): p.name for p in command.params if isinstance(p, click.Option)
            and p.name for o in p.opts if o.startswith("--")}
    shared = {"prices", *REPLAY_NAMES, *EXECUTION_NAMES}  # [run] serves every replaying command
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key in dest:
            out[str(dest[key])] = value
        elif key not in shared:
            hint = difflib.get_close_matches(key, [*dest, *shared], n=1)
            did = f"; did you mean {hint[0]!r}?" if hint else ""
            raise UsageError(f"{config.source}: [run] has no option {key!r}{did}")
    return out


SKIP_LINES_HINT = "rerun with --on-error skip-lines to skip broken lines and keep the rest of the file"
IMPORT_HINT = ("import the logs with `compbench datasets import PATH --out DIR --on-error skip-lines` (broken lines "
               "skipped, the rest kept), then give DIR")


@contextlib.contextmanager
def broken_lines(hint: str) -> Iterator[None]:
    """A broken JSONL line that stops the command says how to skip such lines (``hint``), in the same one line."""
    from compbench.errors import CompbenchError, TranscriptError

    try:
        yield
    except TranscriptError as e:
        if not e.broken_line:
            raise
        raise CompbenchError(f"{e}; {hint}") from None


def refuse_runs(paths: Sequence[str], command: str) -> None:
    """A run directory given where transcripts are expected says what it is (its fidelity.json and
    manifest.json would otherwise be read as logs of an unknown format)."""
    for p in paths:
        d = Path(p)
        if d.is_dir() and (d / "manifest.json").is_file() and (d / "results.parquet").is_file():
            raise UsageError(f"{p} is a run directory (the output of `compbench run`), not transcripts for "
                             f"`{command}`: look at it with `compbench compare {p}` or `compbench report {p} --out "
                             "report.html`; its dataset is named in its manifest.json")
