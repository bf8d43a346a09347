"""``compbench.cli.datasets`` — ``compbench datasets import|inspect|validate|synth``.

Heavy libraries load inside the commands, so ``compbench --help`` stays fast. User errors are raised as
:class:`~compbench.errors.CompbenchError` (``compbench.cli.main`` prints one line, exit code 2).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from compbench.cli.options import IMPORT_HINT, SKIP_LINES_HINT, Registered, broken_lines, refuse_runs
from compbench.data.formats.catalog import FORMATS, IMPORTERS

# a built-in or a plug-in's importer (the compbench.data.formats entry points); an unknown name gets a did-you-mean
FORMAT_CHOICE = Registered(IMPORTERS.get, "|".join(FORMATS) + "|...")


def _default() -> str:
    from compbench.data.dataset import default_dataset

    return str(default_dataset())


@click.group(short_help="Import, inspect, validate or synthesize transcript datasets.")
def datasets() -> None:
    """Import transcripts of any supported format into a dataset, inspect, validate, synthesize."""


DOWNLOAD_HELP = ("Let a hf:OWNER/NAME dataset missing from the datasets cache be fetched from the Hugging Face Hub "
                 "(offline otherwise).")
KEEP_EMPTY_HELP = ("Keep sessions with no reply (a prompt and nothing after it, as Crush stores many): left out by "
                   "default, counted.")
ON_ERROR_HELP = ("fail: the first unreadable file or line aborts and nothing is written; skip: warn, record and "
                 "skip unreadable files; skip-lines: also keep a file with broken lines, skipping only those lines.")


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def by_format(formats: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(formats.items()))


@datasets.command("import", short_help="Import transcript files or folders (any format) into a dataset.")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--out", required=True, type=click.Path(), help="Dataset directory to write (atomically).")
@click.option("--format", "fmt", type=FORMAT_CHOICE, help="Force one format instead of detecting each file's.")
@click.option("--on-error", type=click.Choice(["fail", "skip", "skip-lines"]), default="fail", show_default=True,
              help=ON_ERROR_HELP)
@click.option("--force", is_flag=True, help="Replace an existing dataset at --out.")
@click.option("--keep-empty", is_flag=True, help=KEEP_EMPTY_HELP)
@click.option("--download", is_flag=True, help=DOWNLOAD_HELP)
def import_(paths: tuple[str, ...], out: str, fmt: str | None, on_error: str, force: bool, keep_empty: bool,
            download: bool) -> None:
    """Import files or directories (any mix of formats) into a parquet dataset; also Hugging Face datasets:
    hf:OWNER/NAME[/CONFIG][:SPLIT][#COLUMN], or a folder saved with save_to_disk (one transcript a row)."""
    from compbench.data.importing import write_dataset

    def warn(msg: str) -> None:
        click.echo(f"warning: {msg}", err=True)

    refuse_runs(paths, "datasets import")
    with broken_lines(SKIP_LINES_HINT):
        r = write_dataset(Path(out), paths, fmt, on_error, warn, force=force, keep_empty=keep_empty,
                          download=download)
    click.echo(f"imported {plural(r.transcripts, 'transcript')} ({by_format(r.formats)}); "
               f"{plural(len(r.errors), 'error')} skipped"
               f"{extras(*_lines_and_records(r.skipped_lines), *_merges(r.merged), len(r.unsupported))}"
               f"{_empty(len(r.empty), 'left out (--keep-empty imports them)')}; written to {out}")


def _empty(n: int, what: str) -> str:
    return f"; {plural(n, 'empty session')} (no reply) {what}" if n else ""


def _merges(merged: list[dict[str, Any]]) -> tuple[int, int]:
    """Resumed sessions merged into their continuation, and aider runs read from their request log."""
    aider = sum(1 for m in merged if m.get("via"))
    return len(merged) - aider, aider


def _lines_and_records(skipped: list[dict[str, Any]]) -> tuple[int, int]:
    """Broken lines of text files, and unreadable records of stores (which have no line)."""
    records = sum(1 for s in skipped if s.get("line") is None)
    return len(skipped) - records, records


def extras(lines: int, records: int, merged: int, aider: int = 0, unsupported: int = 0) -> str:
    """The parts of a summary line that appear only when something happened."""
    return (f"; {plural(lines, 'broken line')} skipped" if lines else "") + (
        f"; {plural(records, 'unreadable message')} of stores skipped (their sessions kept)" if records else "") + (
        f"; {plural(aider, 'aider run')} of the chat history read from the request log instead (merged)"
        if aider else "") + (
        f"; {plural(merged, 'resumed session')} merged into {'their' if merged != 1 else 'its'} continuation"
        if merged else "") + (f"; {plural(unsupported, 'file')} of known tools compbench does not read, skipped"
                              if unsupported else "")


# (key, heading, clip): text clipped to that many characters (a path keeps its end; --wide clips nothing), -1 never
# clipped (an id is what --where id=... and a report's drill-down take: a clipped one finds nothing), 0 a figure
TABLE: tuple[tuple[str, str, int], ...] = (
    ("id", "transcript", -1), ("source", "format", 14), ("n_messages", "msgs", 0), ("n_user", "user", 0),
    ("n_assistant", "asst", 0), ("n_tool", "tool", 0), ("n_tool_calls", "calls", 0), ("tokens", "tokens", 0),
    ("recorded_last_input", "last rec", 0), ("recorded_max_input", "max rec", 0), ("cmp", "cmp", 0),
    ("where", "project or file", 36),
)
LEGEND = ("msgs: messages (user, asst, tool by role); calls: tool calls; tokens: compbench's count of the messages",
          "last rec, max rec: the prompt tokens the tool's API recorded on the last call and on the largest (0: the "
          "log records no per-call usage)",
          "cmp: compactions the log records, or where it records none those inferred at the falls of its recorded "
          "prompt (both replayed as it ran); (n inferred): those with no marker in the log",
          "project or file: the project the log or its folder names, else the file")


def compactions_of(t: Any) -> tuple[int, int]:
    """The compactions as the transcript ran (what the ``recorded`` row replays) and how many of them are inferred:
    those the log records, the ones it marks as inferred among them (a Gemini CLI compression read off a drop in
    recorded input); where it records none, those inferred at the falls of its recorded prompt."""
    from compbench.strategies.recorded import inferred_falls

    if t.compactions:
        return len(t.compactions), sum(1 for rc in t.compactions if rc.meta.get("inferred"))
    falls = len(inferred_falls(t))
    return falls, falls


def where(t: Any) -> str:
    """The project a transcript belongs to (as the log, or the folder it was found in, says), else its file: a
    home folder written ``~``, a path under the current folder relative to it."""
    from compbench.data.dataset import project_of

    found = project_of(t) or str(t.meta.get("path") or "")
    if not found:
        return "-"
    p = Path(found)
    for base, shown in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            rel = p.relative_to(base)
        except ValueError:
            continue
        return f"{shown}{rel.as_posix()}" if str(rel) != "." else shown.rstrip("/") or "."
    return found


def _clip(text: str, width: int, tail: bool) -> str:
    if width < 0 or len(text) <= width:
        return text
    return "…" + text[-(width - 1):] if tail else text[:width - 1] + "…"


def format_table(rows: list[dict[str, Any]], tokenizer: str, legend: bool = True, wide: bool = False) -> list[str]:
    """Columns as wide as their widest cell (figures never run together, whatever their size): ids whole, other
    text clipped with a mark (nothing with ``wide``), figures with thousands separators; then what the columns
    mean, and the total."""
    from compbench.textable import table

    cells = [[_clip(str(r.get(k, "")), -1 if wide else w, k == "where") if w else f"{r[k]:,}" for k, _, w in TABLE]
             for r in rows]
    out = table([h for _, h, _ in TABLE], cells, [not w for _, _, w in TABLE])
    total = sum(r["tokens"] for r in rows)
    return [*out, *(LEGEND if legend else ()),
            f"{len(rows)} transcript{'s' * (len(rows) != 1)}, {total:,} tokens ({tokenizer})"]


def format_calibration(cal: Any) -> list[str]:
    """The calibration tables: every tokenizer uncorrected; the default tokenizer with and without each model
    family's correction; the hidden overhead per format as a run models it, with the run options that set
    them."""
    out = ["calibration against recorded API usage (only calls before the first recorded compaction)",
           "error = |counted + overhead - recorded| / recorded; in the first two tables each session's overhead is a",
           "constant, its median(recorded - counted) (the counting error alone)",
           f"{'tokenizer':<14}{'format':<16}{'sessions':>9}{'calls':>7}{'overhead':>10}{'median err':>12}"
           f"{'p90 err':>10}"]
    for c in cal.rows:
        out.append(f"{c.tokenizer:<14}{c.source:<16}{c.sessions:>9}{c.calls:>7}{c.overhead:>10,.0f}"
                   f"{c.median_error:>12.1%}{c.p90_error:>10.1%}")
    if not cal.rows:
        out.append("(no recorded usage before a compaction in these transcripts)")
        return out
    if not cal.corrections:
        return out
    out += ["", "o200k_base counts corrected for the recorded model's family, as `compbench run` counts by default",
            "(`--token-correction none` turns it off, `--token-correction FAMILY` forces one family's)",
            f"{'format':<16}{'family':<9}{'correction':<32}{'sessions':>9}{'calls':>7}{'uncorrected':>16}"
            f"{'corrected':>16}",
            f"{'':<16}{'':<9}{'':<32}{'':>9}{'':>7}{'median':>8}{'p90':>8}{'median':>8}{'p90':>8}"]
    for r in cal.corrections:
        out.append(f"{r.source:<16}{r.family:<9}{r.correction:<32}{r.sessions:>9}{r.calls:>7}{r.raw_median:>8.1%}"
                   f"{r.raw_p90:>8.1%}{r.median_error:>8.1%}{r.p90_error:>8.1%}")
    out += format_overheads(cal.overheads)
    return out


def format_overheads(rows: Any) -> list[str]:
    """The hidden overhead a run adds (`--system-tokens auto`): a fixed part from each session's first call and
    a growth rate, against the former constant (the session's median), on the first call and on every call."""
    def cell(x: Any) -> str:
        return f"{'-':>8}{'':>8}" if x is None else f"{x.median:>8.1%}{x.p90:>8.1%}"

    out = ["", "hidden overhead (system prompt, tool schemas, what the log omits), as `run --system-tokens auto` adds "
               "it: a fixed", "part from each session's first recorded call and a growth rate per counted token "
               "from its other calls; without", "recorded usage, its format's defaults (`--system-tokens N` sets one "
               "fixed part for all). Error of the first", "call (one per session) and of every call, against the "
               "former constant overhead and with the format's defaults:",
           f"{'format':<16}{'sessions':>9}{'calls':>7}{'fixed':>8}{'rate':>7}{'constant (median)':>32}"
           f"{'fixed + rate':>32}{'format default':>32}",
           f"{'':<16}{'':>9}{'':>7}{'':>8}{'':>7}" + f"{'first':>16}{'every call':>16}" * 3,
           f"{'':<16}{'':>9}{'':>7}{'':>8}{'':>7}" + f"{'median':>8}{'p90':>8}" * 6]
    flagged = []
    for r in rows:
        out.append(f"{r.source:<16}{r.sessions:>9}{r.calls:>7}{r.fixed:>8,}{r.rate / 1000:>7.3f}"
                   f"{cell(r.median_first)}{cell(r.median_calls)}{cell(r.first)}{cell(r.calls_error)}"
                   f"{cell(r.default_first)}{cell(r.default_calls)}")
        flagged += r.flagged
    out += [f"! {x}" for x in flagged]
    return out


@datasets.command(short_help="Per transcript: messages, tool calls, tokens, recorded usage; --calibrate.")
@click.argument("dataset", nargs=-1)
@click.option("--calibrate", "with_calibration", is_flag=True,
              help="Compare our token counts (every tokenizer; o200k_base also with the model family's correction "
                   "a run applies) with the recorded API usage, and give each format's hidden overhead (its "
                   "errors on the first call and on every call; sessions whose fit stays poor are named).")
@click.option("--tokenizer", default="o200k_base", show_default=True, help="Tokenizer of the tokens column.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--wide", is_flag=True, help="Every cell whole: the project or file too (ids are never clipped).")
def inspect(dataset: tuple[str, ...], with_calibration: bool, tokenizer: str, fmt: str, wide: bool) -> None:
    """Per transcript: format, messages by role, tool calls, our tokens, recorded usage, compactions.

    DATASET (one or more) is a dataset directory or raw transcript files' file/folder; default: the bundled
    samples.
    """
    from collections.abc import Iterator

    from compbench.data.dataset import summary_row
    from compbench.data.importing import iter_transcripts
    from compbench.data.transcript import Transcript
    from compbench.measure.tokens import TOKENIZERS, TokenCounter

    counter = TokenCounter(tokenizer)
    rows: list[dict[str, Any]] = []

    def warn(msg: str) -> None:
        click.echo(f"warning: {msg}", err=True)

    def tap() -> Iterator[Transcript]:
        """Rows are taken as the transcripts stream past, so calibration needs no second pass."""
        for path in dataset or (_default(),):
            yield from taken(path)

    def taken(path: str) -> Iterator[Transcript]:
        from compbench.data.dataset import project_of

        for t in iter_transcripts(path, warn=warn):
            n, inferred = compactions_of(t)
            rows.append({**summary_row(t), "tokens": sum(counter.index(t).message_tokens), "where": where(t),
                         "project": project_of(t), "file": str(t.meta.get("path") or ""), "n_inferred": inferred,
                         "cmp": f"{n:,}" + (f" ({inferred:,} inferred)" if inferred else "")})
            yield t

    refuse_runs(dataset, "datasets inspect")
    cal: Any = None
    with broken_lines(IMPORT_HINT):
        if with_calibration:
            from compbench.measure.token_accuracy import calibrate

            cal = calibrate(tap(), TOKENIZERS)
        else:
            for _ in tap():
                pass
    if not rows:
        from compbench.errors import UsageError

        raise UsageError(f"{', '.join(dataset) or _default()}: no transcripts found (no transcript file, or none "
                         "readable)")
    if fmt == "json":
        doc: dict[str, Any] = {"tokenizer": tokenizer,
                               "transcripts": [{k: v for k, v in r.items() if k not in ("path", "where", "cmp")}
                                               for r in rows]}
        if with_calibration:
            from dataclasses import asdict

            doc["calibration"] = [asdict(c) for c in cal.rows]
            doc["token_correction"] = [asdict(c) for c in cal.corrections]
            doc["overhead"] = [asdict(c) for c in cal.overheads]
        click.echo(json.dumps(doc, indent=2))
        return
    for line in format_table(rows, tokenizer, wide=wide):
        click.echo(line)
    if with_calibration:
        click.echo("")
        for line in format_calibration(cal):
            click.echo(line)


@datasets.command(short_help="Read files as import would, writing nothing; exit 2 on any failure.")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=FORMAT_CHOICE, help="Force one format instead of detecting each file's.")
@click.option("--skip-lines", is_flag=True,
              help="Count broken lines as skipped, as `import --on-error skip-lines` would, instead of failing.")
