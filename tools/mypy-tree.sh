#!/usr/bin/env bash
# mypy cannot follow setuptools' package-dir mapping (compbench -> harness/, compbench.strategies ->
# strategies/, compbench.reports -> reports/), so type-check a symlink tree laid out as the import names.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="$root/build/mypy/compbench"
rm -rf "$root/build/mypy"
mkdir -p "$tree"
for f in "$root"/harness/*; do ln -s "$f" "$tree/$(basename "$f")"; done
ln -s "$root/strategies" "$tree/strategies"
ln -s "$root/reports" "$tree/reports"
cd "$root"
exec "${MYPY:-$root/.venv/bin/mypy}" "$@"
