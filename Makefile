# One command to run the app, one to test it. Both create .venv on first use.
# The first Python 3.11 or newer on PATH, python3 first (Debian 13 and Ubuntu 24.04 have no
# python3.11); `make test PYTHON=/path/to/python` chooses another.
PYTHON ?= $(shell for p in python3 python3.14 python3.13 python3.12 python3.11; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; \
	done)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PACKAGE_STAMP := $(VENV)/.installed-package

.PHONY: run test test-all check lint format venv bench package package-test install-desktop clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: no Python 3.11 or newer on PATH (python3, python3.11-3.14); install one or set PYTHON=..."; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")' || \
		{ echo "error: $(PYTHON) is missing or older than 3.11 (set PYTHON=...)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,cluster]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) -m app

# One pytest-xdist worker more than the machine has cores (3 on the 2-core CI machine): a test
# that waits on its child processes, a deadline or a stalled peer leaves its core idle, and the
# third worker fills it (2026-11-29, the 2-core VM, same commit: 417 s with two workers, 370 s
# with three, no faster with four: the CPU is then the bound).
# Tests that share expensive work stay on one worker (xdist_group: "preset-runs" for the
# presets' reduced runs, one group per scheme module for its key pairs); tests/conftest.py
# makes the groups reach xdist's scheduler (pytest 9.2 stopped reading the name xdist sets).
# `make test PYTEST_WORKERS=0` runs everything in one process.
# The app and the tests are byte-compiled first (their __pycache__ folders; git ignores them):
# the suite starts hundreds of Python processes (the CLI, fork servers, load generators, Dask
# workers), and where PYTHONDONTWRITEBYTECODE is set, as in CI's image, each one compiled every
# app module it imported from source, 0.4-0.5 s a process. pip compiled the libraries at install;
# an editable install leaves the app's own sources to this step (0.2 s when nothing changed).
# pytest's rewritten asserts are cached the same way first (tests/assert_cache.py): without it
# each worker rewrote every test module while collecting, 11-15 s of CPU a worker.
# `make test` leaves out the tests marked `exhaustive`: further cases of a class it already
# covers once, at seconds of CPU each (the three heaviest presets' reduced runs, every signal
# where one stands for the rest, each fault of the Dask cluster); see CONTRIBUTING.md, "Two
# tiers". `make test-all` runs every test, and CI runs it.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
PYTEST_SELECT := -m "not exhaustive"
test-all: PYTEST_SELECT :=
test test-all: $(STAMP)
	$(PY) -m compileall -q -j 0 app tests
	$(PY) tests/assert_cache.py
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_SELECT)

# The type checker over app/ (strict on the Qt-free core; [tool.mypy] in pyproject.toml).
check: $(STAMP)
	$(PY) -m mypy

# Lint and format check (ruff; [tool.ruff] in pyproject.toml), the import contracts (import-linter:
# the floors of docs/ARCHITECTURE.md, [tool.importlinter] in pyproject.toml), dead code (vulture;
# [tool.vulture] in pyproject.toml, vulture_whitelist.py). `make format` applies ruff's fixes.
lint: $(STAMP)
	$(VENV)/bin/ruff check app tests benchmarks packaging docs
	$(VENV)/bin/ruff format --check app tests benchmarks packaging docs
	$(VENV)/bin/lint-imports --no-cache --no-logo
	$(VENV)/bin/vulture

format: $(STAMP)
	$(VENV)/bin/ruff check --fix app tests benchmarks packaging docs
	$(VENV)/bin/ruff format app tests benchmarks packaging docs

bench: $(STAMP)
	$(PY) benchmarks/bench_ops_overhead.py
	-$(PY) benchmarks/bench_loopback_rtt.py
	-$(PY) benchmarks/bench_gui.py
	-$(PY) benchmarks/bench_report.py

# The frozen app: dist/cryptobench/, one folder (its measured size: packaging/README.md, "Budgets").
$(PACKAGE_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,package]'
	touch $(PACKAGE_STAMP)

package: $(PACKAGE_STAMP)
	@command -v objdump >/dev/null && command -v objcopy >/dev/null || \
		{ echo "error: make package needs binutils (objdump, objcopy): sudo apt-get install binutils"; exit 1; }
	$(VENV)/bin/pyinstaller packaging/cryptobench.spec --distpath dist --workpath build/pyinstaller \
		--noconfirm --log-level WARN

# Runs the bundle built by `make package`: CLI, self-test, a loopback run, a report, the GUI.
package-test: $(STAMP)
	$(PY) packaging/smoke_test.py dist/cryptobench --budgets build/package-budgets.json

install-desktop:
	sh packaging/linux/install.sh dist/cryptobench

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
