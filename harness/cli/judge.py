"""``compbench.cli.judge`` — ``compbench judge``: the optional judged track on a finished run (Factory-style probes).

A model behind a local ``--api-base`` needs no key. Every call is counted on stderr with the time spent, every
retry is said as it happens, retries are bounded (:data:`RETRIES`), and :data:`GIVE_UP` failed calls in a row
end the command in one line instead of minutes of silent retrying.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

RETRIES = 2  # per model call (litellm's transient errors: rate limits, timeouts, 5xx)
GIVE_UP = 3  # failed calls in a row (each after its retries) before judge stops


class Watched:
    """A model (a :class:`~compbench.summarizers.Summarizer`) whose calls are counted as progress, and which
    stops the command after :data:`GIVE_UP` failures in a row (a server that is down, a wrong model name)."""

    def __init__(self, inner: Any, progress: Any, spec: str) -> None:
        self.inner, self.progress, self.spec = inner, progress, spec
        self.name = getattr(inner, "name", spec)
        self.failed_in_a_row = 0

    def summarize(self, request: Any) -> Any:
        from compbench.errors import CompbenchError

        result = self.inner.summarize(request)
        self.progress.tick()
        if result.error:
            self.failed_in_a_row += 1
            self.progress.note(f"{self.spec}: call failed: {result.error[:300]}")
            if self.failed_in_a_row >= GIVE_UP:
                raise CompbenchError(f"{self.spec}: {GIVE_UP} calls failed in a row, judge stopped (last: "
                                     f"{result.error[:200]}); check --agent/--judge, --api-base and the key")
        else:
            self.failed_in_a_row = 0
        return result


@click.command(short_help="Probe a run's compactions with a real model and a blind judge (optional).",
               epilog="""\b
Examples:
  COMPBENCH_API_KEY=... compbench judge out/run --agent litellm:gpt-4o-mini
  compbench judge out/run --agent litellm:llama3 --api-base http://localhost:8000/v1
  compbench judge out/run --agent cache-only:out/cache     answers recorded earlier, offline
  compbench judge out/run --agent litellm:gpt-4o-mini --dry-run   the probes, tokens and dollars, nothing sent
""")
@click.argument("run", type=click.Path(exists=True, file_okay=False))
@click.option("--agent", "agent_spec", required=True, help="Model answering probes: litellm:MODEL or cache-only:DIR.")
@click.option("--judge", "judge_spec", help="Blind judge (and probe writer); default: the --agent model.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Response cache for litellm models.")
@click.option("--api-base", help="Endpoint of an OpenAI-compatible server (a local model needs no key; a bare model "
                                 "name is sent to it as an OpenAI model).")
@click.option("--api-key", envvar="COMPBENCH_API_KEY", help="Never stored.")
@click.option("--max-events", default=50, show_default=True, type=click.IntRange(min=1),
              help="Compactions to probe at most.")
@click.option("--dry-run", is_flag=True, help="Count the probes, calls and tokens and price them; send nothing.")
@click.option("--yes", is_flag=True, help="Do not ask before spending (judge asks only on a terminal).")
def judge(run: str, agent_spec: str, judge_spec: str | None, cache_dir: str | None, api_base: str | None,
          api_key: str | None, max_events: int, dry_run: bool, yes: bool) -> None:
    """Probe RUN's compactions with a model and compare judged correctness with presence.

    It first says what it would send and cost (an offline pass over the same compactions and probes, priced at
    litellm's prices for the models): --dry-run stops there; on a terminal it asks before spending."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from compbench.cli.judge_cost import estimate
    from compbench.errors import UsageError
    from compbench.progress import Progress
    from compbench.run.judge import agreement, judge_run
    from compbench.summarizers import get

    for spec in (agent_spec, judge_spec or agent_spec):
        if spec.partition(":")[0] not in ("litellm", "cache-only", "mock"):
            raise UsageError(f"--agent/--judge take litellm:MODEL or cache-only:DIR, got {spec!r}")
        if not dry_run:  # a missing key ends here, before the estimate's replay
            _needs_key(spec, api_key, api_base)
    cost, high = estimate(Path(run), agent_spec, judge_spec or agent_spec, max_events)
    if cost[0].startswith("judge estimate: 0 probes"):
        raise UsageError(f"{run} has no successful compaction with facts to probe")
    click.echo("\n".join(cost), err=not dry_run)
    if dry_run:
        return
    if not yes and (high is None or high > 0) and sys.stdin.isatty() and sys.stderr.isatty():
        click.confirm("send these calls?", default=False, abort=True, err=True)
    progress = Progress(sys.stderr, None, verb="judge: made", noun="model calls", unknown="")

    def said(attempt: int, retries: int, error: str, wait: float) -> None:
        progress.note(f"retrying ({attempt}/{retries}) in {wait:.1f}s after {error[:200]}")

    def model(spec: str) -> Watched:
        opts: dict[str, Any] = {k: v for k, v in (("cache_dir", cache_dir), ("api_base", api_base),
                                                   ("api_key", api_key)) if v}
        if spec.startswith("litellm"):
            opts.update(retries=RETRIES, on_retry=said)
        return Watched(get(spec, **opts) if spec.startswith(("litellm", "cache-only")) else get(spec), progress, spec)

    agent = model(agent_spec)
    grader = model(judge_spec) if judge_spec else agent
    try:
        rows = judge_run(Path(run), agent, grader, max_events, {"api_key": api_key} if api_key else None)
    finally:
        progress.close()
    if not rows:
        raise UsageError(f"{run} has no successful compaction with facts to probe")
    if all(r["error"] for r in rows):
        raise UsageError(f"every one of the {len(rows)} model calls failed, nothing judged "
                         f"(first: {rows[0]['error'][:200]})")
    tmp = Path(run) / ".judged.parquet.tmp"
    pq.write_table(pa.Table.from_pylist(rows), tmp)
    tmp.replace(Path(run) / "judged.parquet")
    click.echo(f"{'kind':<14}{'probes':>8}{'present':>10}{'correct':>10}{'agreement':>11}")
    for kind, a in agreement(rows).items():
        click.echo(f"{kind:<14}{int(a['probes']):>8}{a['present']:>10.0%}{a['correct']:>10.0%}{a['agreement']:>11.0%}")
    errors = sum(1 for r in rows if r["error"])
    click.echo(f"{len(rows)} probes ({errors} failed calls) written to {Path(run) / 'judged.parquet'}")


def _needs_key(spec: str, api_key: str | None, api_base: str | None) -> None:
    """A litellm model with no key anywhere ends here, in one line, before any call (litellm would print
    its banners for every failed call). litellm's own banners are switched off for the calls that follow."""
    from compbench.errors import UsageError

    kind, _, name = spec.partition(":")
    if kind != "litellm":
        return
    from compbench.summarizers.llm import import_litellm

    litellm = import_litellm()
    litellm.suppress_debug_info = True
    if api_key or api_base or not name:
        return
    try:
        env = litellm.validate_environment(model=name)
    except Exception:  # an unknown provider: the call itself will say what is wrong
        return
    if isinstance(env, dict) and not env.get("keys_in_environment", True):
        missing = " or ".join(env.get("missing_keys") or [])
        raise UsageError(f"no API key for {name}: pass --api-key, set COMPBENCH_API_KEY"
                         + (f" or {missing}" if missing else "") + " (or --api-base for a local server)")
