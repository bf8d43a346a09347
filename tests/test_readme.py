"""The README is the first screen a user reads (issue 40, item 9): the two commands and how to run compbench on your
own logs within its first 40 lines, the long reference in docs/ and linked, and that tests needing ../shared skip
without it. Every relative link of the README and docs/ leads to a file (and heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def test_the_first_screen_has_the_two_commands_and_your_own_logs() -> None:
    top = README.read_text(encoding="utf-8").splitlines()[:40]
    text = "\n".join(top)
    assert top[0] == "# compbench"
    assert any(x.startswith("make demo ") for x in top) and any(x.startswith("make test ") for x in top)
    assert "your own logs" in text.lower()
    assert ".venv/bin/compbench datasets import " in text and ".venv/bin/compbench run mine --out out/mine" in text
    assert ".venv/bin/compbench compare out/mine" in text and "source .venv/bin/activate" in text


def test_the_reference_moved_to_docs_and_is_linked() -> None:
    readme = README.read_text(encoding="utf-8")
    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    assert "](docs/reference.md)" in readme and len(readme.splitlines()) < 120
    for heading in ("## Commands", "### Your tool as it ran, and what to set", "### Strategy specs",
                    "## What a run measures", "## Configuration", "## Rankings, flags and the verdict",
                    "## Selecting transcripts", "## The report", "## Run directory", "## Scale", "## Fidelity",
                    "## Tokens", "## Development"):
        assert f"\n{heading}\n" in reference, heading


def test_it_says_tests_needing_shared_skip_without_it() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "`../shared`" in text and "**skip without it**" in text and "pytest -rs" in text


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), (page.name, target)
        if anchor and dest.suffix == ".md":
            headings = [_anchor(h) for h in re.findall(r"^#+ (.+)$", dest.read_text(encoding="utf-8"), re.M)]
            assert anchor in headings, (page.name, target)
