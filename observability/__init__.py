"""GPU observability for gpu-aks, as pure data: the `gpu-aks:observability` settings, the DCGM
exporter's metrics list, the alert rules and the Grafana dashboard. No Pulumi imports.

`components/dcgm_exporter.py` and `components/observability.py` turn these into resources;
`python -m tools.observability` writes the same rules and dashboard to files under
`build/observability/<stack>/`; the tests generate each stack's rules and run `promtool` on them
(tests/test_observability_rules.py).
"""
