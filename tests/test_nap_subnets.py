"""NAP NodePools in your subnets (#38): `gpuNodePools[].vnetSubnetID` is the pool's AKSNodeClass
`spec.vnetSubnetID` (karpenter.azure.com_aksnodeclasses.yaml: "the subnet used by nics provisioned with
this nodeclass"; without it, Karpenter's default `--vnet-subnet-id`, the cluster's node subnet), checked
with every pool's subnets (one VNet) and granted Network Contributor as theirs are; the summary says
where every pool's nodes land."""

from __future__ import annotations

from pathlib import Path

import yaml

from components import aks_api
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.pools.nap import NAP
from tests.conftest import run_stack
from tests.test_nap_settings import _problems
from tools import preview


def subnet(name: str, vnet: str = "hub") -> str:
    return (f"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-net/providers/"
            f"Microsoft.Network/virtualNetworks/{vnet}/subnets/{name}")


BASE = {"cluster": {"nodeProvisioningProfile": {"mode": "Auto"}, "networkProfile": {"outboundType": "userDefinedRouting"}},
        "systemPool": {"minCount": 2, "maxCount": 2, "vnetSubnetID": subnet("system")}}
H100 = {"name": "h100", "gpus": ["H100"], "gpuCount": [1], "limits": {"gpu": 2}, "vnetSubnetID": subnet("gpu")}
A100 = {"name": "a100", "gpus": ["A100"], "gpuCount": [1], "limits": {"gpu": 2}}


def _settings(*pools: dict) -> object:
    return parse_settings({**BASE, "gpuNodePools": list(pools)}, "test", "westeurope")


def test_the_nodepool_s_subnet_is_its_aksnodeclass_s_and_where_its_nodes_land():
    settings = _settings(H100, A100)
    node_classes = {pool.name: spec.manifests[0] for pool in NAP.pools(settings) for spec in NAP.resources(pool)}
    assert node_classes["h100"]["kind"] == "AKSNodeClass"
    assert node_classes["h100"]["spec"]["vnetSubnetID"] == subnet("gpu")
    assert "vnetSubnetID" not in node_classes["a100"]["spec"], "Karpenter's default: the cluster's node subnet"
    landing = {pool.name: pool.node_subnet for pool in platform_pools(settings).pools}
    assert landing == {"system": subnet("system"), "h100": subnet("gpu"), "a100": subnet("system")}
    assert set(platform_pools(settings).subnets()) == {subnet("system"), subnet("gpu")}


def test_a_nodepool_subnet_in_another_vnet_or_beside_aks_s_vnet_is_refused():
    [problem] = _problems({**BASE, "gpuNodePools": [{**H100, "vnetSubnetID": subnet("gpu", vnet="other")}]})
    assert problem.startswith("gpu-aks:gpuNodePools[h100].vnetSubnetID: is in VNet 'other', but "
                              "gpu-aks:systemPool.vnetSubnetID is in VNet 'hub'"), problem
    unmanaged = {**BASE, "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}},
                 "systemPool": {"minCount": 2, "maxCount": 2}, "gpuNodePools": [H100]}
    [problem] = _problems(unmanaged)
    assert problem.startswith("gpu-aks:gpuNodePools[h100].vnetSubnetID: is your subnet, but systemPool has no "
                              "vnetSubnetID"), problem
    [problem] = _problems({**BASE, "gpuNodePools": [{**H100, "vnetSubnetID": "gpu"}]})
    assert problem.startswith("gpu-aks:gpuNodePools[h100].vnetSubnetID: 'gpu' is not a subnet resource ID")


def test_the_program_grants_the_nodepool_s_subnet_and_the_summary_names_where_every_pool_lands(tmp_path: Path):
    stack_file = tmp_path / "Pulumi.lz.yaml"
    stack_file.write_text(yaml.safe_dump({"config": {
        "azure-native:location": "westeurope",
        **{f"gpu-aks:{key}": value for key, value in {**BASE, "gpuNodePools": [H100, A100]}.items()}}}))
    run = run_stack("lz", stack_file)
    assert run.error is None, run.error
    grants = {r.inputs["scope"] for r in run.by_type("azure-native:authorization:RoleAssignment")
              if r.inputs["roleDefinitionId"].endswith(aks_api.NETWORK_CONTRIBUTOR_ROLE)}
    assert grants == {subnet("system"), subnet("gpu")}
    node_class = [r for r in run.resources if r.name == "h100-aksnodeclass"]
    assert node_class and node_class[0].inputs["spec"]["vnetSubnetID"] == subnet("gpu")
    summary = "\n".join(preview.render_summary("lz", run, stack_file))
    assert "nodes in your subnets: system -> system, h100 -> gpu, a100 -> system" in summary, summary
