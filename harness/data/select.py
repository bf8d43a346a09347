"""``compbench.data.select`` — Which transcripts a command looks at: ``--source`` (the tool that recorded them) and
``--where`` (an expression over what each transcript is), so one tool's logs are tuned or compared without
importing them again.

The grammar, one line::

    FILTER := CLAUSE [and CLAUSE ...]
    CLAUSE := FIELD OP VALUE
    OP     := =  !=        text or number; VALUE may list alternatives (a|b) and use * and ? wildcards
              <  <=  >  >= a number (1000, 1_000, 1.5, 200k, 1m)
              ~            contains, ignoring case

Text matches ignoring case; a value with spaces is quoted (``project="my app"``). ``--source NAME`` (repeatable,
or ``a,b``) is ``source=NAME|...``, where a name also matches written with spaces or underscores
(``"claude code"``). Fields: before a replay (``run``, ``tune``) what the log records —
:data:`TRANSCRIPT_FIELDS`; on a finished run (``compare``, ``report``) also every results column with one value
per transcript (``window``, ``reference_input_tokens``, ``price_model``, ...). A filter that reads badly, names
no field or selects nothing is one line and exit 2; one whose alternatives partly match (``source=codex|pi``
where no pi log exists) selects what matched and names the rest (:meth:`Selection.unmatched`): "pi matched no
transcript".
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from compbench.errors import UsageError

T = TypeVar("T")

# what a transcript says about itself before any replay (and its run's results repeat, per transcript)
TRANSCRIPT_FIELDS = {
    "source": "the tool that recorded it (claude-code, codex, gemini-cli, ...)",
    "model": "the model it recorded",
    "project": "the working directory or project it recorded",
    "session": "its session (a sub-agent's is its parent's)",
    "transcript_id": "its id",
    "steps": "its model calls",
}
ALIASES = {"id": "transcript_id", "tool": "source", "agent": "source", "calls": "steps"}
OPS = ("<=", ">=", "!=", "=", "<", ">", "~")
EXAMPLE = '"model~sonnet and steps>=50"'
_CLAUSE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(<=|>=|!=|=|<|>|~)\s*(\"[^\"]*\"|'[^']*'|\S+)\s*$")
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_SUFFIX = {"k": 1_000, "m": 1_000_000}


def _number(text: str) -> float | None:
    t = text.strip().lower().replace("_", "").replace(",", "")
    scale = _SUFFIX.get(t[-1:], 1) if t else 1
    try:
        return float(t[:-1] if scale != 1 else t) * scale
    except ValueError:
        return None


def _norm(text: str) -> str:
    """Text as filters compare it: ignoring case, and spaces or underscores in a tool's name as its hyphens."""
    return re.sub(r"[\s_]+", "-", text.strip().lower())


@dataclass(frozen=True)
class Clause:
    field: str
    op: str
    value: str

    def matches(self, actual: object) -> bool:
        if self.op in ("<", "<=", ">", ">="):
            x, y = _as_float(actual), _number(self.value)
            if x is None or y is None or math.isnan(x):
                return False
            return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[self.op]
        text = "" if actual is None or (isinstance(actual, float) and math.isnan(actual)) else str(actual)
        if self.op == "~":
            return self.value.lower() in text.lower()
        hit = any(self._equal(text, actual, alt) for alt in self.value.split("|"))
        return hit if self.op == "=" else not hit

    @staticmethod
    def _equal(text: str, actual: object, alt: str) -> bool:
        wanted = _number(alt)
        have = _as_float(actual)
        if wanted is not None and have is not None and not any(c in alt for c in "*?"):
            return have == wanted
        return fnmatch.fnmatchcase(_norm(text), _norm(alt))

    def text(self) -> str:
        value = f'"{self.value}"' if re.search(r"\s", self.value) or not self.value else self.value
        return f"{self.field}{self.op}{value}"

    def alternatives(self) -> list[str]:
        """The values an ``=`` / ``!=`` clause lists (``a|b``: two); none for the others."""
        return self.value.split("|") if self.op in ("=", "!=") else []

    def missed(self, values: Iterable[object]) -> list[str]:
        """The alternatives that match none of ``values`` (what the field held)."""
        held = list(values)
        return [alt for alt in self.alternatives()
                if not any(self._equal("" if v is None else str(v), v, alt) for v in held)]


def _as_float(v: object) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float):
        return float(v)
    try:
        import numpy as np

        if isinstance(v, np.integer | np.floating):
            return float(v)
    except ImportError:  # pragma: no cover
        pass
    return None


