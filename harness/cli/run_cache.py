"""``compbench.cli.run_cache`` — What ``compbench run`` keeps between runs, and where: the results cache it reads
and writes (never inside the logs), the widening rounds' decisions and the summary table remembered beside it, so
that a re-run whose rows all come from the cache decides and prints the same without computing them again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from compbench.errors import UsageError


def remembered_widening(cache: Any) -> Any:
    """:func:`compbench.decide.sweep.next_configurations`, remembered beside the results cache under the results it
    reads (:mod:`compbench.run.derived`): a re-run whose rows all come from the cache decides the same."""
    from compbench.decide.sweep import next_configurations
    from compbench.run.derived import frame_digest, remembered

    root = cache.root if cache is not None else None
    return lambda results: remembered(root, "widen", frame_digest(results), lambda: next_configurations(results))


def summary_of(run: Path, root: Path | None) -> str:
    """The run's summary table (:func:`compbench.decide.summary.summary_table`), remembered under ``root`` under
    the run's own bytes (its tables and its manifest but for the time it was written)."""
    from compbench.decide.summary import summary_table
    from compbench.run.derived import files_digest, remembered

    def timeless(p: Path, data: bytes) -> bytes:
        if p.suffix != ".json":
            return data
        d = json.loads(data)
        d.pop("created_at", None)
        return json.dumps(d, sort_keys=True).encode()

    files = sorted(p for p in run.iterdir() if p.is_file())
    return str(remembered(root, "summary", files_digest(files, timeless), lambda: summary_table(run)))


def open_results_cache(spec: Any, dataset: str, no_cache: bool, rebuild: bool, named: str | None, quiet: bool) -> Any:
    """The results cache the run reads and writes (:mod:`compbench.run.cache`), or None: ``--no-cache``, or a
    summarizer whose answers are not the content's (a model's). A directory inside the logs, where reading them
    would find it, is refused."""
    from compbench.run.cache import ResultsCache
    from compbench.summarizers import info

    if no_cache:
        return None
    if not info(spec.summarizer).deterministic:
        if not quiet:
            click.echo(f"results cache: not used (the summarizer {spec.summarizer} does not always answer alike)",
                       err=True)
        return None
    return ResultsCache(cache_dir(dataset, named), read=not rebuild)


def cache_dir(dataset: str, named: str | None) -> Path:
    """The cache directory (:func:`compbench.run.cache.cache_root`); one inside the logs, where reading them would
    find it, is refused."""
    from compbench.run.cache import cache_root

    root = cache_root(named)
    logs = Path(dataset).resolve()
    where = root.resolve()
    if logs.is_dir() and where.is_relative_to(logs) and not any(
            part.startswith(".") for part in where.relative_to(logs).parts):
        raise UsageError(f"the results cache {root} lies inside the logs {dataset}: name a directory outside them "
                         "(--results-cache DIR or COMPBENCH_CACHE_DIR)")
    return root
