"""`python -m tools.preview`: the offline preview with the policy pack, the project's main job."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tools.preview import main, stacks

# Each test runs the offline preview with the real policy pack: `make test` and CI run them, `make test-fast` does not.
pytestmark = pytest.mark.slow


def preview(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), stdout=out), out.getvalue()


def test_dev_tree_and_clean_policies():
    code, output = preview("dev")
    assert code == 0
    assert "Previewing gpu-aks/dev offline" in output
    assert " +     ├─ gpu-aks:index:GpuCluster" in output
    assert " +       ├─ gpu-aks:index:GpuAgentPool" in output
    assert " +         ├─ azure-native:containerservice:AgentPool        gput4-pool" in output
    assert '│    agentPoolName: "gput4' in output
    assert '│    vmSize: "Standard_NC4as_T4_v3"' in output
    assert '│    minCount: 0' in output and '│    nodeTaints: ["sku=gpu:NoSchedule"]' in output
    assert '│    images: ["nvcr.io/nvidia/k8s-device-plugin:v0.20.0"]' in output
    assert '│    kubeconfig: "[secret]"' in output
    assert "+ 22 to create" in output
    assert "__provider" not in output, "a dynamic resource's serialized provider is machinery, not config"
    assert "gpu-aks-policies: no violations" in output


def test_prod_json_document():
    code, output = preview("prod", "--json")
    document = json.loads(output)
    assert code == 0 and document["stack"] == "prod"
    assert set(document) == {"stack", "resources", "violations", "outputs", "cost", "warnings"}
    assert set(document["cost"]["pools"]) == {"system", "cpu", "a100mig", "t4spot"}
    assert document["outputs"]["kubeconfig"] == "[secret]"
    assert document["outputs"]["gpuPools"]["a100mig"]["nodeSelector"] == {"accelerator": "nvidia",
                                                                        "gpu-aks.io/pool": "a100mig"}
    types = [r["type"] for r in document["resources"]]
    assert types.count("azure-native:containerservice:AgentPool") == 3
    for resource in document["resources"]:
        assert set(resource) == {"urn", "type", "name", "parent", "inputs"}
    provider = next(r for r in document["resources"] if r["type"] == "pulumi:providers:kubernetes")
    assert provider["inputs"]["kubeconfig"] == "[secret]"
    assert "kubelogin" not in output, "no secret leaks into the document"
    assert all(v["level"] != "mandatory" for v in document["violations"])


def _stack_file(tmp_path, **config):
    base = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    base["config"].update(config)
    path = tmp_path / "Pulumi.planted.yaml"
    path.write_text(yaml.safe_dump(base))
    return path


def test_a_device_plugin_that_leaves_out_a_gpu_pool_is_refused_by_the_settings(tmp_path, capsys):
    """The pack's device-plugin rule runs on the platform's own DaemonSets before anything is created
    (it refused this stack at preview, exit 1, until issue 37): exit 2, at devicePlugin.pools."""
    stack_file = _stack_file(tmp_path, **{
        "gpu-aks:gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 2},
                             {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "maxCount": 1}],
        "gpu-aks:devicePlugin": {"pools": ["gput4"]},
    })
    line = stack_file.read_text().splitlines().index("  gpu-aks:devicePlugin:") + 2
    code, output = preview("dev", "--config-file", str(stack_file))
    error = capsys.readouterr().err
    assert code == 2 and output == ""
    assert f"Pulumi.planted.yaml:{line}: gpu-aks:devicePlugin.pools: leaves out the GPU pool gpuPools[a100], " \
           "which is not served by any NVIDIA device plugin" in error, error
    assert "device-plugin-tolerates-gpu-pools (mandatory)" in error


@pytest.mark.parametrize("pool, taints", [("t4spot", []), ("t4spot", ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]),
                                          ("a100mig", ["team=ml:NoSchedule"]), ("a100mig", ["sku=gpu:PreferNoSchedule"])])
def test_a_gpu_pool_that_loses_its_gpu_taint_is_refused_by_the_settings(tmp_path, capsys, pool, taints):
    """The pack's mandatory pool rule runs on the platform's own pools before anything is created:
    exit 2, at the stack file's line of the pool's key, in the config's terms."""
    stack_file = tmp_path / "Pulumi.prod.yaml"
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    anchor = f"    - name: {pool}\n"
    assert anchor in text
    stack_file.write_text(text.replace(anchor, f"{anchor}      nodeTaints: {json.dumps(taints)}\n"))
    line = stack_file.read_text().splitlines().index(f"      nodeTaints: {json.dumps(taints)}") + 1
    code, output = preview("prod", "--config-file", str(stack_file))
    error = capsys.readouterr().err
    assert code == 2 and output == ""
    assert f"Pulumi.prod.yaml:{line}: gpu-aks:gpuPools[{pool}].nodeTaints: " in error, error
    # With no NoSchedule taint at all the GPU section says so itself, with the document's other problems.
    assert "1 problem(s)" in error and "sku=gpu:NoSchedule" in error