@dataclass(frozen=True)
class Selection:
    """A parsed filter (every clause must hold); empty: every transcript."""

    clauses: tuple[Clause, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.clauses)

    def text(self) -> str:
        """The filter in the grammar (what a manifest records and a report shows)."""
        return " and ".join(c.text() for c in self.clauses)

    @property
    def fields(self) -> list[str]:
        return list(dict.fromkeys(c.field for c in self.clauses))

    def matches(self, values: Mapping[str, object]) -> bool:
        return all(c.matches(values.get(c.field)) for c in self.clauses)

    def check(self, known: Iterable[str], where: str) -> None:
        """Every field is one of ``known``: an unknown one is named with the known ones and a did-you-mean."""
        import difflib

        names = list(known)
        for f in self.fields:
            if f not in names:
                hint = difflib.get_close_matches(f, names, n=1)
                raise UsageError(f"--where: no field {f!r} {where}" + (f"; did you mean {hint[0]!r}?" if hint else "")
                                 + f" (fields: {', '.join(names)})")

    def unmatched(self, values: Mapping[str, Iterable[object]]) -> list[str]:
        """One line per clause whose alternatives partly match nothing ``values`` (field -> the values the
        transcripts held) records: ``source=codex|pi: pi matched no transcript``. A clause that matches nothing at
        all selects nothing, which is an error of its own (:func:`nothing`); a field not in ``values`` is not
        checked."""
        out = []
        for c in self.clauses:
            if c.field not in values or len(c.alternatives()) < 2:
                continue
            missed = c.missed(values[c.field])
            if missed and len(missed) < len(c.alternatives()):
                verb = "matched no transcript" + (" (it excludes none)" if c.op == "!=" else "")
                out.append(f"{c.text()}: {', '.join(missed)} {verb}")
        return out

    def before_replay(self) -> Selection:
        """Checked against what a transcript records before any replay (``run``, ``tune``): itself."""
        self.check(TRANSCRIPT_FIELDS, "before a replay (run and tune read what a log records: compare and report "
                                      "also read a run's per-transcript results columns)")
        return self

    def filter(self, items: Iterable[T], fields_of: Callable[[T], Mapping[str, object]],
               what: str = "the dataset", said: Callable[[str], None] | None = None) -> Iterator[T]:
        """The items that match, streamed; when none does, one line naming what the selected fields held; at the
        end, ``said`` is told each alternative that matched nothing (:meth:`unmatched`)."""
        if not self:
            yield from items
            return
        self.before_replay()
        seen: dict[str, dict[str, None]] = {f: {} for f in self.fields}
        listed = {c.field for c in self.clauses if len(c.alternatives()) > 1}
        held: dict[str, dict[Any, None]] = {f: {} for f in listed}  # distinct values: a few tools, models, projects
        matched = 0
        for item in items:
            values = fields_of(item)
            for f in listed:
                held[f][values.get(f)] = None
            if self.matches(values):
                matched += 1
                yield item
            elif not matched:
                for f in seen:
                    if len(seen[f]) < 12:
                        seen[f][str(values.get(f))] = None
        if not matched:
            raise UsageError(nothing(self, what, {f: list(v) for f, v in seen.items()}))
        if said is not None:
            for line in self.unmatched(held):
                said(line)


def nothing(selection: Selection, what: str, seen: Mapping[str, Sequence[str]]) -> str:
    """The one line of a filter that selects nothing, with the values its fields held."""
    held = "; ".join(f"{f}: {', '.join(v[:11]) + (', ...' if len(v) > 11 else '')}" for f, v in seen.items() if v)
    return f"no transcript of {what} matches {selection.text()!r}" + (f" (it holds {held})" if held else "")


def parse(where: str | None = None, sources: Sequence[str] = ()) -> Selection:
    """``--where`` text and ``--source`` names as one selection (no filter: an empty one)."""
    clauses: list[Clause] = []
    names = [n.strip() for s in sources for n in s.split(",") if n.strip()]
    if names:
        clauses.append(Clause("source", "=", "|".join(names)))
    if where is not None and where.strip():
        for part in _AND.split(where.strip()):
            m = _CLAUSE.match(part)
            if not m:
                raise UsageError(f"--where {where!r}: cannot read {part.strip()!r}; expected FIELD OP VALUE "
                                 f"[and ...] with OP one of {' '.join(OPS)}, e.g. {EXAMPLE}")
            field, op, value = m.group(1).lower(), m.group(2), m.group(3)
            if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
                value = value[1:-1]
            if op in ("<", "<=", ">", ">=") and _number(value) is None:
                raise UsageError(f"--where {where!r}: {field}{op} compares numbers, got {value!r} (e.g. "
                                 "steps>=50, window<200k)")
            clauses.append(Clause(ALIASES.get(field, field), op, value))
    return Selection(tuple(clauses))


def per_transcript_columns(results: Any) -> list[str]:
    """The results columns a filter may read: those with one value per transcript (what a transcript is, not what
    a strategy did with it)."""
    first = results.groupby("transcript_id", sort=False).nunique(dropna=False)
    return ["transcript_id", *(c for c in first.columns if (first[c] <= 1).all())]


def select_results(results: Any, selection: Selection, what: str, said: Callable[[str], None] | None = None) -> Any:
    """The rows of the transcripts ``selection`` picks from a run's ``results`` (every strategy's row of each);
    a field that differs between one transcript's strategies, or a filter that selects nothing, is an error;
    ``said`` is told each alternative that matched nothing (:meth:`Selection.unmatched`)."""
    if not selection:
        return results
    allowed = per_transcript_columns(results)
    for f in selection.fields:
        if f in results.columns and f not in allowed:
            raise UsageError(f"--where: {f} differs between the strategies of a transcript; a filter selects "
                             "transcripts by what they are (source, model, project, window, steps, "
                             "reference_input_tokens, ...)")
    selection.check(allowed, "in the run's results")
    first = results.drop_duplicates("transcript_id")
    keep = [str(row["transcript_id"]) for row in first.to_dict("records") if selection.matches(row)]
    if not keep:
        seen = {f: [str(v) for v in dict.fromkeys(first[f])][:12] for f in selection.fields}
        raise UsageError(nothing(selection, what, seen))
    if said is not None:
        for line in selection.unmatched({f: list(first[f]) for f in selection.fields if f in first.columns}):
            said(line)
    return results[results["transcript_id"].astype(str).isin(set(keep))].reset_index(drop=True)
