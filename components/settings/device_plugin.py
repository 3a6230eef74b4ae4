"""`gpu-aks:devicePlugin`: gpu-aks's own NVIDIA device-plugin DaemonSet, and which GPU pools it serves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpu_aks_policies.catalog import DEVICE_PLUGIN_IMAGE, DEVICE_PLUGIN_NAMESPACE, MIG_STRATEGIES
from gpu_aks_policies.declarations import (
    Check,
    Default,
    Key,
    Reader,
    Section,
    boolean,
    choice,
    describe,
    string_list_problem,
    text,
)
from gpu_aks_policies.pools.model import Pool

from components.settings.common import dns_label_problem, document_gpu_pools, document_pools, image_problem, not_a_gpu_pool
from components.settings.dra import dra_pool_names

_CHART = "NVIDIA/k8s-device-plugin deployments/static and Helm chart values"


@dataclass(frozen=True)
class DevicePluginSettings:
    enabled: bool = True
    image: str = DEVICE_PLUGIN_IMAGE
    namespace: str = DEVICE_PLUGIN_NAMESPACE
    mig_strategy: str = "none"
    #: The GPU pools the DaemonSets serve (their names). The one place this is stored: a pool's
    #: `device_plugin` reads it. None only while the stack config is parsed: every GPU pool it may serve
    #: (`components.pools.document`).
    pools: tuple[str, ...] | None = ()

    def serves(self, pool_name: str) -> bool:
        """Whether gpu-aks's own device-plugin DaemonSet serves the pool of this name (any kind's)."""
        return self.pools is None or pool_name in self.pools


#: Why gpu-aks's device plugin must not serve a GPU pool it does not serve by default: the stack leaves the
#: pool's driver, and so its device plugin, to another owner (AKS API `gpuProfile.driver: None`).
_PLUGIN_ELSEWHERE = "gpuProfile.driver: None"


def _gpu_pools(reader: Reader) -> dict[str, Pool]:
    """The GPU pools of every kind parsed cleanly, by name (`components.pools.document`)."""
    return document_gpu_pools(reader)[0]


def _listed(reader: Reader) -> Sequence[str]:
    return reader.get("pools") or ()


def served_pools(reader: Reader) -> list[str]:
    """The GPU pools the DaemonSet serves: none when it is disabled, else the listed GPU pools."""
    gpu_pools = _gpu_pools(reader)
    return [name for name in _listed(reader) if name in gpu_pools] if reader.get("enabled") else []


def _driver_installed_pools(reader: Reader) -> list[str]:
    """Every GPU pool gpu-aks's plugin may serve (the document's pools say `served`), but those `dra.pools`
    serves through DRA."""
    through_dra = set(dra_pool_names(reader.root.raw))
    return [name for name, pool in _gpu_pools(reader).items() if pool.served and name not in through_dra]


def _pools_are_gpu_pools(reader: Reader) -> None:
    gpu_pools, unread = document_gpu_pools(reader)
    for index, name in enumerate(_listed(reader)):
        pool = gpu_pools.get(name)
        if pool is None and name not in unread:
            reader.problem(f"pools[{index}]", not_a_gpu_pool(name, gpu_pools))
        elif pool is not None and not pool.served:
            # AKS's GPU docs: never run a second device plugin where another one is managed.
            reader.problem(f"pools[{index}]", f"{describe(name)} has {_PLUGIN_ELSEWHERE}, so its driver and device "
                                              "plugin are managed elsewhere (e.g. the NVIDIA GPU Operator); running "
                                              "this DaemonSet there too double-registers nvidia.com/gpu. Remove it "
                                              "from devicePlugin.pools")


def _served_mig_pools(reader: Reader) -> list[str]:
    gpu_pools = _gpu_pools(reader)
    return [name for name in served_pools(reader) if gpu_pools[name].mig]


def _strategy_serves_mig_pools(reader: Reader) -> None:
    mig_pools = _served_mig_pools(reader)
    if reader.get("migStrategy") == "none" and mig_pools:
        reader.problem("migStrategy", f"'none' cannot serve MIG pools ({', '.join(mig_pools)}); use 'single' "
                                      "(pods ask for nvidia.com/gpu) or 'mixed' (pods ask for nvidia.com/mig-<profile>)")


def _shared_pools_are_served(reader: Reader) -> None:
    """Sharing is the device plugin's config: a pool it does not serve cannot be shared by it."""
    served = set(served_pools(reader))
    for pool in document_pools(reader).models(reader.root):
        if pool.sharing is None or pool.name in served:
            continue
        fix = "serve the pool or remove its sharing"
        if not reader.get("enabled"):
            why = "devicePlugin.enabled is false"
        elif not pool.served:
            why = f"it has {_PLUGIN_ELSEWHERE}, so its device plugin is managed elsewhere (e.g. the GPU Operator)"
            fix = "remove its sharing and share through that plugin's own config"
        else:
            why = f"devicePlugin.pools ({', '.join(_listed(reader)) or 'empty'}) does not list it"
        reader.problems.add(f"{pool.key}.sharing", f"{describe(pool.sharing.strategy)} is set up in gpu-aks's device "
                                                   f"plugin, which does not serve pool {describe(pool.name)}: {why}; "
                                                   f"{fix}")


