# Two commands set everything up on a fresh machine:
#   make preview   virtualenv if missing, install, offline preview of the dev stack with the policy pack
#   make test      the whole test suite
PYTHON ?= python3
VENV ?= venv
BIN := $(VENV)/bin
STACK ?= dev
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: setup preview test check check-bad bench lint

# pip prints each package as it collects and installs it: a first install takes about a minute.
$(BIN)/.installed: requirements.txt requirements-dev.txt pyproject.toml
	@test -x $(BIN)/python || { echo "==> creating the virtualenv $(VENV)/"; $(PYTHON) -m venv $(VENV); }
	@echo "==> installing the Pulumi SDKs, the policy package (this repository, editable) and the test tools"
	$(PIP) install --progress-bar on -r requirements-dev.txt
	@echo "==> setup done: $(VENV)/ is ready"
	@touch $@

setup: $(BIN)/.installed

preview: setup
	$(BIN)/python -m tools.preview $(STACK)

test: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider

# Manifests that pass every rule: exits 0.
check: setup
	$(BIN)/python -m policies.check tests/manifests/corpus/good

# Manifests that break the rules on purpose: prints each violation; fails only if the checker does
# not find them (its exit code 1 is the expected result here).
check-bad: setup
	$(BIN)/python -m policies.check tests/manifests/corpus/bad; test $$? -eq 1

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy components policies tools app_sdk --ignore-missing-imports --exclude '(^|/)build/'

bench: setup
	$(BIN)/python -m benchmarks.analyzer_throughput
	$(BIN)/python -m benchmarks.checker_throughput
