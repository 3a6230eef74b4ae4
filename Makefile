# Two commands set everything up on a fresh machine:
#   make preview   virtualenv if missing, install, offline preview of the dev stack with the policy pack
#   make test      the whole test suite (what CI runs, through .ci/run)
# `make help` lists every target. Times measured on a 2-core, 24 GiB machine: see docs/getting-started.md.
PYTHON ?= python3
VENV ?= venv
BIN := $(VENV)/bin
STACK ?= dev
PIP := $(BIN)/python -m pip --disable-pip-version-check
# PYTHONDONTWRITEBYTECODE emptied for the test run: where it is set (this project's machines) pytest rewrites
# the asserts of every test module again on each run (3 to 4 s of each run's start, and of each xdist worker's),
# since it keeps the rewritten modules only as bytecode (tests/__pycache__, ignored by git). The processes the
# tests start inherit it, and keep their bytecode too (in __pycache__ folders git ignores).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -p no:cacheprovider

.DEFAULT_GOAL := help
.PHONY: help setup engines preview outputs observability test test-fast check check-bad lint docs docs-serve bench

help: ## list the targets
	@echo "make TARGET [STACK=dev]   (STACK: a Pulumi.<stack>.yaml of this folder)"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/\1|\2/' | awk -F'|' '{printf "  %-12s %s\n", $$1, $$2}'

# pip prints each package as it collects and installs it; the first install is measured in
# docs/getting-started.md.
$(BIN)/.installed: requirements.txt requirements-dev.txt requirements-docs.txt pyproject.toml
	@test -x $(BIN)/python || { echo "==> creating the virtualenv $(VENV)/"; $(PYTHON) -m venv $(VENV); }
	@echo "==> installing the Pulumi SDKs, the policy package (this repository, editable) and the test tools"
	$(PIP) install --progress-bar on -r requirements-dev.txt
	@echo "==> setup done: $(VENV)/ is ready"
	@touch $@

# The repository's own modules are compiled to bytecode here, as pip compiles an installed package:
# an editable install does not, and where PYTHONDONTWRITEBYTECODE is set (this project's machines)
# nothing ever writes it, so each command compiled ~100 modules from source again: 0.17 s of the
# offline preview and most of the checker's start-up. Only what changed since is compiled.
BYTECODE_DIRS := components policies offline tools observability gpu_aks_plugin app_sdk benchmarks testbed __main__.py
# policies/venv: the pack's PulumiPolicy.yaml says `virtualenv: venv`, and the Pulumi CLI starts the pack
# with that folder's python (`pulumi preview --policy-pack policies`). It is a virtualenv of its own that sees
# this checkout's packages, which hold everything the pack needs (tools/overlay_venv.py), not a link to ./venv:
# Pulumi's `pulumi install` in policies/ runs `python -m venv venv` there first, which fails over a link.
POLICY_VENV_MARK := policies/venv/lib/python3*/site-packages/gpu-aks-overlay.pth
setup: $(BIN)/.installed ## create ./venv and install everything (requirements-dev.txt)
	@$(BIN)/python -m compileall -q $(BYTECODE_DIRS) >/dev/null
	@test -n "$$(ls $(POLICY_VENV_MARK) 2>/dev/null)" || $(BIN)/python -m tools.overlay_venv policies/venv $(VENV)

# The owners' programs the engine and cluster tiers run, built from the Go modules under testbed/engines/
# into build/engines/bin (testbed/build.py; a second run takes seconds). Needs Go 1.26.
engines: setup ## build the Pulumi CLI, its language hosts, the stand-in providers and the control plane (needs Go)
	$(BIN)/python -m testbed.build build

# Without Go the engine and cluster tiers are skipped with one line; under CI=true they fail instead.
ENGINES_IF_GO = @if command -v go >/dev/null 2>&1; then $(MAKE) --no-print-directory engines; \
	else echo "==> no Go on PATH: the engine and cluster tiers are skipped (make engines needs Go 1.26)"; fi

preview: setup ## offline preview of STACK with the policy pack, ending with a summary of the stack
	$(BIN)/python -m tools.preview $(STACK)

