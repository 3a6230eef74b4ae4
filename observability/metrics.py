"""The metrics gpu-aks collects and the names its alerts and dashboard may use. Pure.

The DCGM exporter exports exactly the fields of its metrics CSV (`-f <file>`), so the CSV below is
the list of GPU metrics that exist. It is NVIDIA's dcgm-exporter 4.8.2 `etc/default-counters.csv`
(tag `4.5.3-4.8.2`; the chart mounts the same list from `templates/metrics-configmap.yaml`) with the
ECC and retired-page counters that file ships commented out turned on, because the uncorrectable-ECC
alert needs them. Field meanings: NVIDIA DCGM's field list (`dcgm_fields.h`, docs.nvidia.com/
datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExporterMetric:
    field: str
    kind: str  # gauge | counter | label
    help: str


#: In the order of NVIDIA's default-counters.csv. `label` fields become labels of every metric.
DCGM_METRICS: tuple[ExporterMetric, ...] = (
    ExporterMetric("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ExporterMetric("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ExporterMetric("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ExporterMetric("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ExporterMetric("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ExporterMetric("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ExporterMetric("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    ExporterMetric("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ExporterMetric("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ExporterMetric("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    ExporterMetric("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    ExporterMetric("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ExporterMetric("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ExporterMetric("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ExporterMetric("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."),
    # Commented out in NVIDIA's file; on here for GpuUncorrectableEccErrors and the dashboard.
    ExporterMetric("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
    ExporterMetric("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."),
    ExporterMetric("DCGM_FI_DEV_RETIRED_DBE", "counter", "Total number of retired pages due to double-bit errors."),
    ExporterMetric("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",
                   "Total number of NVLink bandwidth counters for all lanes."),
    ExporterMetric("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    ExporterMetric("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
                   "Number of remapped rows for uncorrectable errors"),
    ExporterMetric("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    ExporterMetric("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ExporterMetric("DCGM_FI_DRIVER_VERSION", "label", "Driver Version"),
    # Datacenter profiling metrics (Volta and newer; on MIG instances the only utilisation DCGM reports).
    ExporterMetric("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ExporterMetric("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ExporterMetric("DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
                   "Ratio of cycles the device memory interface is active sending or receiving data."),
    ExporterMetric("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus - including "
                   "both protocol headers and data payloads - in bytes per second."),
    ExporterMetric("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus - including "
                   "both protocol headers and data payloads - in bytes per second."),
)

#: The metric names the exporter serves (label fields are labels, not series).
EXPORTER_METRIC_NAMES = frozenset(m.field for m in DCGM_METRICS if m.kind != "label")

#: kube-state-metrics series the managed Prometheus add-on keeps under its default minimal ingestion
#: profile (Azure/prometheus-collector `otelcollector/shared/configmap/mp/
#: tomlparser-default-targets-metrics-keep-list.go`, `kubestateRegex_minimal_mac`, at commit
#: 39583fd50b2f828f83cc18fc0cece9e3074f56db; tests/fixtures/prometheus-collector/ holds that line, and
#: tests/test_observability.py every name below to it. The add-on scrapes
#: kube-state-metrics by default as job `kube-state-metrics`, learn.microsoft.com/azure/azure-monitor/
#: containers/prometheus-metrics-scrape-configuration-minimal). Names and labels: kube-state-metrics
#: `docs/metrics/workload/pod-metrics.md`, `docs/metrics/cluster/node-metrics.md`,
#: `docs/metrics/workload/daemonset-metrics.md`; extended resources appear sanitized, `nvidia.com/gpu`
#: as `resource="nvidia_com_gpu"`.
KUBE_STATE_METRICS = frozenset({
    "kube_node_status_condition",
    "kube_node_status_allocatable",
    "kube_pod_status_phase",
    "kube_pod_container_resource_requests",
    "kube_daemonset_status_desired_number_scheduled",
    "kube_daemonset_status_number_ready",
})

#: Everything an alert or dashboard query may name.
KNOWN_METRICS = EXPORTER_METRIC_NAMES | KUBE_STATE_METRICS

#: The GPU resources as kube-state-metrics names them: whole GPUs and every MIG profile.
KSM_GPU_RESOURCE_RE = "nvidia_com_gpu|nvidia_com_mig_.*"


def metrics_csv() -> str:
    """The exporter's `-f` file, in NVIDIA's format: `DCGM FIELD, Prometheus metric type, help message`."""
    lines = ["# gpu-aks: NVIDIA dcgm-exporter 4.8.2 etc/default-counters.csv plus ECC and retired-page counters",
             "# Format: DCGM FIELD, Prometheus metric type, help message"]
    lines += [f"{m.field}, {m.kind}, {m.help}" for m in DCGM_METRICS]
    return "\n".join(lines) + "\n"
