"""GPU observability for gpu-aks, as pure data: the `gpu-aks:observability` settings, the DCGM
exporter's metrics list, the alert rules and the Grafana dashboard. No Pulumi imports.

`components/dcgm_exporter.py` and `components/observability.py` turn these into resources;
`python -m observability` writes the same rules and dashboard to files under
`observability/generated/<stack>/`, which `promtool` checks and unit-tests (tests/test_observability_rules.py).
"""