# POLICY_PACK_CONFIG=FILE: the pack's config, as `pulumi preview --policy-pack-config FILE`. A failed
# preview says why on stderr, and leaves neither the file nor a .tmp behind; so does a killed one (a CI
# timeout's SIGTERM, Ctrl-C): the preview runs in the background so that `wait` returns at the signal
# (a shell runs its traps only once a foreground command ends), and the EXIT trap stops it (`jobs -p`:
# whenever the signal comes; deaf to a second signal, which make sends after a group's) and removes the
# .tmp, which is named before it exists. GNU make passes SIGTERM
# on to this shell (`fatal_error_signal`). The file is named after the stack only once the preview, which
# refuses a stack name Pulumi refuses, has succeeded.
outputs: setup ## write build/outputs-STACK.json: the stack's outputs, as --platform and the doctor read them [POLICY_PACK_CONFIG=FILE]
	@mkdir -p build
	@tmp=build/outputs.$$$$.tmp; \
	trap 'trap "" HUP INT TERM; kill $$(jobs -p) 2>/dev/null; wait; rm -f "$$tmp"' EXIT; \
	trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM; \
	$(BIN)/python -m tools.preview "$(STACK)" --json $(if $(POLICY_PACK_CONFIG),--policy-pack-config "$(POLICY_PACK_CONFIG)") \
		> "$$tmp" & \
	wait $$!; status=$$?; \
	if [ $$status -ne 0 ]; then \
		echo "make outputs: the preview of $(STACK) failed (exit $$status, reasons above); build/outputs-$(STACK).json not written" >&2; \
		exit $$status; \
	fi; \
	mv "$$tmp" "build/outputs-$(STACK).json" && echo "==> wrote build/outputs-$(STACK).json"

# Not committed: generated files per stack would make CI depend on which stack files exist.
observability: setup ## write build/observability/STACK/: the stack's GPU alert rule file and Grafana dashboard
	$(BIN)/python -m tools.observability $(STACK)

test: setup ## the whole test suite: slow, packaging, and the engine and cluster tiers (where Go is)
	$(ENGINES_IF_GO)
	$(PYTEST)

# The edit loop runs on every core (pytest-xdist): its tests share no files, ports or processes. `make test` runs
# in one process, since the engine and cluster tiers share one local cluster and the session's stacks.
test-fast: setup ## the edit loop: every test not marked slow, on every core (about 40 s on a quiet 2-core machine)
	$(PYTEST) -n auto -m "not slow"

# Manifests that pass every rule: exits 0.
check: setup ## the manifest checker over manifests that pass every rule (exit 0)
	$(BIN)/python -m gpu_aks_policies.check tests/manifests/corpus/good

# Manifests that break the rules on purpose: prints each violation; fails only if the checker does
# not find them (its exit code 1 is the expected result here).
check-bad: setup ## the checker over manifests that break the rules on purpose (prints each violation)
	$(BIN)/python -m gpu_aks_policies.check tests/manifests/corpus/bad; test $$? -eq 1

# mypy's settings (it does not follow into the generated Pulumi SDKs) are in pyproject.toml.
# mypy cannot follow the editable install's import hook (gpu_aks_policies -> policies/), so a link in
# build/ gives it the one import name; policies/ itself is checked first on its own (relative imports).
MYPY_LINK := build/mypy-path/gpu_aks_policies
MYPY_PACKAGES := -p components -p offline -p tools -p testbed -p observability -p gpu_aks_plugin -m gpu_aks_app -m gpu_aks_app_testing
lint: setup ## ruff and mypy (within 2 GB and 2 minutes)
	$(BIN)/ruff check .
	$(BIN)/mypy policies
	@mkdir -p $(dir $(MYPY_LINK)) && ln -sfn ../../policies $(MYPY_LINK)
	MYPYPATH=$(dir $(MYPY_LINK)):app_sdk $(BIN)/mypy $(MYPY_PACKAGES)

docs: setup ## regenerate the generated pages and build the site into site/ (mkdocs build --strict)
	$(BIN)/python -m tools.docs
	$(BIN)/mkdocs build --strict

docs-serve: setup ## preview the documentation site at http://127.0.0.1:8000
	$(BIN)/mkdocs serve

bench: setup ## the benchmarks: figures and ratios against a floor measured in the same run
	$(BIN)/python -m benchmarks.analyzer_throughput
	$(BIN)/python -m benchmarks.checker_throughput
	$(BIN)/python -m benchmarks.preview_time
