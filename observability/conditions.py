"""The node conditions that mean a GPU node is unhealthy, each with its fix. Pure data, below both the
alert rules (`observability/rules.py`, the `GpuNodeCondition` alert) and the doctor
(`tools/doctor.py`), which names the node and the fix. As Karpenter's `RepairPolicies()` declares the
conditions that mean "replace this node" (Azure/karpenter-provider-azure `cloudprovider.go`), a pool
kind may add its own here.
"""

from __future__ import annotations

#: The GPU node conditions of AKS's node problem detector, true while the problem lasts, and what to
#: do (https://learn.microsoft.com/azure/aks/node-problem-detector, "Node conditions", GPU only).
GPU_CONDITIONS = {
    "GPUMissing": "the VM sees fewer GPUs than its size has: cordon and drain the node, then delete it so the "
                  "pool replaces it (az aks nodepool delete-machines)",
    "XIDErrors": "the NVIDIA driver logged XID errors (NVIDIA's XID catalog says which are fatal): drain the node, "
                 "and delete it so the pool replaces it if they recur",
    "NVLinkStatusInactive": "an NVLink is inactive, so multi-GPU jobs lose bandwidth or fail: drain the node and "
                            "delete it so the pool replaces it",
    "IBLinkFlapping": "an InfiniBand link keeps going down: drain the node and delete it so the pool replaces it",
    "GPUClockThrottling": "GPU clocks are throttled (power or temperature): drain the node if jobs slow down, and "
                          "open an Azure support request if it persists",
    "UnhealthyNvidiaDevicePlugin": "AKS's managed NVIDIA device plugin is not running: check the node's GPU "
                                   "driver install (kubectl describe node) and reimage the node if it persists",
}
