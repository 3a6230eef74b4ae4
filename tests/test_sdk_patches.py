"""Each guarded patch of pulumi-policy's internals (`gpu_aks_policies.sdk_patches`): it takes on the pinned
SDK's shape, does what it says inside a request scope, and leaves an SDK of another shape alone."""

from __future__ import annotations

import types
from typing import Any

import pulumi_policy.policy as sdk
import pytest
from gpu_aks_policies import pack, sdk_patches
from gpu_aks_policies.findings import Finding
from gpu_aks_policies.scope import current_scope, remembered, request_scope, secret_texts
from gpu_aks_policies.secrets import SecretNumber, SecretText, is_secret
from pulumi_policy.deserialize import SPECIAL_SECRET_SIG, SPECIAL_SIG_KEY, deserialize_properties


class FakeServicer:
    def Analyze(self, request: Any, context: Any) -> Any:
        return current_scope()

    def AnalyzeStack(self, request: Any, context: Any) -> Any:
        return current_scope()

    def Configure(self, request: Any, context: Any) -> Any:
        return "configured"


def _pinned_sdk_copy() -> types.SimpleNamespace:
    """The pinned SDK's names the patches use, on an object the test may patch (the servicer a
    subclass, so the real class stays as it is)."""
    return types.SimpleNamespace(
        _PolicyAnalyzerServicer=type("Servicer", (sdk._PolicyAnalyzerServicer,), {}),
        json_format=sdk.json_format, unknown_checking_proxy=sdk.unknown_checking_proxy,
        deserialize_properties=sdk.deserialize_properties)


def test_the_pinned_sdk_has_the_shape_every_patch_checks():
    fake = _pinned_sdk_copy()
    assert sdk_patches.scope_requests(fake) is True
    assert sdk_patches.reuse_request_conversions(fake) is True
    assert sdk_patches.track_secrets(fake) is True


def test_scope_requests_runs_each_call_in_its_own_scope_and_configure_starts_an_operation():
    fake = types.SimpleNamespace(_PolicyAnalyzerServicer=type("S", (FakeServicer,), {}))
    operations: list[int] = []
    assert sdk_patches.scope_requests(fake, on_configure=lambda: operations.append(1))
    assert sdk_patches.scope_requests(fake, on_configure=lambda: operations.append(1)), "twice is harmless"
    servicer = fake._PolicyAnalyzerServicer()
    first, second = servicer.Analyze(None, None), servicer.AnalyzeStack(None, None)
    assert first is not None and second is not None and first is not second
    assert current_scope() is None, "nothing outlives the call"
    assert servicer.Configure(None, None) == "configured" and operations == [1]


def test_scope_requests_leaves_another_shape_alone():
    class Other:
        def Analyze(self, request: Any, context: Any) -> Any:
            return current_scope()

    fake = types.SimpleNamespace(_PolicyAnalyzerServicer=Other)
    assert sdk_patches.scope_requests(fake) is False
    assert Other().Analyze(None, None) is None, "unpatched: no scope"
    assert sdk_patches.scope_requests(types.SimpleNamespace()) is False


class CountingJsonFormat:
    def __init__(self) -> None:
        self.calls = 0

    def MessageToDict(self, message: Any) -> Any:
        self.calls += 1
        return {"converted": message}


def test_reuse_request_conversions_converts_once_per_scope():
    json_format, proxies = CountingJsonFormat(), []
    fake = types.SimpleNamespace(json_format=json_format, unknown_checking_proxy=lambda props: proxies.append(props) or props)
    assert sdk_patches.reuse_request_conversions(fake)
    message = object()
    with request_scope():
        converted = [fake.json_format.MessageToDict(message) for _ in range(3)]
        assert converted[0] is converted[1] is converted[2] and json_format.calls == 1
        fake.unknown_checking_proxy(converted[0])
        fake.unknown_checking_proxy(converted[0])
        assert len(proxies) == 1
    fake.json_format.MessageToDict(message)
    fake.json_format.MessageToDict(message)
    assert json_format.calls == 3, "outside a scope every call converts"


def test_reuse_request_conversions_leaves_another_shape_alone():
    fake = types.SimpleNamespace(json_format=types.SimpleNamespace(), unknown_checking_proxy=print)
    assert sdk_patches.reuse_request_conversions(fake) is False
    assert fake.unknown_checking_proxy is print and not hasattr(fake.json_format, "MessageToDict")


def _secret(value: Any) -> dict:
    return {SPECIAL_SIG_KEY: SPECIAL_SECRET_SIG, "value": value}


