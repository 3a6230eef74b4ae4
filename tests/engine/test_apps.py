"""App stacks on the deployed dev platform, under the real engine and the policy pack, deploying to a real
cluster (`testbed.localcluster`: kube-apiserver, kube-controller-manager, kube-scheduler, kwok) through the
real pulumi-kubernetes provider, which awaits each workload as it would on AKS. Each example reads the
platform through StackReference from the same backend, lands its workload with the app helper, and `pulumi
up` returns once the Job completed or the Deployment is available on a node of the pool it chose; with no GPU
node yet (a pool that scales from zero) `up` waits for one, as docs/app-teams.md says, and completes when it
comes, and fails once the helper's allowance has run out. An untolerated GPU Job is stopped before it exists,
also under `up --skip-preview`; `--policy-pack-config` makes that rule advisory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpu_aks_policies.contract import PlatformContract

from offline.azure_answers import DEPLOYER_OBJECT_ID
from testbed import aks_rbac
from testbed.build import BIN, LIBEXEC
from testbed.localcluster import Client, Cluster, ClusterError, contract_pool_nodes, programs, register, running
from testbed.tiers import Tier
from tests.engine.conftest import FAST, Workspace

JOB = "kubernetes:batch/v1:Job"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
UNTOLERATED = '''"""A GPU Job with no toleration for the GPU pools' taint (written by tests/engine/test_apps.py), on
the platform's cluster. It could never start, so `pulumi up` does not await it."""
import pulumi
import pulumi_kubernetes as k8s

