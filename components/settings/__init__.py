"""The settings sections: stack config -> validated, frozen settings, one module per section.

Each key is declared once (`policies/declarations.py`), in the module of its section: `cluster`
(with `network`, `api_server`, `identity`, `security_profile`), `access`, `device_plugin`,
`admission_policy`, `smoke_test`, `maintenance`, `observability`; the pools' shared keys in `pools`
and `pool_upgrade`, each pool kind's section in its kind module (`components/pools/`). The whole
document, `parse_settings` and `PlatformSettings` are `components/platform_settings.py`, above the
pool kinds. Parsing, the unknown-key check with its did-you-mean, defaults, secret masking and
`docs/configuration.md` (`reference_markdown()`) all come from those declarations.

Keys follow the AKS API's names where one exists (`vmSize`, `minCount`, `maxCount`, `nodeTaints`,
`nodeLabels`, `gpuInstanceProfile`, `gpuProfile.driver`, `scaleSetPriority`, ...), so a reader who
knows AKS can read `Pulumi.<stack>.yaml` at a glance, and values are checked against what the AKS API
version this program sends accepts (`components/aks_api.py`). Every problem is collected and reported
at once, each naming the key as it appears in the stack file (pools by name:
`gpu-aks:gpuPools[gput4].minCount`), the bad value (masked when the key is secret) and what is
allowed; nothing is created until all are fixed. No Pulumi imports: `components/stack_config.py`
reads `pulumi.Config` and hands the raw values here.
"""

from __future__ import annotations

from gpu_aks_policies.declarations import describe

from components.settings.access import DEFAULT_ROLE_PROPAGATION_SECONDS, AccessSettings
from components.settings.admission_policy import VALIDATION_ACTIONS, AdmissionPolicySettings
from components.settings.cluster import DEFAULT_AUTOSCALER_PROFILE, KUBELOGIN_MODES, ClusterSettings
from components.settings.common import AKS_MAX_NODES_PER_POOL, PROJECT, ZONES, ParseContext, SettingsError
from components.settings.device_plugin import DevicePluginSettings
from components.settings.maintenance import MaintenanceSettings
from components.settings.observability import AlertSettings, ObservabilitySettings
from components.settings.pools import (
    SUFFIXED_NAME_LENGTH,
    GpuAgentPoolSettings,
    SystemPoolSettings,
    UserAgentPoolSettings,
    create_only_properties,
    pool_key,
)
from components.settings.smoke_test import SmokeTestSettings

__all__ = [
    "AKS_MAX_NODES_PER_POOL", "DEFAULT_AUTOSCALER_PROFILE", "DEFAULT_ROLE_PROPAGATION_SECONDS",
    "KUBELOGIN_MODES", "PROJECT", "SUFFIXED_NAME_LENGTH", "VALIDATION_ACTIONS", "ZONES",
    "AccessSettings", "AdmissionPolicySettings", "AlertSettings", "ClusterSettings", "DevicePluginSettings",
    "GpuAgentPoolSettings", "MaintenanceSettings", "ObservabilitySettings", "ParseContext", "SettingsError",
    "SmokeTestSettings", "SystemPoolSettings", "UserAgentPoolSettings", "create_only_properties", "describe", "pool_key",
]
