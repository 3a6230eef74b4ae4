"""Names and settings that flow into PromQL, the dashboard and the docs.

The module they pin: `observability/`. Each test failed on the code before its fix."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from components.observability import exporter_pools, platform_alert_rules
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.settings import SettingsError
from observability.dashboard import grafana_dashboard
from tests.conftest import TODAY
from tests.inputs import T4

PROMQL_BREAKERS = ('a"} or vector(1) #', "x'\n::error::pwned", "\x1b[2J|`md`|", "a\\\"b", "[x](javascript:y)")


def _observed(pools: list[dict[str, Any]], namespace: str = "gpu-resources", **alerts: Any) -> Any:
    raw = {"gpuPools": pools, "devicePlugin": {"namespace": namespace},
           "observability": {"enabled": True, "alerts": {"emails": ["oncall@example.com"], **alerts}}}
    return parse_settings(raw, "dev", "eastus2", today=TODAY)


def _dashboard_queries(board: Any) -> list[str]:
    """Every PromQL expression of a dashboard (its panels' targets)."""
    found, pending = [], [board]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            found += [value for key, value in node.items() if key == "expr" and isinstance(value, str)]
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return found


@pytest.mark.parametrize("breaker", PROMQL_BREAKERS)
@pytest.mark.parametrize("where", ["pool name", "namespace", "label value", "label key", "email", "action group"])
def test_values_that_would_break_promql_or_markdown_are_refused_escaped(breaker, where):
    pool = {"name": "gput4", "vmSize": T4, "maxCount": 1}
    namespace, alerts = "gpu-resources", {}
    if where == "pool name":
        pool["name"] = breaker
    elif where == "namespace":
        namespace = breaker
    elif where == "label value":
        pool["nodeLabels"] = {"team": breaker}
    elif where == "label key":
        pool["nodeLabels"] = {breaker: "x"}
    elif where == "email":
        alerts = {"emails": [breaker]}
    else:
        alerts = {"emails": [], "actionGroupResourceId": breaker}
    with pytest.raises(SettingsError) as raised:
        _observed([pool], namespace, **alerts)
    for problem in raised.value.problems:
        assert "\x1b" not in problem and "\n" not in problem and len(problem) < 400, problem


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.from_regex(r"[a-z][a-z0-9]{0,11}", fullmatch=True), min_size=1, max_size=4, unique=True),
       namespace=st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True))
def test_every_valid_pool_name_and_namespace_stays_inside_its_promql_string(names, namespace):
    assume("system" not in names and namespace not in ("default",))
    try:
        platform = _observed([{"name": name, "vmSize": T4, "maxCount": 1} for name in names], namespace)
    except SettingsError:
        assume(False)  # a name the settings refuse for another reason (reserved words)
    expressions = [rule.expr for rule in platform_alert_rules(platform)]
    board = grafana_dashboard(list(exporter_pools(platform_pools(platform), platform.observability)),
                              platform.observability.alerts)
    queries = _dashboard_queries(board)
    expressions += queries
    for expr in expressions:
        # Balanced braces and an even number of quotes: no value ends its string or selector early.
        assert expr.count("{") == expr.count("}") and expr.count('"') % 2 == 0, expr
    for name in names:  # each pool is selected by its exact name on the dashboard
        assert any(f'pool="{name}"' in expr for expr in queries), name
