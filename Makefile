# The README's two commands (`make demo`, `make test`) do all set-up themselves.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint bench bench-engine profile fuzz env clean

env: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@# Debian's Chromium for the report's browser test (skipped with a reason where it cannot be installed)
	-command -v chromium >/dev/null || (command -v apt-get >/dev/null && (apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1) || true
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check uv
	@# --compile-bytecode: imports stay fast where PYTHONDONTWRITEBYTECODE is set (uv does not compile by default)
	$(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) -e '.[dev]' \
		|| $(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m compbench.demo

test: $(STAMP)
	$(VENV)/bin/ruff check harness strategies reports tests tools
	$(PY) tools/layers.py
	tools/mypy-tree.sh
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check harness strategies reports tests tools
	$(PY) tools/layers.py
	tools/mypy-tree.sh

bench: $(STAMP)
	$(PY) -m compbench.bench

# issue 27's rows only: the engine's ratios to tokenizing once (a few minutes)
bench-engine: $(STAMP)
	$(PY) -m compbench.bench --engine

# where a run's time goes: pyinstrument over the bench's run, written to out/profile.{txt,html};
# PROFILE=every profiles every default configuration on the bundled samples at their own windows
PROFILE ?= base
profile: $(STAMP)
	$(PY) -m compbench.bench --profile $(PROFILE)

# 10,000 structure-aware inputs per importer; prints the count per format
fuzz: $(STAMP)
	COMPBENCH_FUZZ_EXAMPLES=10000 $(PY) -m pytest tests/data/formats/test_fuzz.py -q -s -p no:randomly

clean:
	rm -rf $(VENV) build *.egg-info
