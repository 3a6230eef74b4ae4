"""KubeVirt (`kubevirt.io`, `pool.kubevirt.io`): VirtualMachineInstance, VirtualMachine,
VirtualMachineInstanceReplicaSet, VirtualMachinePool.

Each running VM is one virt-launcher pod. Sources, kubevirt/kubevirt at d923fdb (2026-08-22):
- `pkg/virt-controller/services/renderresources.go` (`WithGPUsDevicePlugins`,
  `WithHostDevicesDevicePlugins`, `requestResource`): every `domain.devices.gpus[]` and
  `domain.devices.hostDevices[]` entry with a `deviceName` adds 1 to the limit and the request of
  that resource on the `compute` container; an entry with a `claimName` is a DRA claim instead
  (`WithGPUsDRA`), resolved through the VMI's `spec.resourceClaims`.
- `pkg/virt-controller/services/template.go` (`renderLaunchManifest`): the pod's `Tolerations` are
  the VMI's `spec.tolerations`, its affinity `spec.affinity`, its nodeSelector the VMI's merged with
  KubeVirt's own labels; nothing adds a GPU toleration.
- The device names are the resources KubeVirt's `permittedHostDevices` or NVIDIA's sandbox device
  plugin advertise, `nvidia.com/<PCI device>` (`examples/vmi-gpu.yaml`: `nvidia.com/GP102GL_Tesla_P40`):
  a GPU ask that is not `nvidia.com/gpu` (counted through `catalog.PASSTHROUGH_GPU_RESOURCES`).
A VirtualMachine's VMI is `spec.template.spec`; a VirtualMachinePool's is
`spec.virtualMachineTemplate.spec.template.spec`.
- Instancetypes (`instancetype.kubevirt.io`, `staging/src/kubevirt.io/api/instancetype/v1beta1/types.go`,
  `pkg/instancetype/apply/vmi.go`): a VirtualMachine's `spec.instancetype` (`kind` defaults to
  VirtualMachineClusterInstancetype, `core/v1/types.go` `InstancetypeMatcher`) copies the instancetype's
  `gpus`, `hostDevices` and `nodeSelector` into the VMI when the VMI sets none of its own (a VMI that
  does is refused as a conflict). An instancetype among the objects checked is applied here; it has no
  tolerations, so they stay the VM's. Instancetypes and preferences themselves create no pods.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from ..podspecs import Container, PodSpec, as_mapping, as_str, iter_mappings, join, object_namespace
from .context import Context, collects, namespace_of
from .registry import register

COMPUTE = "compute"
INSTANCETYPE_GROUP = "instancetype.kubevirt.io"
#: (kind, namespace or "" for the cluster kind, name) -> the instancetype's spec.
INSTANCETYPES = "kubevirt.instancetypes"
CLUSTER_INSTANCETYPE = "VirtualMachineClusterInstancetype"
#: What `pkg/instancetype/apply` copies into the VMI that the rules read.
_APPLIED = (("gpus", ("domain", "devices", "gpus")), ("hostDevices", ("domain", "devices", "hostDevices")),
            ("nodeSelector", ("nodeSelector",)))


@collects(INSTANCETYPES, INSTANCETYPE_GROUP, "VirtualMachineInstancetype", CLUSTER_INSTANCETYPE)
def _instancetype(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    kind = str(obj.get("kind"))
    namespace = "" if kind == CLUSTER_INSTANCETYPE else namespace_of(object_namespace(obj))
    yield (kind, namespace, name), as_mapping(obj.get("spec"))


def _with_instancetype(vmi: Mapping[str, Any], vm: Mapping[str, Any], namespace: str,
                       context: Context) -> Mapping[str, Any]:
    """The VMI spec with what the VM's instancetype (among the objects checked) copies into it."""
    matcher = as_mapping(vm.get("instancetype"))
    kind = as_str(matcher.get("kind")) or CLUSTER_INSTANCETYPE
    key = (kind, "" if kind == CLUSTER_INSTANCETYPE else namespace_of(namespace), as_str(matcher.get("name")))
    instancetype = as_mapping(context.table(INSTANCETYPES).get(key))
    merged: dict[str, Any] = dict(vmi)
    for field, place in _APPLIED:
        if instancetype.get(field) is None:
            continue
        _set_if_unset(merged, place, instancetype[field])
    return merged