@click.option("--keep-empty", is_flag=True, help=KEEP_EMPTY_HELP)
@click.option("--download", is_flag=True, help=DOWNLOAD_HELP)
def validate(paths: tuple[str, ...], fmt: str | None, skip_lines: bool, keep_empty: bool, download: bool) -> None:
    """Read everything exactly as `datasets import` would, writing nothing: one line per file (or dataset),
    then the transcripts by format; exit 2 if any file failed."""
    from compbench.data.importing import Empty, Imported, Merged, Note, Unsupported, collect
    from compbench.errors import UsageError

    if not paths and not Path(_default()).exists():
        raise UsageError(f"the bundled sample dataset is missing at {_default()}; give files or folders")
    refuse_runs(paths, "datasets validate")
    rows: dict[str, dict[str, Any]] = {}  # one per file, dataset, failure or merge, in the order met
    formats: dict[str, int] = {}
    lines = records = merged = aider = unsupported = broken = empty = 0
    for ev in collect(paths or (_default(),), fmt, "skip-lines" if skip_lines else "skip", keep_empty, download):
        if isinstance(ev, Empty):
            empty += 1
            rows.setdefault(ev.file, {"n": 0, "sources": set(), "dataset": False, "lines": 0})
            rows[ev.file]["empty"] = rows[ev.file].get("empty", 0) + 1
        elif isinstance(ev, Imported):
            row = rows.setdefault(ev.file, {"n": 0, "sources": set(), "dataset": ev.dataset, "lines": 0})
            row["n"] += 1
            row["sources"].add(ev.transcript.source)
            for key in ("unknown_records", "unknown_events"):  # never fatal, always said
                for kind, count in dict(ev.transcript.meta.get(key) or {}).items():
                    row.setdefault("unknown", {})[kind] = row.get("unknown", {}).get(kind, 0) + count
            formats[ev.transcript.source] = formats.get(ev.transcript.source, 0) + 1
        elif isinstance(ev, Merged):
            aider += bool(ev.via)
            merged += not ev.via
            rows[f"merged {ev.file} {ev.id}"] = {"text": f"MERGED {ev}", "file": ev.file}
        elif isinstance(ev, Note):
            rows[f"note {len(rows)}"] = {"text": f"note: {ev.text}"}
        elif isinstance(ev, Unsupported):
            unsupported += 1
            rows[f"skip {len(rows)}"] = {"text": f"SKIP  {ev.file}: {ev.reason}"}
        elif ev.what == "line":
            row = rows.setdefault(ev.error.path, {"n": 0, "sources": set(), "dataset": False, "lines": 0})
            if ev.error.line is None:  # a store's unreadable message: its session kept
                records += 1
                row["records"] = row.get("records", 0) + 1
            else:
                lines += 1
                row["lines"] += 1
        else:
            rows[f"fail {len(rows)}"] = {"text": f"FAIL  {ev.error}", "failed": True}
            broken += getattr(ev.error, "broken_line", False)
    ok = failed = 0
    merged_files: set[str] = set()  # a file whose sessions were all merged into others' is valid too
    for label, row in rows.items():
        if "text" in row:
            failed += bool(row.get("failed"))
            if row["text"].startswith("MERGED"):
                merged_files.add(row["file"])
            click.echo(row["text"])
            continue
        ok += 1
        sources = ", ".join(sorted(row["sources"])) or "-"
        skipped = f"; {plural(row['lines'], 'broken line')} skipped" if row["lines"] else ""
        if row.get("records"):
            skipped += f"; {plural(row['records'], 'unreadable message')} skipped (their sessions kept)"
        if row.get("empty"):
            skipped += f"; {plural(row['empty'], 'empty session')} (no reply) left out"
        if row.get("unknown"):
            skipped += "; unknown record types: " + ", ".join(f"{k} {v}" for k, v in sorted(row["unknown"].items()))
        click.echo(f"OK    {label}{' (dataset)' * row['dataset']} ({plural(row['n'], 'transcript')}, {sources}"
                   f"{skipped})")
    ok += len(merged_files - rows.keys())
    if ok + failed == 0:  # as import: nothing to import is an error (the files skipped are listed above)
        known = f" ({plural(unsupported, 'file')} of known tools compbench does not read)" if unsupported else ""
        raise UsageError(f"no transcript files in {', '.join(paths) or _default()}{known}")
    n = sum(formats.values())
    click.echo(f"{ok} valid, {failed} invalid; {plural(n, 'transcript')}"
               f"{f' ({by_format(formats)})' if formats else ''}{extras(lines, records, merged, aider, unsupported)}"
               f"{_empty(empty, 'left out (--keep-empty keeps them)')}")
    if broken:
        click.echo(f"{plural(broken, 'file')} failed on a broken line: --skip-lines (here) or `import --on-error "
                   "skip-lines` skips such lines and keeps the rest of the file")
    if failed:
        sys.exit(2)


@datasets.command(short_help="Synthetic sessions with planted facts (known ground truth).")
@click.option("--n", "n", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True)
@click.option("--turns", default=40, show_default=True, type=click.IntRange(min=2))
@click.option("--out", required=True, type=click.Path(), help="Dataset directory (or a .jsonl file) to write.")
def synth(n: int, seed: int, turns: int, out: str) -> None:
    """Generate synthetic sessions with planted facts (deterministic for a seed)."""
    from compbench.data.formats.native import write
    from compbench.data.synth import generate

    o = Path(out)
    if o.suffix == ".jsonl":
        write(generate(n, seed, turns), o)
    else:
        import tempfile

        from compbench.data.importing import write_dataset

        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "synth.jsonl"
            write(generate(n, seed, turns), f)
            write_dataset(o, [f])
    click.echo(f"{n} synthetic transcripts (seed {seed}, {turns} turns) written to {out}")