def _device_plugin(reader: Reader) -> DevicePluginSettings:
    return DevicePluginSettings(enabled=reader.get("enabled"), image=reader.get("image"),
                                namespace=reader.get("namespace"), mig_strategy=reader.get("migStrategy"),
                                pools=tuple(served_pools(reader)))


#: Azure/AKS#5161 (open): the cluster autoscaler assumes `nvidia.com/gpu` and one GPU per node for
#: MIG pools, so a MIG pool at zero nodes is not scaled up for pods asking for `nvidia.com/mig-*`.
MIG_AUTOSCALER_ISSUE = "Azure/AKS#5161"


def mig_scale_from_zero(min_count: int, mig: bool, strategy: str) -> tuple[str | None, str | None]:
    """(problem, warning) for a MIG pool that can scale to zero under the device plugin's strategy."""
    if not mig or min_count > 0:
        return None, None
    if strategy == "mixed":
        return (f"0 on a MIG pool under devicePlugin.migStrategy: mixed: the cluster autoscaler never scales it up for "
                f"pods asking for nvidia.com/mig-* ({MIG_AUTOSCALER_ISSUE}); set minCount: 1 or use migStrategy: single"), None
    return None, ("0 on a MIG pool: the cluster autoscaler assumes one nvidia.com/gpu per node "
                  f"for MIG pools ({MIG_AUTOSCALER_ISSUE}), so scale-up from zero may under-count the slices; keep "
                  "minCount: 1 where that matters")


# --- devicePlugin: MIG pools and the autoscaler ---


def mig_pools_scale_from_zero(reader: Reader) -> None:
    """A devicePlugin check: served MIG pools at minCount 0 (Azure/AKS#5161)."""
    strategy = reader.get("migStrategy")
    for pool in document_pools(reader).models(reader.root):
        # MIG is an AgentPool's (`gpuInstanceProfile`), sized by the cluster autoscaler.
        if not pool.gpu or not pool.mig or pool.min_count is None:
            continue
        if reader.get("enabled") and pool.name in _listed(reader):
            problem, warning = mig_scale_from_zero(pool.min_count, True, strategy)
            if problem:
                reader.problems.add(f"{pool.key}.minCount", problem)
            if warning:
                reader.problems.warn(f"{pool.key}.minCount", warning)


MIG_SCALE_FROM_ZERO_CHECK = Check(mig_pools_scale_from_zero, reads=("migStrategy", "pools"),
                                  doc="A served MIG pool keeps `minCount` >= 1 under `mixed` (a warning under "
                                      "`single`): Azure/AKS#5161.", after_document=True)


DEVICE_PLUGIN = Section(
    "devicePlugin", "gpu-aks's NVIDIA device-plugin DaemonSet (self-managed GPU pools: AKS installs the driver, "
    "you install the plugin).", (
        boolean("enabled", "Deploy the DaemonSet.", True),
        Key("pools", "The GPU pools it serves.", "list of strings",
            Default(_driver_installed_pools, "every GPU pool with gpuProfile.driver: Install that dra.pools does not "
                                             "list"),
            check=string_list_problem),
        Check(_pools_are_gpu_pools, reads=("pools",),
              doc="`devicePlugin.pools` names GPU pools whose driver AKS installs (never a `driver: None` pool).",
              after_document=True),
        choice("migStrategy", "How MIG instances are advertised: `single` (nvidia.com/gpu) or `mixed` "
               "(nvidia.com/mig-<profile>).", MIG_STRATEGIES,
               Default(lambda reader: "single" if _served_mig_pools(reader) else "none",
                       "single when a served pool uses MIG, else none"), source=_CHART),
        Check(_strategy_serves_mig_pools, reads=("migStrategy",), doc="`migStrategy: none` cannot serve MIG pools.",
              after_document=True),
        MIG_SCALE_FROM_ZERO_CHECK,
        Check(_shared_pools_are_served, reads=("enabled", "pools"),
              doc="A pool with `sharing` is served by gpu-aks's device plugin (sharing is that plugin's config).",
              after_document=True),
        text("image", "The device-plugin image.", DEVICE_PLUGIN_IMAGE, check=image_problem,
             source="AKS docs use-nvidia-gpu manifest"),
        text("namespace", "The namespace of the DaemonSet.", DEVICE_PLUGIN_NAMESPACE, check=dns_label_problem,
             source="AKS docs use-nvidia-gpu manifest"),
    ), build=_device_plugin, listed=("enabled", "image", "namespace", "migStrategy", "pools"))
