"""The stand-in's "cloud": what ARM would hold, outside Pulumi's state, so that a change made behind Pulumi's
back (as someone in the portal would) shows as drift, and an ID that exists cannot be created again.

It is a JSON file named by GPU_AKS_AZURE_STANDIN_STATE (testbed/README.md): one object keyed by ARM resource
ID, each value the resource as ARM's GET returns it (`id`, `name`, `type`, `location`, `tags`, ...,
`properties: {...}`). Create, Update and Delete write it; Read reads it. An entry may also be edited in the
provider's flattened shape (a top-level `count` instead of `properties.count`): `flattened` reads both.
Without the variable the cloud lives in memory for one command only, and `Read` answers from Pulumi's
state (nothing to compare against).

Several providers may share the file (one per Pulumi command, and a command may start more than one): every
read-modify-write holds an exclusive lock on a file beside it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STATE_ENV = "GPU_AKS_AZURE_STANDIN_STATE"
#: The top-level keys of an ARM resource (ARM's common types: Resource, TrackedResource, the identity, SKU
#: and zones envelopes); every other property of the provider's flattened inputs lives under `properties`.
ENVELOPE = frozenset({"id", "name", "type", "location", "tags", "identity", "sku", "kind", "zones", "etag",
                      "extendedLocation", "plan", "managedBy", "systemData"})


class Cloud:
    def __init__(self, path: str | None = None) -> None:
        self.path = Path(path) if path else None
        self._memory: dict[str, Any] = {}

    @classmethod
    def from_environment(cls) -> Cloud:
        return cls(os.environ.get(STATE_ENV) or None)

    @property
    def persistent(self) -> bool:
        return self.path is not None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        if self.path is None:
            yield self._memory
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            resources = json.loads(self.path.read_text() or "{}") if self.path.is_file() else {}
            if not isinstance(resources, dict):
                raise ValueError(f"{STATE_ENV}={self.path}: expected a JSON object keyed by resource ID")
            before = json.dumps(resources, sort_keys=True)
            yield resources
            after = json.dumps(resources, sort_keys=True, indent=1)
            if json.dumps(resources, sort_keys=True) != before:
                temporary = self.path.with_name(self.path.name + ".tmp")
                temporary.write_text(after + "\n")
                temporary.replace(self.path)

    def get(self, resource_id: str) -> dict[str, Any] | None:
        with self._locked() as resources:
            found = _lookup(resources, resource_id)
            return json.loads(json.dumps(found)) if isinstance(found, dict) else None

    def put(self, resource_id: str, resource: dict[str, Any]) -> None:
        with self._locked() as resources:
            key = next((known for known in resources if known.lower() == resource_id.lower()), resource_id)
            resources[key] = resource

    def delete(self, resource_id: str) -> None:
        with self._locked() as resources:
            for known in [known for known in resources if known.lower() == resource_id.lower()]:
                del resources[known]


def _lookup(resources: dict[str, Any], resource_id: str) -> Any:
    """ARM resource IDs are case-insensitive."""
    if resource_id in resources:
        return resources[resource_id]
    return next((value for key, value in resources.items() if key.lower() == resource_id.lower()), None)


def arm_resource(resource_id: str, arm_type: str, body: dict[str, Any]) -> dict[str, Any]:
    """An ARM GET answer from a flattened body: the envelope's keys at the top, the rest under `properties`."""
    resource: dict[str, Any] = {"id": resource_id, "name": resource_id.rsplit("/", 1)[-1], "type": arm_type}
    properties: dict[str, Any] = {}
    for key, value in body.items():
        (resource if key in ENVELOPE else properties)[key] = value
    resource["properties"] = properties
    return resource


def outputs_of(resource: dict[str, Any]) -> dict[str, Any]:
    """The provider's outputs of an ARM resource: `properties` merged into the top level, as azure-native
    flattens them (the envelope's `type`, `name` and `id` win over a property of the same name, as in the
    SDK's outputs); a key edited at the top level in the flattened shape wins over the same key under
    `properties`."""
    outputs = dict(resource["properties"]) if isinstance(resource.get("properties"), dict) else {}
    outputs.update({key: value for key, value in resource.items() if key != "properties"})
    return outputs


def inputs_view(resource: dict[str, Any]) -> dict[str, Any]:
    """The same, for projecting onto inputs: where a property shares its name with the envelope (an
    AgentPool's `type` is its pool type), the property is the input."""
    view = {key: value for key, value in resource.items() if key in ENVELOPE}
    if isinstance(resource.get("properties"), dict):
        view.update(resource["properties"])
    view.update({key: value for key, value in resource.items() if key not in ENVELOPE and key != "properties"})
    return view
