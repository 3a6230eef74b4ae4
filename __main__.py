"""gpu-aks: a GPU-ready AKS cluster per stack.

stack config -> GpuCluster (AksCluster -> ClusterAccess -> CpuAgentPool / GpuAgentPool -> GpuDevicePlugin
             -> (GpuMetricsExporter, GpuObservability) -> GpuAdmissionPolicy -> (GpuSmokeTest))
             -> the outputs contract

The same GpuCluster other programs get from the component package (docs/component-package.md).
`program_layout` keeps this program's resource names and URNs as they were before GpuCluster existed.
"""

import pulumi

from components.gpu_cluster import GpuCluster, read_stack_config

args, secret_keys = read_stack_config()
platform = GpuCluster("gpu-aks", args, secret_keys=secret_keys, program_layout=True)

# Read back by the next run (components/previous_run.py).
for key, value in platform.recorded_for_next_run().items():
    pulumi.export(key, value)
for key, value in platform.outputs().items():
    pulumi.export(key, value)