platform = pulumi.StackReference("organization/gpu-aks/dev")
provider = k8s.Provider("platform", kubeconfig=platform.require_output("kubeconfig"))
k8s.batch.v1.Job("untolerated", metadata={"annotations": {"pulumi.com/skipAwait": "true"}},
                 spec={"backoffLimit": 0, "template": {"spec": {
                     "restartPolicy": "Never",
                     "containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04",
                                     "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}},
                 opts=pulumi.ResourceOptions(provider=provider))
'''
#: The helper's await allowance in the app below: long enough for the provider to create the Job and watch it, short
#: enough that a test sees it run out.
SHORT_AWAIT_SECONDS = 20
SHORT_AWAIT = f'''"""A GPU Job the app helper places on dev's GPU pool, with the helper's await annotation (its key, and its
value with {SHORT_AWAIT_SECONDS} s in all where AKS would give a node 15 minutes; written by tests/engine/test_apps.py)."""
import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_app import NODE_PROVISION_SECONDS, GpuRequest, place

platform = pulumi.StackReference("organization/gpu-aks/dev")
provider = k8s.Provider("platform", kubeconfig=platform.require_output("kubeconfig"))
placement = platform.require_output("pools").apply(lambda pools: place(pools, GpuRequest(gpus=1)))
check = {{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04", "command": ["nvidia-smi", "-L"]}}
k8s.batch.v1.Job(
    "short-await",
    metadata=placement.apply(lambda p: {{"labels": {{"app": "short-await"}}, "annotations": p.await_annotations(
        workload_seconds={SHORT_AWAIT_SECONDS} - NODE_PROVISION_SECONDS)}}),
    spec=placement.apply(lambda p: {{"backoffLimit": 0, "template": {{
        "metadata": {{"labels": {{"app": "short-await"}}}}, "spec": p.pod_spec([check], restartPolicy="Never")}}}}),
    opts=pulumi.ResourceOptions(provider=provider))
'''


def _cluster_missing() -> str | None:
    try:
        programs()
    except ClusterError as error:
        return str(error)
    real = LIBEXEC / "pulumi-resource-kubernetes"
    return None if os.access(real, os.X_OK) else f"{real} not built: run `make engines`"


LOCAL_CLUSTER = Tier("engine tier's app stacks (a local cluster)", _cluster_missing)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    LOCAL_CLUSTER.require()
    with running(tmp_path_factory.mktemp("apps-cluster"), identities={DEPLOYER_OBJECT_ID: ()}) as started:
        yield started


@pytest.fixture(scope="module")
def api(cluster: Cluster) -> Iterator[Client]:
    client = cluster.client()
    yield client
    client.close()


@pytest.fixture(scope="module")
def deployer_kubeconfig(cluster: Cluster, api: Client) -> Iterator[Path]:
    """The deployer's kubeconfig on this module's cluster (`aks_rbac.as_deployer`, as the cluster tier's fixture of
    the same name gives it on the session's)."""
    with aks_rbac.as_deployer(cluster, api) as kubeconfig:
        yield kubeconfig


@pytest.fixture(scope="module")
def deployed_dev(deployer_kubeconfig: Path, api: Client, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The dev platform, deployed once with the pack to the local cluster as the deployer signs in (a bearer token
    through kubelogin with the AKS RBAC role it is assigned, not the cluster's admin certificate: the stand-in
    Azure hands out that kubeconfig in AKS's shape), with its CPU pool's node; the app stacks read it through
    StackReference, and deploy through the kubeconfig it exports."""
    LOCAL_CLUSTER.require()
    workspace = Workspace.new(tmp_path_factory.mktemp("apps"), kubeconfig=deployer_kubeconfig)
    workspace.init("dev", config=FAST)
    workspace.pulumi("up", "--yes", "--skip-preview", "--policy-pack", "policies", "--stack", "dev")
    register(api, pool_nodes(workspace, "cpu"))
    return workspace


def pool_nodes(workspace: Workspace, pool: str) -> list[dict[str, Any]]:
    """One node of the platform's pool, as `python -m tools.localcluster nodes` registers them."""
    contract = PlatformContract.from_json(workspace.outputs("dev"))
    return [node for node in contract_pool_nodes(contract)
            if node["metadata"]["annotations"]["gpu-aks.io/test-pool"] == pool]


@pytest.fixture
def gpu_node(deployed_dev: Workspace, api: Client) -> Iterator[str]:
    """A node of dev's GPU pool, there before the test and gone after it (the pool idles at zero)."""
    [node] = pool_nodes(deployed_dev, "gput4")
    [name] = register(api, [node])
    yield name
    remove_node(api, name)


def remove_node(api: Client, name: str) -> None:
    api.delete(f"/api/v1/nodes/{name}")
    api.wait_for(f"node {name} to go", lambda: not api.exists(f"/api/v1/nodes/{name}"))


def workload(workspace: Workspace, app: Path) -> dict[str, Any]:
    [found] = [r for r in workspace.export("dev", cwd=app)["deployment"]["resources"] if r["type"] in (JOB, DEPLOYMENT)]
    return found


def live(api: Client, resource: dict[str, Any]) -> dict[str, Any]:
    """The object as the cluster holds it now."""
    outputs = resource["outputs"]
    kind = "jobs" if resource["type"] == JOB else "deployments"
    group = "batch" if resource["type"] == JOB else "apps"
    return dict(api.get(f"/apis/{group}/v1/namespaces/{outputs['metadata']['namespace']}/{kind}/"
                        f"{outputs['metadata']['name']}"))


def pods_of(api: Client, namespace: str, selector: dict[str, str]) -> list[dict[str, Any]]:
    query = ",".join(f"{key}={value}" for key, value in selector.items())
    return list(api.get(f"/api/v1/namespaces/{namespace}/pods?labelSelector={query}")["items"])


def example(deployed_dev: Workspace, name: str) -> Path:
    """The example's folder, its dev stack made once (its own Pulumi.dev.yaml names the platform stack:
    organization/gpu-aks/dev, this backend's)."""
    app = deployed_dev.root / "examples" / name
    if deployed_dev.pulumi("stack", "select", "dev", cwd=app, check=False).returncode != 0:
        deployed_dev.init("dev", cwd=app)
    return app


@pytest.mark.parametrize("name", ["gpu-job", "gpu-inference"])
def test_an_example_app_reads_the_platform_places_deploys_its_workload_ready_and_destroys(
        deployed_dev: Workspace, api: Client, gpu_node: str, name: str) -> None:
    app = example(deployed_dev, name)
    pack = ["--policy-pack", "../../policies", "--stack", "dev"]
    deployed_dev.pulumi("preview", *pack, cwd=app)
    deployed_dev.pulumi("up", "--yes", "--skip-preview", *pack, cwd=app)
    platform = deployed_dev.outputs("dev")
    placed = deployed_dev.outputs("dev", cwd=app)
    pool = platform["gpuPools"][placed["gpuPool"]]
    resource = workload(deployed_dev, app)
    pod = resource["inputs"]["spec"]["template"]["spec"]
    assert pod["tolerations"] == pool["tolerations"]
    assert pod["nodeSelector"].items() >= pool["nodeSelector"].items()
    # pulumi up returned once the provider saw the workload ready: the controller-manager made its pod, the
    # scheduler bound it to the pool's node and kwok ran it.
    status = live(api, resource)["status"]
    assert status.get("succeeded") == 1 if resource["type"] == JOB else status.get("availableReplicas") == 1, status
    template_labels = resource["inputs"]["spec"]["template"]["metadata"]["labels"]
    pods = pods_of(api, resource["outputs"]["metadata"]["namespace"], template_labels)
    assert [p["spec"]["nodeName"] for p in pods] == [gpu_node]
    deployed_dev.pulumi("destroy", "--yes", "--stack", "dev", cwd=app)
    # Garbage collection: the workload's pods go with it.
    api.wait_for("the workload's pods to go",
                 lambda: not pods_of(api, resource["outputs"]["metadata"]["namespace"], template_labels), timeout=60)


def test_an_up_on_a_pool_with_no_node_yet_waits_for_one_and_completes_when_it_comes(
        deployed_dev: Workspace, api: Client) -> None:
    """dev's GPU pool idles at zero nodes: the Job's pod waits, unschedulable, and `pulumi up` waits with it
    (for as long as the app helper's annotation says: a node's bring-up and the provider's own 10 minutes)
    instead of failing; once a node of the pool comes up, the Job runs and `up` completes."""
    app = example(deployed_dev, "gpu-job")
    assert not [n for n in api.get("/api/v1/nodes")["items"]
                if n["metadata"]["labels"].get("gpu-aks.io/pool") == "gput4"], "the pool has no node"
    up = subprocess.Popen([str(BIN / "pulumi"), "up", "--yes", "--skip-preview", "--policy-pack", "../../policies",
                           "--stack", "dev", "--non-interactive"], cwd=app, env=deployed_dev.env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    node = None
    try:
        def pending() -> bool:
            pods = pods_of(api, "default", {"app": "gpu-check"})
            return any(
                c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
                for pod in pods for c in (pod.get("status") or {}).get("conditions") or [])

        api.wait_for("the Job's pod to wait for a GPU node", pending, timeout=300, every=0.5)
        [job] = api.get("/apis/batch/v1/namespaces/default/jobs")["items"]
        assert job["metadata"]["annotations"]["pulumi.com/timeoutSeconds"] == str(15 * 60 + 10 * 60)
        with pytest.raises(subprocess.TimeoutExpired):  # pulumi up waits while the pool has no node
            up.wait(timeout=10)
        [node] = register(api, pool_nodes(deployed_dev, "gput4"))  # the autoscaler brings one up
        output, _ = up.communicate(timeout=300)
    finally:
        if up.poll() is None:
            up.kill()
            up.communicate()
    assert up.returncode == 0, output[-3000:]
    resource = workload(deployed_dev, app)
    assert live(api, resource)["status"].get("succeeded") == 1
    deployed_dev.pulumi("destroy", "--yes", "--stack", "dev", cwd=app)
    remove_node(api, node)


def app_project(deployed_dev: Workspace, name: str, program: str) -> Path:
    """A one-file Python app project beside the platform, with the workspace's virtualenv, its dev stack made."""
    app = deployed_dev.root / f"{name}-app"
    app.mkdir()
    (app / "Pulumi.yaml").write_text(f"name: {name}\nruntime:\n  name: python\n  options:\n"
                                     f"    toolchain: pip\n    virtualenv: {deployed_dev.root / 'venv'}\n")
    (app / "__main__.py").write_text(program)
    deployed_dev.init("dev", cwd=app)
    return app


def test_the_provider_fails_the_up_when_the_helpers_await_allowance_runs_out_on_a_pool_with_no_node(
        deployed_dev: Workspace, api: Client) -> None:
    """The real provider reads the allowance where the app helper writes it: `Placement.await_annotations` gives
    the Job `pulumi.com/timeoutSeconds` (provider/v4 at f47bc2d6: `pkg/metadata/annotations.go:34`; read by
    `TimeoutDuration`, `pkg/metadata/overrides.go:52-65`, in `pkg/await/await.go:272-275`, else 10 minutes), and
    when it runs out with the pod still unschedulable the Job awaiter gives up (`pkg/await/awaiters.go:73-78`,
    `pkg/await/job.go:130,143-147`: "'<name>' timed out waiting to be Ready", `pkg/await/error.go:77-79`) and `up`
    fails with the provider's "failed to fully initialize or become live" (`pkg/provider/provider.go:1716-1723`).
    With any other key the provider would wait its 10 minutes and this `up` would outlast the test's bound."""
    app = app_project(deployed_dev, "short-await", SHORT_AWAIT)
    assert not [n for n in api.get("/api/v1/nodes")["items"]
                if n["metadata"]["labels"].get("gpu-aks.io/pool") == "gput4"], "the pool has no node"
    up = deployed_dev.pulumi("up", "--yes", "--skip-preview", "--stack", "dev", cwd=app, check=False,
                             timeout=SHORT_AWAIT_SECONDS + 240)
    assert up.returncode != 0, up.output[-3000:]
    assert "timed out waiting to be Ready" in up.output, up.output[-3000:]
    assert "failed to fully initialize or become live" in up.output
    [job] = [j for j in api.get("/apis/batch/v1/namespaces/default/jobs")["items"]
             if j["metadata"]["labels"].get("app") == "short-await"]
    assert job["metadata"]["annotations"]["pulumi.com/timeoutSeconds"] == str(SHORT_AWAIT_SECONDS)
    # The cluster did not give up: the pod still waits for a GPU node; the provider stopped waiting for it.
    [pod] = pods_of(api, "default", {"app": "short-await"})
    assert not pod["spec"].get("nodeName")
    deployed_dev.pulumi("destroy", "--yes", "--stack", "dev", cwd=app)


def test_pulumi_up_of_a_new_app_project_installs_it_as_its_readme_says(deployed_dev: Workspace, api: Client,
                                                                       gpu_node: str) -> None:
    """examples/gpu-job/README.md: `pulumi up` installs requirements.txt, the app helper included. Pulumi's host
    creates a missing virtualenv before it lists the packages the program needs (EnsureVenv). On the local
    cluster the Job really runs, on the GPU pool's node, before `up` returns."""
    app = deployed_dev.root / "examples" / "gpu-job"
    shutil.rmtree(app / "venv", ignore_errors=True)
    deployed_dev.init("fresh", cwd=app, config=(("platformStack", "organization/gpu-aks/dev"), *FAST))
    deployed_dev.pulumi("up", "--yes", "--stack", "fresh", cwd=app, timeout=1800)
    found = subprocess.run([str(app / "venv" / "bin" / "python"), "-c",
                            "import gpu_aks_app, pulumi_kubernetes; print(gpu_aks_app.__file__)"],
                           capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert found.returncode == 0 and "/venv/" in found.stdout, found.stderr
    [job] = [r for r in deployed_dev.export("fresh", cwd=app)["deployment"]["resources"] if r["type"] == JOB]
    assert live(api, job)["status"].get("succeeded") == 1
    deployed_dev.pulumi("destroy", "--yes", "--stack", "fresh", cwd=app)
    deployed_dev.pulumi("stack", "rm", "--yes", "fresh", cwd=app)


@pytest.fixture(scope="module")
def untolerated_app(deployed_dev: Workspace) -> Path:
    return app_project(deployed_dev, "untolerated", UNTOLERATED)


def _jobs(workspace: Workspace, cwd: Path) -> list[dict[str, Any]]:
    return [r for r in workspace.export("dev", cwd=cwd)["deployment"].get("resources", []) if r["type"] == JOB]


def _untolerated_jobs(api: Client) -> list[str]:
    return [job["metadata"]["name"] for job in api.get("/apis/batch/v1/jobs")["items"]
            if job["metadata"]["name"].startswith("untolerated")]


def test_an_untolerated_gpu_job_is_stopped_before_it_exists(deployed_dev: Workspace, api: Client,
                                                            untolerated_app: Path) -> None:
    # --skip-preview: the pack's verdict is the only thing between the program and the create.
    up = deployed_dev.pulumi("up", "--yes", "--skip-preview", "--policy-pack", str(deployed_dev.root / "policies"),
                             "--stack", "dev", cwd=untolerated_app, check=False)
    assert up.returncode != 0
    assert "gpu-pods-tolerate-gpu-taint" in up.output, up.output[-3000:]
    assert "mandatory" in up.output
    assert _jobs(deployed_dev, untolerated_app) == []
    assert _untolerated_jobs(api) == [], "the cluster never saw the Job"


def test_policy_pack_config_makes_the_rule_advisory(deployed_dev: Workspace, api: Client,
                                                    untolerated_app: Path) -> None:
    config = untolerated_app / "advisory.json"
    config.write_text(json.dumps({"gpu-pods-tolerate-gpu-taint": "advisory"}))
    up = deployed_dev.pulumi("up", "--yes", "--skip-preview", "--policy-pack", str(deployed_dev.root / "policies"),
                             "--policy-pack-config", str(config), "--stack", "dev", cwd=untolerated_app)
    assert "gpu-pods-tolerate-gpu-taint" in up.output and "advisory" in up.output, up.output[-3000:]
    assert len(_jobs(deployed_dev, untolerated_app)) == 1
    assert len(_untolerated_jobs(api)) == 1
    deployed_dev.pulumi("destroy", "--yes", "--stack", "dev", cwd=untolerated_app)
    assert _untolerated_jobs(api) == []
