# The two commands of the README. Both set up what is missing first (scripts/setup.sh).
.PHONY: setup demo test lint fixtures fuzz

PY := .venv/bin/python

setup:
	@bash scripts/setup.sh

# The main job: keyword-spotting firmware for the nRF52840, run on its emulated Cortex-M4.
demo: setup
	@$(PY) -m tinydeploy.demo

# The whole test suite (unit, golden, firmware, target tiers); CI runs exactly this.
test: setup
	@$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

lint: setup
	@.venv/bin/ruff check tinydeploy tests examples
	@.venv/bin/mypy tinydeploy examples

fixtures: setup
	@$(PY) tests/fixtures/make_fixtures.py

# Coverage-guided fuzzing of the loader and the inspect/plan/codegen path (atheris); CI runs
# 60 s, a longer run: make fuzz FUZZ_SECONDS=3600. Failing inputs land in
# tests/fixtures/fuzz_regressions/ and are replayed by tests/test_fuzz_regressions.py.
FUZZ_SECONDS ?= 600
fuzz: setup
	@$(PY) -m pytest tests/test_fuzz_regressions.py -q -p no:cacheprovider --mutations 2000
	@$(PY) tests/fuzz/run.py --seconds $(FUZZ_SECONDS)
