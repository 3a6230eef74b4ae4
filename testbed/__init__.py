"""The test harness: the owners' programs built from Go modules (`engines/`, `build.py`), the stand-in
providers for what this machine cannot reach (`standins/`), the engine workspace both real tiers run the
Pulumi CLI in (`workspace.py`) and the one rule for a tier whose programs are not built (`tiers.py`).
Not product code: nothing outside `tests/`, `benchmarks/` and the `make engines` target imports it.
README.md says what is built and why."""