def test_track_secrets_marks_secret_values_and_records_their_texts_per_request():
    fake = types.SimpleNamespace(deserialize_properties=deserialize_properties)
    assert sdk_patches.track_secrets(fake)
    props = {"plain": "1500m", "amount": _secret("1500m"), "count": _secret(3.0),
             "nested": _secret({"name": "hidden", "items": ["a-secret"]})}
    with request_scope():
        result = fake.deserialize_properties(props)
        assert result["plain"] == "1500m" and not is_secret(result["plain"])
        assert isinstance(result["amount"], SecretText) and result["amount"] == "1500m"
        assert f"{result['amount']}" == repr(result["amount"]) == "[secret]"
        assert isinstance(result["count"], SecretNumber) and result["count"] == 3 and str(result["count"]) == "[secret]"
        assert is_secret(result["nested"]["name"]) and is_secret(result["nested"]["items"][0])
        assert {"1500m", "3.0", "3", "hidden", "a-secret", "name", "items"} <= secret_texts()
        assert fake.deserialize_properties(props) is result, "once per request"
    with request_scope():
        assert secret_texts() == set(), "the next request starts with none"


def test_track_secrets_leaves_another_shape_alone_and_the_pack_then_prints_no_input():
    fake = types.SimpleNamespace()
    assert sdk_patches.track_secrets(fake) is False and not hasattr(fake, "deserialize_properties")
    finding = Finding("gpu-limits-are-whole-numbers", "spec.containers[0].resources.limits.nvidia.com/gpu",
                      "container 'c' has limits.nvidia.com/gpu: '1500m'")
    assert "'1500m'" in pack._message(finding, "Pod 'p': ")
    previous, sdk_patches.SECRETS_FALLBACK = sdk_patches.SECRETS_FALLBACK, True
    try:
        assert pack._message(finding, "Pod 'p': ") == (
            "gpu-limits-are-whole-numbers is violated at spec.containers[0].resources.limits.nvidia.com/gpu")
    finally:
        sdk_patches.SECRETS_FALLBACK = previous


def test_a_request_scope_remembers_by_identity_and_nothing_outside():
    calls: list[int] = []
    source = {"a": 1}
    for _ in range(2):
        remembered("test", source, lambda: calls.append(1))
    assert len(calls) == 2
    with request_scope():
        for _ in range(2):
            remembered("test", source, lambda: calls.append(1))
    assert len(calls) == 3


@pytest.mark.parametrize("value", ["1500m", 1.5, "x" * 100])
def test_secret_markers_format_as_secret_everywhere_a_message_is_built(value):
    from gpu_aks_policies.secrets import as_secret

    secret = as_secret(value)
    assert f"{secret}" == f"{secret!r}" == f"{secret:>20}" == "[secret]"
    assert secret == value


@pytest.mark.parametrize(("value", "marked"), [(True, False), (None, False), ({"a": 1}, False), (3, True),
                                               (float("nan"), True), ("x", True)])
def test_secret_markers_wrap_strings_and_numbers_only(value, marked):
    # A bool is an int to Python, but it cannot be subclassed and has no text to hide: it stays as it is.
    from gpu_aks_policies.secrets import as_secret, is_secret

    assert is_secret(as_secret(value)) is marked
    assert (as_secret(value) is value) is not marked


def test_without_request_scopes_secret_tracking_falls_back_too(monkeypatch):
    # The secret texts live in the request scope: if scoping cannot be installed they are recorded
    # nowhere, so messages must carry no input text even though track_secrets itself took.
    monkeypatch.setattr(sdk_patches, "scope_requests", lambda **_: False)
    monkeypatch.setattr(sdk_patches, "reuse_request_conversions", lambda: True)
    monkeypatch.setattr(sdk_patches, "track_secrets", lambda: True)
    monkeypatch.setattr(sdk_patches, "SECRETS_FALLBACK", False)
    assert sdk_patches.install()["scope_requests"] is False
    assert sdk_patches.SECRETS_FALLBACK is True


def test_a_late_look_judges_with_the_config_the_early_verdict_used(monkeypatch):
    # The toleration rule tolerated a custom taint; the analyzable rule that looks again at AnalyzeStack
    # is configured separately (defaults here). Its second look must use the toleration rule's config,
    # or it reports a verdict change that did not happen.
    from gpu_aks_policies.rules import parse_rule_config
    from gpu_aks_policies.workloads import context_of, pod_specs_of
    taint = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
    config = parse_rule_config({"gpu-pods-tolerate-gpu-taint": {"gpuTaints": [taint]}})["gpu-pods-tolerate-gpu-taint"]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
           "spec": {"tolerations": [{"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}],
                    "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    context = context_of([namespace, pod])
    pods = pod_specs_of(pod, context)
    operation = pack.Operation()
    operation.judged_early("urn:pod", pack.EarlyVerdict(frozenset({("Namespace", "", "ml")}), frozenset(), config))
    monkeypatch.setattr(pack, "OPERATION", operation)
    assert pack._registered_late(types.SimpleNamespace(urn="urn:pod"), pods, context) == []
