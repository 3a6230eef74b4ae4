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
    assert sdk_patches.build_reports_in_place(fake) is True


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


def test_a_call_runs_with_the_collector_paused_and_leaves_it_as_it_was():
    import gc

    seen: list[bool] = []

    class Recording(FakeServicer):
        def Analyze(self, request: Any, context: Any) -> Any:
            seen.append(gc.isenabled())
            raise RuntimeError("the rules failed")

    fake = types.SimpleNamespace(_PolicyAnalyzerServicer=Recording)
    assert sdk_patches.scope_requests(fake)
    was = gc.isenabled()
    try:
        gc.enable()
        with pytest.raises(RuntimeError):
            fake._PolicyAnalyzerServicer().Analyze(None, None)
        assert seen == [False] and gc.isenabled(), "resumed after the call, even one that raised"
        gc.disable()
        with pytest.raises(RuntimeError):
            fake._PolicyAnalyzerServicer().Analyze(None, None)
        assert not gc.isenabled(), "a collector that was off stays off"
    finally:
        (gc.enable if was else gc.disable)()


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


def _violations(servicer: Any) -> bytes:
    """The response a servicer's report functions build for a few violations of two policies."""
    from pulumi.runtime.proto import analyzer_pb2

    response = analyzer_pb2.AnalyzeResponse()
    mandatory = servicer._create_report_violation(response, "p1", "the first policy", sdk.EnforcementLevel.MANDATORY)
    mandatory("a message", None)
    mandatory("", "urn:pulumi:s::p::t::blamed")
    advisory = servicer._create_report_violation(response, "p2", "the second", sdk.EnforcementLevel.ADVISORY,
                                                 sdk.Severity.HIGH)
    advisory("multi\nline [secret]", None)
    return response.SerializeToString(deterministic=True)


def _servicer(cls: Any) -> Any:
    noop = sdk.ResourceValidationPolicy(name="p1", description="d", validate=lambda args, report: None)
    return cls("gpu-aks-policies", "0.4.0", [noop], sdk.EnforcementLevel.MANDATORY)


def test_reports_built_in_place_are_the_diagnostics_the_sdk_builds_byte_for_byte():
    fake = _pinned_sdk_copy()
    expected = _violations(_servicer(fake._PolicyAnalyzerServicer))
    assert sdk_patches.build_reports_in_place(fake) is True
    assert sdk_patches.build_reports_in_place(fake) is True, "twice is harmless"
    assert _violations(_servicer(fake._PolicyAnalyzerServicer)) == expected
    with pytest.raises(TypeError, match="message to be a string"):
        _servicer(fake._PolicyAnalyzerServicer)._create_report_violation(
            sdk.proto.AnalyzeResponse(), "p", "d", sdk.EnforcementLevel.MANDATORY)(42)


def test_reports_fall_back_to_the_sdk_when_the_servicer_keeps_its_name_elsewhere():
    calls: list[tuple[str, str]] = []

    class Renamed(sdk._PolicyAnalyzerServicer):  # an SDK whose servicer keeps the pack's name elsewhere
        def _create_report_violation(self, response: Any, policy_name: str, *args: Any) -> Any:
            return lambda message, urn=None: calls.append((policy_name, message))

    fake = types.SimpleNamespace(_PolicyAnalyzerServicer=Renamed)
    assert sdk_patches.build_reports_in_place(fake) is True
    servicer = _servicer(Renamed)
    del servicer.__dict__[sdk_patches._PACK_NAME_ATTRIBUTE]
    response = sdk.proto.AnalyzeResponse()
    report = servicer._create_report_violation(response, "p1", "d", sdk.EnforcementLevel.MANDATORY)
    report("first")
    report("second")
    assert calls == [("p1", "first"), ("p1", "second")], "the SDK's own report served each violation"
    assert not response.diagnostics


def test_build_reports_in_place_leaves_another_shape_alone():
    class Other:
        def _create_report_violation(self, *args: Any) -> Any:
            return None

    fake = types.SimpleNamespace(_PolicyAnalyzerServicer=Other)
    assert sdk_patches.build_reports_in_place(fake) is False
    assert Other._create_report_violation is not None and not sdk_patches._patched(Other._create_report_violation)
