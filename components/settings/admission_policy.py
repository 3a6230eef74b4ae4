"""`gpu-aks:admissionPolicy`: the in-cluster ValidatingAdmissionPolicy that runs the GPU rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from gpu_aks_policies.catalog import DEVICE_PLUGIN_NAMESPACE
from gpu_aks_policies.declarations import Default, Key, Reader, Section, boolean, string_list_problem

from components.settings.common import dns_label_problem

ValidationAction = Literal["Deny", "Warn", "Audit"]
VALIDATION_ACTIONS: tuple[str, ...] = get_args(ValidationAction)
_BINDING = "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding"


@dataclass(frozen=True)
class AdmissionPolicySettings:
    enabled: bool = True
    validation_actions: tuple[ValidationAction, ...] = ("Warn", "Audit")
    exempt_namespaces: tuple[str, ...] = ("kube-system", DEVICE_PLUGIN_NAMESPACE)


def _actions_problem(value: Any) -> str | None:
    ok = (isinstance(value, list) and value and all(a in VALIDATION_ACTIONS for a in value)
          and len(set(value)) == len(value) and not {"Deny", "Warn"} <= set(value))
    return None if ok else (f"must be a non-empty list out of {', '.join(VALIDATION_ACTIONS)}, without both Deny and "
                            "Warn (the API refuses that pair)")


def _exempt_default(reader: Reader) -> list[str]:
    return ["kube-system", reader.root.values["devicePlugin"]["namespace"]]


ADMISSION_POLICY = Section("admissionPolicy", "The GPU rules as a ValidatingAdmissionPolicy in the cluster.", (
    Key("validationActions", "What a violation does.", "list of strings", ["Warn", "Audit"], check=_actions_problem,
        convert=tuple, allowed=VALIDATION_ACTIONS, attr="validation_actions", source=f"{_BINDING} validationActions"),
    Key("exemptNamespaces", "Namespaces the policy skips.", "list of strings",
        Default(_exempt_default, "[kube-system, <devicePlugin.namespace>]"),
        check=lambda v: string_list_problem(v) or next(filter(None, map(dns_label_problem, v)), None),
        convert=tuple, attr="exempt_namespaces"),
    boolean("enabled", "Install the policy and its binding.", True, attr="enabled"),
), cls=AdmissionPolicySettings, listed=("enabled", "validationActions", "exemptNamespaces"))
