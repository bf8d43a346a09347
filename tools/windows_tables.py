"""Regenerate ``harness/measure/windows_tables.json``: the model tables the tools themselves read a window from.

compbench takes a transcript's window from its tool's own model table (``../shared/DESIGN.md``: "a window comes
from the tool's own model table"), never from litellm's where the tool does not use litellm. The tables live in
the tools' repositories; this script reads them from git clones and writes one compact JSON beside
``compbench.measure.models``, each table with the repository and commit it was read at:

* ``pi``: badlogic/pi-mono ``packages/ai/src/models.generated.ts`` (``MODELS[provider][model]``: ``contextWindow``,
  ``maxTokens``), every first-parent commit that changed it: pi ships the table in its package, so a session ran
  the table of its build, which the session's date approximates.
* ``catwalk``: charmbracelet/catwalk ``internal/providers/configs/*.json`` (each provider's ``id`` and its models'
  ``context_window`` / ``default_max_tokens``), every first-parent commit: Crush fetches catwalk at run time.
* ``roo-code`` / ``kilo-code``: ``packages/types/src/providers/*.ts`` of RooCodeInc/Roo-Code and
  Kilo-Org/kilocode-legacy (each ``export const <name>Models = {...}``: ``contextWindow``, ``maxTokens``) at one
  commit: the extension bundles them.

Rows are ``[first date, contextWindow, maxTokens]`` (maxTokens 0 where the table gives none), one per change
(catwalk's: one per change of the window).

    python tools/windows_tables.py --pi PI_MONO --catwalk CATWALK --roo ROO_CODE --kilo KILOCODE_LEGACY

(each a git directory; ``--out`` defaults to the package's file). The test of the loader names this command.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "harness" / "measure" / "windows_tables.json"
PI_FILE = "packages/ai/src/models.generated.ts"
CATWALK_DIR = "internal/providers/configs"
ROO_DIR = "packages/types/src/providers"

Rows = list[list[int | str]]
Table = dict[str, dict[str, Rows]]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True, capture_output=True,
                          text=True).stdout


def head(repo: Path) -> tuple[str, str]:
    commit, date = git(repo, "log", "-1", "--format=%H %cs").split()
    return commit, date


def commits(repo: Path, path: str) -> Iterator[tuple[str, str]]:
    """Every first-parent commit that changed ``path``, oldest first: (commit, committer date)."""
    for line in git(repo, "log", "--first-parent", "--reverse", "--format=%H %cs", "--", path).splitlines():
        commit, date = line.split()
        yield commit, date


def _same(row: list[int | str], window: int, out: int, by_window: bool) -> bool:
    return row[1] == window if by_window else row[1:] == [window, out]


def record(table: Table, provider: str, model: str, date: str, window: int, out: int, *, by_window: bool = False
           ) -> None:
    """Add a row when the model's figures change (a later row of the same day replaces the earlier one);
    ``by_window``: only when its window changes (catwalk's output limits change nightly; Crush's trigger reads
    the window alone), the row keeping the output limit of its first day."""
    rows = table.setdefault(provider, {}).setdefault(model, [])
    if rows and _same(rows[-1], window, out, by_window):
        return
    if rows and rows[-1][0] == date:
        rows.pop()
        if rows and _same(rows[-1], window, out, by_window):
            return
    rows.append([date, window, out])


_PI_PROVIDER = re.compile(r'^\t"?([^"\s]+?)"?: \{$')  # quoted from about 2025-12; bare before (anthropic: {)
_PI_MODEL = re.compile(r'^\t\t"?([^"\s]+?)"?: \{$')
_PI_FIELD = re.compile(r"^\t\t\t(contextWindow|maxTokens): (\d+),$")


def pi_models(text: str) -> Iterator[tuple[str, str, int, int]]:
    provider = model = ""
    fields: dict[str, int] = {}
    for line in text.splitlines():
        if m := _PI_PROVIDER.match(line):
            provider = m.group(1)
        elif m := _PI_MODEL.match(line):
            model, fields = m.group(1), {}
        elif (m := _PI_FIELD.match(line)) and model:
            fields[m.group(1)] = int(m.group(2))
            if len(fields) == 2:
                yield provider, model, fields["contextWindow"], fields["maxTokens"]
                model = ""


def pi(repo: Path) -> dict[str, object]:
    table: Table = {}
    for commit, date in commits(repo, PI_FILE):
        try:
            text = git(repo, "show", f"{commit}:{PI_FILE}")
        except subprocess.CalledProcessError:  # the commit deleted it
            continue
        for provider, model, window, out in pi_models(text):
            record(table, provider, model, date, window, out)
    commit, date = head(repo)
    return {"repo": "badlogic/pi-mono", "file": PI_FILE, "commit": commit, "date": date, "models": table}


def catwalk(repo: Path) -> dict[str, object]:
    table: Table = {}
    for commit, date in commits(repo, CATWALK_DIR):
        changed = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", "-m", "--first-parent",
                      commit, "--", CATWALK_DIR).split()
        for path in dict.fromkeys(changed):
            if not path.endswith(".json"):
                continue
            try:
                doc = json.loads(git(repo, "show", f"{commit}:{path}"))
            except (subprocess.CalledProcessError, json.JSONDecodeError):
                continue
            provider = doc.get("id") if isinstance(doc, dict) else None
            if not isinstance(provider, str):
                continue
            for m in doc.get("models") or []:
                if isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("context_window"), int):
                    record(table, provider, m["id"], date, m["context_window"], int(m.get("default_max_tokens") or 0),
                           by_window=True)
    commit, date = head(repo)
    return {"repo": "charmbracelet/catwalk", "file": f"{CATWALK_DIR}/*.json", "commit": commit, "date": date,
            "models": table}


_TABLE = re.compile(r"export const (\w+Models)\b[^=\n]*=\s*\{")
_KEY = re.compile(r'\s*(?:"([^"]+)"|\'([^\']+)\'|([A-Za-z_][\w.-]*))\s*:\s*\{')
_NUMBER = re.compile(r"(contextWindow|maxTokens)\s*:\s*([\d_]+)\s*[,\n}]")


def _block(text: str, start: int) -> int:
    """The index just past the brace that closes the one opened before ``start`` (strings and comments skipped)."""
    depth, i = 1, start
    while i < len(text) and depth:
        c = text[i]
        if c in "\"'`":
            end = text.find(c, i + 1)
            while end != -1 and text[end - 1] == "\\":
                end = text.find(c, end + 1)
            i = end if end != -1 else len(text)
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = i if i != -1 else len(text)
        elif text.startswith("/*", i):
            i = text.find("*/", i) + 1
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
        i += 1
    return i


def roo_models(text: str) -> Iterator[tuple[str, int, int]]:
    """Each model of each ``export const <name>Models = {...}``: its own (depth-1) contextWindow and maxTokens."""
    for t in _TABLE.finditer(text):
        end = _block(text, t.end())
        i = t.end()
        while i < end - 1:
            m = _KEY.match(text, i)
            if m is None:
                nxt = text.find("\n", i)
                i = nxt + 1 if nxt != -1 else end
                continue
            body_end = _block(text, m.end())
            body, own, j = text[m.end():body_end - 1], [], 0
            while j < len(body):  # blank out nested blocks (tiers: [{contextWindow ...}])
                if body[j] in "{[":
                    k = _block(body, j + 1)
                    own.append(" " * (k - j))
                    j = k
                else:
                    own.append(body[j])
                    j += 1
            fields = {f: int(v.replace("_", "")) for f, v in _NUMBER.findall("".join(own) + "\n")}
            if "contextWindow" in fields:
                yield m.group(1) or m.group(2) or m.group(3), fields["contextWindow"], fields.get("maxTokens", 0)
            i = body_end


def roo(repo: Path, name: str) -> dict[str, object]:
    commit, date = head(repo)
    table: Table = {}
    for path in git(repo, "ls-tree", "--name-only", commit, f"{ROO_DIR}/").split():
        if not path.endswith(".ts"):
            continue
        text = git(repo, "show", f"{commit}:{path}")
        for t in _TABLE.finditer(text):
            provider = Path(path).stem if len(_TABLE.findall(text)) == 1 else f"{Path(path).stem}:{t.group(1)}"
            one = text[t.start():_block(text, t.end())]
            for model, window, out in roo_models(one):
                record(table, provider, model, date, window, out)
    return {"repo": name, "file": f"{ROO_DIR}/*.ts", "commit": commit, "date": date, "models": table}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pi", type=Path, required=True)
    ap.add_argument("--catwalk", type=Path, required=True)
    ap.add_argument("--roo", type=Path, required=True)
    ap.add_argument("--kilo", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    doc = {"pi": pi(a.pi), "catwalk": catwalk(a.catwalk), "roo-code": roo(a.roo, "RooCodeInc/Roo-Code"),
           "kilo-code": roo(a.kilo, "Kilo-Org/kilocode-legacy")}
    a.out.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    for k, v in doc.items():
        models = v["models"]
        assert isinstance(models, dict)
        print(f"{k}: {sum(len(m) for m in models.values())} models in {len(models)} tables at {v['commit']}")


if __name__ == "__main__":
    main()
