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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..podspecs import Container, PodSpec, as_mapping, as_str, iter_mappings, join, object_namespace
from .context import Context
from .registry import register

COMPUTE = "compute"


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


def _adapter(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    keys = _PLACES[str(obj.get("kind"))]
    vmi: Any = obj
    for key in keys:
        vmi = as_mapping(vmi).get(key)
    if not isinstance(vmi, Mapping):
        return []
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    return [launcher_pod(vmi, ".".join(keys), object_namespace(obj), f"KubeVirt {obj.get('kind')} '{name}' virt-launcher")]


register("kubevirt.io", "VirtualMachineInstance", "VirtualMachine", "VirtualMachineInstanceReplicaSet", gpus=_GPUS,
         tolerations=_TOLERATIONS, source=_SOURCE)(_adapter)
register("pool.kubevirt.io", "VirtualMachinePool", gpus=f"{_GPUS}, under `spec.virtualMachineTemplate.spec.template`",
         tolerations=_TOLERATIONS, source=_SOURCE)(_adapter)