def _set_if_unset(spec: dict[str, Any], place: tuple[str, ...], value: Any) -> None:
    """`spec` at `place` set to `value` where unset, copying the mappings on the way; a step that is
    not a mapping (unknown during preview) leaves the spec as written."""
    holder = spec
    for step in place[:-1]:
        found = holder.get(step)
        if found is not None and not isinstance(found, Mapping):
            return
        holder[step] = dict(found or {})
        holder = holder[step]
    if holder.get(place[-1]) is None:
        holder[place[-1]] = value


def launcher_pod(vmi: Mapping[str, Any], path: str, namespace: str, workload: str) -> PodSpec:
    devices = as_mapping(as_mapping(vmi.get("domain")).get("devices"))
    limits: dict[str, Any] = {}
    written_at: dict[tuple[str, str], str] = {}
    for key in ("gpus", "hostDevices"):
        for index, device in iter_mappings(devices.get(key)):
            name = as_str(device.get("deviceName"))
            if not name:
                continue
            limits[name] = limits.get(name, 0) + 1
            where = join(join(join(path, "domain.devices"), key), index)
            written_at.setdefault(("limits", name), join(where, "deviceName"))
    compute = Container(join(path, "domain"), COMPUTE, {"resources": {"limits": limits, "requests": dict(limits)}},
                        limits_set_by_controller=True, written_at=written_at)
    pod = {key: vmi[key] for key in ("tolerations", "nodeSelector", "affinity", "resourceClaims")
           if vmi.get(key) is not None}
    return PodSpec(path, pod, (compute,), namespace, workload)


def _no_pods(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    return []


_PLACES = {
    "VirtualMachineInstance": ("spec",),
    "VirtualMachine": ("spec", "template", "spec"),
    "VirtualMachineInstanceReplicaSet": ("spec", "template", "spec"),
    "VirtualMachinePool": ("spec", "virtualMachineTemplate", "spec", "template", "spec"),
}
_GPUS = ("`domain.devices.gpus[].deviceName` and `hostDevices[].deviceName` (1 each, on the virt-launcher's "
         "`compute` container); DRA `claimName` entries through the VMI's `resourceClaims`")
_TOLERATIONS = "the VMI spec's `tolerations`, `nodeSelector`, `affinity`"
_SOURCE = "kubevirt/kubevirt `pkg/virt-controller/services/renderresources.go`, `services/template.go`"


def _adapter(obj: Mapping[str, Any], context: Context) -> list[PodSpec]:
    keys = _PLACES[str(obj.get("kind"))]
    vmi: Any = obj
    vm: Mapping[str, Any] = {}
    for index, key in enumerate(keys):
        if key == "template" and index and keys[index - 1] == "spec":
            vm = as_mapping(vmi)  # the VirtualMachine spec holding this VMI template
        vmi = as_mapping(vmi).get(key)
    if not isinstance(vmi, Mapping):
        return []
    if obj.get("kind") in ("VirtualMachine", "VirtualMachinePool") and vm.get("instancetype") is not None:
        vmi = _with_instancetype(vmi, vm, object_namespace(obj), context)
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    return [launcher_pod(vmi, ".".join(keys), object_namespace(obj), f"KubeVirt {obj.get('kind')} '{name}' virt-launcher")]


register("kubevirt.io", "VirtualMachineInstance", "VirtualMachine", "VirtualMachineInstanceReplicaSet", gpus=_GPUS,
         tolerations=_TOLERATIONS, source=_SOURCE)(_adapter)
register(INSTANCETYPE_GROUP, "VirtualMachineInstancetype", CLUSTER_INSTANCETYPE, "VirtualMachinePreference",
         "VirtualMachineClusterPreference", gpus="never (nothing creates pods from it; a VirtualMachine naming an "
         "instancetype among the objects checked takes its `gpus`, `hostDevices`, `nodeSelector`)",
         tolerations="never: the VirtualMachine's are judged",
         source="kubevirt/kubevirt `pkg/instancetype/apply/vmi.go`")(_no_pods)
register("pool.kubevirt.io", "VirtualMachinePool", gpus=f"{_GPUS}, under `spec.virtualMachineTemplate.spec.template`",
         tolerations=_TOLERATIONS, source=_SOURCE)(_adapter)