def test_policy_pack_config_is_applied(tmp_path):
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"gpu-node-pools-are-tainted": {
        "gpuTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}}))
    code, output = preview("dev", "--json", "--policy-pack-config", str(config))
    violations = json.loads(output)["violations"]
    assert code == 1
    assert [(v["policy"], v["urn"].rsplit("::", 1)[-1]) for v in violations] == [
        ("gpu-node-pools-are-tainted", "gput4-pool")]


def test_broken_config_exits_2_naming_every_bad_key(tmp_path, capsys):
    stack_file = _stack_file(tmp_path, **{
        "gpu-aks:gpuPools": [{"name": "gpunp", "vmSize": "Standard_NC6", "minCount": 3, "maxCount": 1,
                              "nodeTaints": ["sku=gpu"]}],
        "gpu-aks:cluster": {"kubeloginMode": "devicecode"},
    })
    code, output = preview("dev", "--config-file", str(stack_file))
    error = capsys.readouterr().err
    assert code == 2 and output == ""
    for key in ("gpu-aks:gpuPools[gpunp].vmSize", "gpu-aks:gpuPools[gpunp].minCount",
                "gpu-aks:gpuPools[gpunp].nodeTaints[0]", "gpu-aks:cluster.kubeloginMode"):
        assert key in error
    assert "4 problem(s)" in error


def test_unknown_stack_and_unreadable_config_exit_2(tmp_path, capsys):
    # A name no stack file can have, whatever Pulumi.<stack>.yaml files a user adds.
    missing = "no-such-stack-" + "-".join(stacks())
    assert preview(missing)[0] == 2
    assert f"unknown stack '{missing}'" in capsys.readouterr().err
    broken = tmp_path / "Pulumi.x.yaml"
    broken.write_text("config: [unclosed\n")
    assert preview("x", "--config-file", str(broken))[0] == 2
    assert f"{broken}:1: cannot use this stack file: invalid YAML" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["dev\n::error::forged", "a" * 101, "", "team/dev", "dev\x1b[2J", "dév"],
                         ids=["line break", "101 characters", "empty", "slash", "escape", "not ASCII"])
def test_a_stack_name_pulumi_refuses_is_refused_before_anything_runs(capsys, monkeypatch, name):
    # Pulumi's rule (sdk/go/common/tokens/stack_name.go `ParseStackName`): with --config-file no stack file
    # is looked up by the name, and the name went into the tree and summary as it was.
    monkeypatch.setattr("tools.preview.PolicyPackProcess", None)  # nothing may start
    assert preview(name, "--config-file", str(ROOT / "Pulumi.dev.yaml")) == (2, "")
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("error: '") and line.endswith("' is not a stack name: 1 to 100 letters, digits, '-', "
                                                         "'_' or '.', as Pulumi's stack names are"), line
    assert len(line) < 300 and "\x1b" not in line


def test_a_preview_ended_by_sigterm_ends_its_policy_pack(tmp_path):
    # A CI timeout or `make outputs`' trap sends SIGTERM once the pack serves: Python's own SIGTERM ended
    # the preview at once, and the pack, its port printed, ran on with no parent (issue 50).
    script = """
import os, signal, sys, time
from tools import preview
def analyze(run, config, pack):
    pack.__enter__()
    print(pack.process.pid, flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(60)
preview.analyze = analyze
preview.main(["dev"])
"""
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 143, result.stderr
    pack = int(result.stdout.split()[0])
    assert not Path(f"/proc/{pack}").exists() or "zombie" in Path(f"/proc/{pack}/status").read_text(), "the pack runs on"


def test_secure_values_stay_secret_top_level_and_nested(tmp_path):
    stack_file = _stack_file(tmp_path, **{"gpu-aks:cluster": {"tags": {"costCenter": {"secure": "v1:BBBBnested"}},
                                                              "kubernetesVersion": "1.37"},
                                          "azure-native:clientSecret": {"secure": "v1:AAAAencrypted"}})
    code, output = preview("dev", "--json", "--config-file", str(stack_file))
    assert code == 0
    for secret in ("AAAAencrypted", "BBBBnested", "secret placeholder"):
        assert secret not in output


def test_main_job_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "tools.preview", "dev"], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "no violations" in result.stdout


# --- Issue 28, item 6: output that lands in PR comments and diffs is the same run after run ----------


