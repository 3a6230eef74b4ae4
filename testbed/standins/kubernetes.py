"""A stand-in for the `kubernetes` provider plugin, for runs with no API server (no
GPU_AKS_LOCAL_KUBECONFIG): objects are accepted as sent and kept only in the Pulumi state.

`build/engines/bin/pulumi-resource-kubernetes` starts the real pulumi-kubernetes provider instead when
GPU_AKS_LOCAL_KUBECONFIG is set and it was built (testbed/README.md). What this one models, after
pulumi/pulumi-kubernetes `provider/pkg/provider/provider.go` and `provider/pkg/metadata/naming.go`:
- Check: `metadata.name` is autonamed from the resource's name plus a random suffix when absent;
  `apiVersion` and `kind` come from the type token.
- Diff: a new `metadata.name` or `metadata.namespace`, or a change to a field the API server makes
  immutable (a Job's `spec`, a workload's `spec.selector`), replaces the object.
- Create: the server's fields (`metadata.uid`, `metadata.creationTimestamp`, `metadata.namespace`
  defaulted to `default` for namespaced kinds gpu-aks uses).
- Invoke `kubernetes:yaml:decode`: the YAML documents of a string, as the provider parses them, and refused
  as it refuses a document that is mostly alias expansion (`decode_yaml`).
"""

from __future__ import annotations

import hashlib
import sys
import uuid
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from provider import UNKNOWN, Model, ProviderError, reveal, serve

#: The version of pulumi-kubernetes gpu-aks pins (requirements.txt).
VERSION = "4.34.2"
CLUSTER_SCOPED = frozenset({"Namespace", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                            "ClusterRole", "ClusterRoleBinding", "PriorityClass", "NodePool", "AKSNodeClass",
                            "CustomResourceDefinition", "StorageClass", "RuntimeClass"})
#: Fields the API server refuses to change (a change needs a new object): a Job's pod template and
#: selector (batch/v1 JobSpec: "immutable"), a workload's selector (apps/v1: "immutable after creation").
IMMUTABLE = {"Job": ("spec",), "DaemonSet": ("spec.selector",), "Deployment": ("spec.selector",),
             "StatefulSet": ("spec.selector",)}


#: go-yaml's bound on alias expansion (`allowedAliasRatio`, gopkg.in/yaml.v2 v2.4.0 `decode.go:355`, the
#: fix of CVE-2019-11253): past 1000 decoded nodes and 100 from aliases, a decode that is more than 99%
#: alias expansion (up to 400,000 decodes, scaling down to 10% at 4,000,000) fails.
ALIAS_RATIO_LOW, ALIAS_RATIO_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decode_count: int) -> float:
    if decode_count <= ALIAS_RATIO_LOW:
        return 0.99
    if decode_count >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decode_count - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW)


def _check_aliasing(root: yaml.Node) -> None:
    """Walk a composed document as go-yaml's decoder does (each alias expanded where it stands) and fail as
    it fails. PyYAML composes an alias as the anchored node itself, so a node met again is an alias."""
    decode_count = alias_count = 0
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, in_alias = stack.pop()
        aliased = in_alias or id(node) in seen
        seen.add(id(node))
        decode_count += 1
        if aliased:
            alias_count += 1
        if alias_count > 100 and decode_count > 1000 and alias_count / decode_count > _allowed_alias_ratio(decode_count):
            raise ProviderError("error converting YAML to JSON: yaml: document contains excessive aliasing")
        if isinstance(node, yaml.SequenceNode):
            stack.extend((item, aliased) for item in reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            stack.extend((part, aliased) for key, value in reversed(node.value) for part in (value, key))


def decode_yaml(text: str) -> list[Any]:
    """`kubernetes:yaml:decode` as pulumi-kubernetes answers it (`provider/pkg/provider/invoke_decode_yaml.go`:
    k8s.io/apimachinery's YAMLOrJSONDecoder, which decodes with go-yaml), a document that is mostly alias
    expansion refused before anything is expanded."""
    documents = []
    for node in yaml.compose_all(text, Loader=yaml.SafeLoader):
        if node is None:
            continue
        _check_aliasing(node)
        loader = yaml.SafeLoader("")
        try:
            document = loader.construct_document(node)
        finally:
            loader.dispose()
        if document:
            documents.append(document)
    return documents


def _group_version_kind(type_: str) -> tuple[str, str]:
    # kubernetes:apps/v1:DaemonSet -> ("apps/v1", "DaemonSet"); kubernetes:core/v1:Namespace -> ("v1", ...)
    _, api_version, kind = type_.split(":", 2)
    return (api_version[len("core/"):] if api_version.startswith("core/") else api_version), kind


def _get(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


class Kubernetes(Model):
    name = "kubernetes"
    version = VERSION

    def check(self, type_: str, name: str, olds: dict[str, Any], news: dict[str, Any], seed: bytes,
              ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        inputs = dict(news)
        if type_.startswith("kubernetes:") and not type_.startswith("kubernetes:yaml") and type_.count(":") == 2 \
                and "CustomResource" not in type_:
            api_version, kind = _group_version_kind(type_)
            inputs.setdefault("apiVersion", api_version)
            inputs.setdefault("kind", kind)
        metadata = dict(inputs.get("metadata") or {})
        if "name" not in metadata:
            old_name = (olds.get("metadata") or {}).get("name")
            metadata["name"] = old_name or f"{name}-{hashlib.sha256(seed).hexdigest()[:8]}"
        inputs["metadata"] = metadata
        return inputs, []

    def diff(self, type_: str, olds: dict[str, Any], news: dict[str, Any], ignore: list[str],
             ) -> tuple[list[str], list[str], bool]:
        changed, _, _ = super().diff(type_, reveal(olds), reveal(news), ignore)
        replaces = [path for path in ("metadata.name", "metadata.namespace", "apiVersion", "kind",
                                      *IMMUTABLE.get(str(news.get("kind")), ()))
                    if path.split(".")[0] in changed and _get(reveal(olds), path) != _get(reveal(news), path)]
        return changed, sorted({path.split(".")[0] for path in replaces}), False

    def create(self, type_: str, name: str, inputs: dict[str, Any], preview: bool) -> tuple[str, dict[str, Any]]:
        metadata = dict(inputs.get("metadata") or {})
        if inputs.get("kind") not in CLUSTER_SCOPED and type_ != "pulumi:providers:kubernetes":
            metadata.setdefault("namespace", "default")
        metadata.update(uid=UNKNOWN if preview else str(uuid.uuid4()),
                        creationTimestamp=UNKNOWN if preview else "2026-01-01T00:00:00Z")
        outputs = {**inputs, "metadata": metadata}
        namespace = reveal(metadata.get("namespace"))
        id_ = f"{namespace}/{reveal(metadata.get('name'))}" if namespace else str(reveal(metadata.get("name")))
        return ("" if preview else id_), outputs

    def invoke(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        if token == "kubernetes:yaml:decode":
            return {"result": decode_yaml(str(reveal(args.get("text", ""))))}
        return super().invoke(token, args)


if __name__ == "__main__":
    serve(Kubernetes())
