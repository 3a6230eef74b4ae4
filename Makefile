# Two commands set everything up on a fresh machine:
#   make preview   virtualenv if missing, install, offline preview of the dev stack with the policy pack
#   make test      the whole test suite
PYTHON ?= python3
VENV ?= venv
BIN := $(VENV)/bin
STACK ?= dev

.PHONY: setup preview test check bench lint

$(BIN)/.installed: requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

setup: $(BIN)/.installed

preview: setup
	$(BIN)/python -m tools.preview $(STACK)

test: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider

check: setup
	$(BIN)/python -m policies.check tests/manifests/corpus

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy components policies tools app_sdk --ignore-missing-imports

bench: setup
	$(BIN)/python -m benchmarks.analyzer_throughput
	$(BIN)/python -m benchmarks.checker_throughput