@pytest.mark.parametrize("argv", [("prod",), ("prod", "--json")], ids=["summary", "json"])
def test_the_preview_prints_the_same_text_run_after_run_whatever_the_registration_order(argv, monkeypatch):
    import tools.preview as module

    first, second = preview(*argv), preview(*argv)
    assert first == second
    real = module.run_stack_program

    def registered_in_reverse(*args, **kwargs):
        run = real(*args, **kwargs)
        run.resources.reverse()
        return run

    monkeypatch.setattr(module, "run_stack_program", registered_in_reverse)
    assert preview(*argv) == first


def test_violations_print_in_one_order():
    from offline.analyzer import Diagnostic
    from offline.mockrun import ProgramRun
    from tools.preview import in_print_order

    diagnostics = [Diagnostic("b", "advisory", "urn:2", "m"), Diagnostic("a", "mandatory", "urn:9", "z"),
                   Diagnostic("a", "mandatory", "urn:1", "y"), Diagnostic("a", "advisory", "urn:1", "x")]
    run = ProgramRun([], {}, set(), [])
    ordered = in_print_order(run, diagnostics)
    assert ordered == in_print_order(run, list(reversed(diagnostics)))
    assert [(d.policy, d.urn) for d in ordered] == [("a", "urn:1"), ("a", "urn:1"), ("a", "urn:9"), ("b", "urn:2")]


# --- Issue 30: the preview's speed, without changing what it registers ------------------------------


def _aliases_sent(monkeypatch, leave_to_engine: bool) -> dict[str, list[str]]:
    """The alias specs every RegisterResource of the prod stack carries, by URN."""
    import pulumi.runtime.resource
    from google.protobuf import json_format

    from offline import mockrun
    from tools import preview as preview_module

    sent: dict[str, list[str]] = {}
    register = mockrun.RecordingMonitor.RegisterResource

    def recording(self, request):
        response = register(self, request)
        sent[response.urn] = sorted(json.dumps(json_format.MessageToDict(alias), sort_keys=True)
                                    for alias in request.aliases)
        return response

    monkeypatch.setattr(mockrun.RecordingMonitor, "RegisterResource", recording)
    if not leave_to_engine:
        monkeypatch.setattr(mockrun, "_alias_urns_left_to_the_engine", _as_shipped)
    preview_module.run_stack_program("prod")
    assert pulumi.runtime.resource.all_aliases.__module__ == "pulumi.runtime.resource", "restored after the run"
    return sent


def _as_shipped():
    import contextlib
    return contextlib.nullcontext()


def test_leaving_alias_urns_to_the_engine_sends_the_same_aliases(monkeypatch):
    shipped = _aliases_sent(monkeypatch, leave_to_engine=False)
    patched = _aliases_sent(monkeypatch, leave_to_engine=True)
    assert patched == shipped
    assert sum(map(len, shipped.values())) > 500, "azure-native's former API versions are aliases: the patch matters"


def test_the_sdk_reads_collapsed_alias_urns_only_where_the_engine_lacks_alias_specs():
    """`_alias_urns_left_to_the_engine` (offline/mockrun.py) is safe while `Resource._aliases` is read only
    by `all_aliases`, which `prepare_aliases` calls only for a monitor without alias specs; a newer SDK
    that reads it elsewhere fails here first."""
    import inspect

    import pulumi
    import pulumi.runtime.resource

    readers = []
    for path in sorted(Path(pulumi.__file__).parent.rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "._aliases" in line and "self._aliases" not in line:
                readers.append((path.name, line.strip()))
    assert readers == [("resource.py", "for parent_alias in parent._aliases:")]
    assert "parent._aliases" in inspect.getsource(pulumi.runtime.resource.all_aliases)
    prepare = inspect.getsource(pulumi.runtime.resource.prepare_aliases)
    assert prepare.index("if supports_alias_specs:") < prepare.index("all_aliases(")


def test_the_command_prints_everything_and_its_status_without_the_interpreters_teardown(tmp_path):
    """`run_cli` ends the process with `os._exit` once the streams are flushed: the whole report and
    the status still come out, through a pipe as to a file."""
    piped = subprocess.run([sys.executable, "-m", "tools.preview", "dev", "--json"], cwd=ROOT, capture_output=True,
                           text=True, check=False)
    assert piped.returncode == 0, piped.stderr
    document = json.loads(piped.stdout)  # the whole document: a lost buffer would cut it short
    assert document["violations"] == [] and document["outputs"]["clusterName"]
    with (tmp_path / "out.txt").open("w") as out:
        failed = subprocess.run([sys.executable, "-m", "tools.preview", "nosuchstack"], cwd=ROOT, stdout=out,
                                stderr=subprocess.PIPE, text=True, check=False)
    assert failed.returncode == 2 and "unknown stack 'nosuchstack'" in failed.stderr
