"""The component package: GpuCluster's schema and construction through the plugin protocol, as the
Pulumi CLI uses them, and the program built on GpuCluster against the graph of the program before it.

The plugin is started once per module as the CLI's Python host starts the folder that holds
PulumiPlugin.yaml (tests/plugin_host.py: `python gpu_aks_plugin <engine address>`, the port read from
its first line of output). `GetSchema` is checked against the settings layer and
the committed snapshot; `Construct` runs against a fake engine and resource monitor served here, which
answer with the same mocks the program's tests use, so what the plugin registers can be compared
with what the program registers under the mock runtime.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import jsonschema
import pulumi
import pytest
import yaml
from google.protobuf import empty_pb2, json_format, struct_pb2
from gpu_aks_policies.declarations import Key, ListOf, Section
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    errors_pb2,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
    status_pb2,
)
from pulumi.runtime.rpc import UNKNOWN as UNKNOWN_VALUE

import offline.mockrun as mockrun
from components import gpu_cluster_codegen
from components.access import DEPLOYER_OUTPUT
from components.aks_api import AUTOSCALER_SETTINGS, GPU_INSTANCE_PROFILES, OS_SKUS
from components.cluster import NETWORK_OUTPUT
from components.gpu_cluster import (
    GpuCluster,
    GpuClusterInputError,
    args_from_stack_config,
    settings_from_args,
    stack_config_from_args,
)
from components.gpu_cluster_args import GpuClusterArgs, GpuInstanceProfile, GpuPool, OsSKU
from components.platform_settings import DOCUMENT, parse_settings
from components.pools import RENAMED_TYPES
from components.replacements import IDENTITY_OUTPUT
from components.settings import SettingsError
from gpu_aks_plugin.schema import SCHEMA_SNAPSHOT
from offline.mockrun import PlatformMocks, RecordingMonitor, RegisteredResource
from tests.conftest import ROOT, TODAY, run_stack
from tests.package_graph import FULL_STACK, SNAPSHOT, full_stack_pack_config, program_snapshot, resource_graph
from tests.plugin_host import load_manifest, plugin_dirs, plugin_project_fields, run_plugin_command

# The tests start the plugin over gRPC and run the program under mocks: `make test` and CI run them, `make test-fast` does not.
from tools.stacks import config_from_stack_file

pytestmark = pytest.mark.slow

TOKEN = "gpu-aks:index:GpuCluster"
PLUGIN = ROOT / "gpu_aks_plugin"
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLE = ROOT / "examples" / "yaml-platform" / "Pulumi.yaml"
PROJECT = "gpu-aks"


def stack_args(stack: str) -> GpuClusterArgs:
    """A stack file's config as GpuCluster's inputs (what `__main__.py` passes)."""
    config, _ = config_from_stack_file(ROOT / f"Pulumi.{stack}.yaml", PROJECT)
    raw = {key.split(":", 1)[1]: json.loads(value) if value[:1] in "[{" else value
           for key, value in config.items() if key.startswith(f"{PROJECT}:")}
    return args_from_stack_config(raw, config["azure-native:location"])


# --- The program: unchanged by GpuCluster ------------------------------------------------------------


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> mockrun.ProgramRun:
    stack_file = tmp_path_factory.mktemp("full") / "Pulumi.full.yaml"
    stack_file.write_text(json.dumps(FULL_STACK))
    with full_stack_pack_config():
        run = run_stack("full", stack_file)
    assert run.error is None, run.error
    return run


@pytest.mark.parametrize("stack", ["dev", "prod", "full"])
def test_the_program_registers_what_it_did_before_gpu_cluster(stack, dev_run, prod_run, full_run):
    run = {"dev": dev_run, "prod": prod_run, "full": full_run}[stack]
    before = json.loads(SNAPSHOT.read_text())[stack]
    # The one new resource is GpuCluster itself; the graph is compared with it standing in for the stack.
    [platform] = run.by_type(TOKEN)
    assert platform.name == "gpu-aks" and platform.parent.endswith("::pulumi:pulumi:Stack::gpu-aks-" + stack)
    assert program_snapshot(run, root="gpu-aks") == json.loads(json.dumps(before)), (
        "the program's resources or outputs changed; if on purpose, run `venv/bin/python -m tests.package_graph` "
        "and review the diff")
    top_level = [r for r in run.resources if r.parent == platform.urn]
    assert {r.type for r in top_level} >= {"gpu-aks:index:AksCluster", "gpu-aks:index:ClusterAccess"}


class AliasRecorder(RecordingMonitor):
    aliases: dict[str, list[Any]] = {}

    def RegisterResource(self, request: Any) -> Any:
        AliasRecorder.aliases[request.name] = list(request.aliases)
        return super().RegisterResource(request)


def test_existing_stacks_keep_their_urns_through_aliases(monkeypatch):
    """Each former top-level component is aliased to its old parent, the stack, so `pulumi up` on a
    gpu-aks 0.2 stack moves it (and, through the parent, its children) under GpuCluster in place."""
    monkeypatch.setattr(mockrun, "RecordingMonitor", AliasRecorder)
    AliasRecorder.aliases = {}
    run = run_stack("dev")
    assert run.error is None, run.error
    platform = run.one(TOKEN)
    renamed = 0
    for resource in run.resources:
        aliases = AliasRecorder.aliases[resource.name]
        if resource.parent == platform.urn and resource.type in RENAMED_TYPES:
            # A renamed pool component (NodePool -> CpuAgentPool, GpuNodePool -> GpuAgentPool): its old
            # type under GpuCluster (0.3 stacks) and under the stack (0.2 stacks), and the new type
            # under the stack.
            former = RENAMED_TYPES[resource.type]
            assert sorted((alias.spec.type, alias.spec.noParent) for alias in aliases) == sorted(
                [("", True), (former, False), (former, True)]), resource.name
            renamed += 1
        elif resource.parent == platform.urn:
            [alias] = aliases
            assert alias.spec.noParent, f"{resource.name} must alias the stack as its old parent"
        else:
            # Children follow their parent's alias; their own aliases are the providers' (type renames).
            assert not any(alias.spec.noParent for alias in aliases), resource.name
    assert renamed == 2, "dev has a CPU and a GPU pool"


def test_bad_config_still_stops_the_program_with_the_stack_config_message(tmp_path):
    stack_file = tmp_path / "Pulumi.broken.yaml"
    stack_file.write_text(yaml.safe_dump({"config": {
        "azure-native:location": "eastus2",
        "gpu-aks:cluster": {"autoScalerProfile": {"scale-down-unneeded-time": "5 minutes"}},
        "gpu-aks:gpuPools": [{"name": "gpunp", "vmSize": "Standard_NC4as_T4_v3", "minCount": 3, "maxCount": 1}],
    }}))
    run = run_stack("broken", stack_file)
    assert isinstance(run.error, pulumi.RunError) and run.resources == []
    assert "gpu-aks:gpuPools[gpunp].minCount: 3 is above maxCount 1" in str(run.error)
    assert "gpu-aks:cluster.autoScalerProfile.scale-down-unneeded-time: '5 minutes' is not allowed" in str(run.error)


def test_python_callers_can_use_the_generated_enums_and_get_the_same_resources(dev_run):
    args = stack_args("dev")
    pools: list[GpuPool] = [GpuPool(**pool, osSKU=OsSKU.UBUNTU) for pool in args["gpuPools"]]
    run = mockrun.run_pulumi(lambda: GpuCluster("gpu-aks", {**args, "gpuPools": pools}, program_layout=True),
                             "dev")
    assert run.error is None, run.error
    assert resource_graph(run, root="gpu-aks") == resource_graph(dev_run, root="gpu-aks")


def test_two_gpu_clusters_fit_in_one_program():
    def program() -> None:
        for name in ("east", "west"):
            GpuCluster(name, {"location": f"{name}us2", "cluster": {"name": f"gpu-{name}"},
                              "cpuPools": [{"name": "cpu"}], "smokeTest": {"enabled": True},
                              "observability": {"enabled": True},
                              "gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3"},
                                           {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4",
                                            "gpuInstanceProfile": GpuInstanceProfile.MIG2G}]})

    run = mockrun.run_pulumi(program, "dev")
    assert run.error is None, run.error
    names = [r.name for r in run.resources]
    assert len(names) == len(set(names)), "children are named after their GpuCluster"
    assert {r.name for r in run.by_type("gpu-aks:index:GpuAgentPool")} == {"east-gput4", "west-gput4", "east-a100",
                                                                          "west-a100"}
    assert {r.inputs["resourceName"] for r in run.by_type("azure-native:containerservice:ManagedCluster")} == {
        "gpu-east", "gpu-west"}


# --- Inputs: the settings layer's validation, named by input path -------------------------------------


def expected_problems(raw: dict[str, Any], location: Any) -> list[str]:
    try:
        parse_settings(raw, "unit", location, today=TODAY)
    except SettingsError as error:
        return [str(problem) for problem in error.problems]
    return []


def as_input_problem(problem: str) -> tuple[str, str]:
    """A stack config problem as GpuCluster names it: the key without `gpu-aks:`, autoscaler keys in
    the camelCase the schema gives them."""
    for key in sorted(AUTOSCALER_SETTINGS, key=len, reverse=True):
        problem = problem.replace(key, gpu_cluster_codegen.camel_from_kebab(key))
    path, reason = problem.split(": ", 1)
    return path.removeprefix("gpu-aks:"), reason.replace("'gpu-aks:", "'")


def test_a_bad_input_gets_the_stack_config_message_at_its_input_path():
    args: dict[str, Any] = {"location": "eastus2", "gpuPools": [
        {"name": "gpunp", "vmSize": "Standard_NC6", "minCount": 1.5, "osSKU": "Windows2019"}],
        "cluster": {"autoScalerProfile": {"scaleDownUnneededTime": "5 minutes", "expandr": "random"}}}
    with pytest.raises(GpuClusterInputError) as caught:
        settings_from_args(args, "unit")
    raw = {"gpuPools": args["gpuPools"], "cluster": {"autoScalerProfile": {
        "scale-down-unneeded-time": "5 minutes", "expandr": "random"}}}
    expected = expected_problems(raw, "eastus2")
    assert len(expected) == 5
    assert caught.value.problems == [as_input_problem(problem) for problem in expected]
    paths = [path for path, _ in caught.value.problems]
    assert "gpuPools[gpunp].minCount" in paths and "cluster.autoScalerProfile.scaleDownUnneededTime" in paths


def test_stack_config_and_inputs_convert_both_ways_without_touching_the_config():
    raw = {key.split(":", 1)[1]: value for key, value in FULL_STACK["config"].items() if key.startswith("gpu-aks:")}
    before = json.dumps(raw, sort_keys=True)
    args = args_from_stack_config(raw, "westeurope")
    assert args["cluster"]["autoScalerProfile"] == {"scaleDownUnneededTime": "7m", "daemonsetEvictionForEmptyNodes": True}
    assert stack_config_from_args(args) == (raw, "westeurope", [])
    assert json.dumps(raw, sort_keys=True) == before


def test_outputs_and_unknowns_are_refused_by_path():
    args = {"location": pulumi.Output.from_input("eastus2"), "gpuPools": [{"name": "a", "vmSize": pulumi.Output.secret("x")}]}
    with pytest.raises(GpuClusterInputError) as caught:
        settings_from_args(args, "unit")
    assert sorted(path for path, _ in caught.value.problems) == ["gpuPools[a].vmSize", "location"]
    assert all("must be plain values known when the program runs" in reason for _, reason in caught.value.problems)


def test_hostile_nesting_is_refused_not_recursed():
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(10_000):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(GpuClusterInputError) as caught:
        settings_from_args({"location": "eastus2", "cluster": {"tags": deep}}, "unit")
    assert "larger or deeper than gpu-aks accepts" in str(caught.value)


# --- The generated args module ---------------------------------------------------------------------


def test_the_generated_args_module_is_current():
    committed = gpu_cluster_codegen.ARGS_MODULE.read_text()
    assert committed == gpu_cluster_codegen.render(gpu_cluster_codegen.model()), (
        "components/gpu_cluster_args.py is stale: run `venv/bin/python -m gpu_aks_plugin.schema`")


# --- The plugin, over gRPC ---------------------------------------------------------------------------


class FakeEngine(engine_pb2_grpc.EngineServicer):
    def __init__(self) -> None:
        self.messages: list[str] = []

    def Log(self, request: Any, context: Any) -> Any:
        self.messages.append(request.message)
        return empty_pb2.Empty()

    def GetRootResource(self, request: Any, context: Any) -> Any:
        return engine_pb2.GetRootResourceResponse(urn="")

    def SetRootResource(self, request: Any, context: Any) -> Any:
        return engine_pb2.SetRootResourceResponse()


class _Recording(RecordingMonitor):
    """The program tests' recording mock monitor, with URNs made from the request's own stack."""

    stack = "dev"

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        if parent:
            type_ = parent.split("::")[2].split("$").pop() + "$" + type_
        return f"urn:pulumi:{self.stack}::{PROJECT}::{type_}::{name}"


class FakeMonitor(resource_pb2_grpc.ResourceMonitorServicer):
    """A resource monitor served over gRPC that answers as `offline.mockrun.PlatformMocks` does."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset("dev")

    def reset(self, stack: str) -> None:
        _Recording.stack = stack
        self.recording = _Recording(PlatformMocks())

    def SupportsFeature(self, request: Any, context: Any) -> Any:
        return resource_pb2.SupportsFeatureResponse(hasSupport=self.recording.SupportsFeature(request).hasSupport)

    def GetDeploymentInfo(self, request: Any, context: Any) -> Any:
        return self.recording.GetDeploymentInfo(request)

    def RegisterResource(self, request: Any, context: Any) -> Any:
        with self.lock:
            return self.recording.RegisterResource(request)

    def RegisterResourceOutputs(self, request: Any, context: Any) -> Any:
        return empty_pb2.Empty()

    def Invoke(self, request: Any, context: Any) -> Any:
        with self.lock:
            return self.recording.Invoke(request)

    def RegisterPackage(self, request: Any, context: Any) -> Any:
        return self.recording.RegisterPackage(request)

    def SignalAndWaitForShutdown(self, request: Any, context: Any) -> Any:
        return empty_pb2.Empty()


class Plugin:
    def __init__(self, stub: provider_pb2_grpc.ResourceProviderStub, engine: FakeEngine, monitor: FakeMonitor,
                 monitor_address: str) -> None:
        self.stub, self.engine, self.monitor, self.monitor_address = stub, engine, monitor, monitor_address

    def construct(self, inputs: dict[str, Any], stack: str = "dev", name: str = "gc0") -> Any:
        self.monitor.reset(stack)
        struct = struct_pb2.Struct()
        struct.update(json.loads(json.dumps(inputs)))
        request = provider_pb2.ConstructRequest(
            project=PROJECT, stack=stack, dryRun=True, monitorEndpoint=self.monitor_address, type=TOKEN, name=name,
            parent=f"urn:pulumi:{stack}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{stack}", inputs=struct)
        return self.stub.Construct(request, timeout=60)


def test_pulumi_reads_every_key_of_the_plugin_manifest():
    """PluginProject has no `main` (0.3.1 named its entry point there, and Pulumi dropped it)."""
    assert plugin_project_fields() == {"runtime", "packages", "requiredPulumiVersion", "template"}
    for plugin_dir in plugin_dirs(ROOT):
        manifest = load_manifest(plugin_dir)
        assert set(manifest) <= plugin_project_fields(), f"{plugin_dir}: Pulumi ignores {set(manifest) - plugin_project_fields()}"
        assert manifest["runtime"]["name"] == "python"


def test_the_plugin_folder_is_the_provider_and_the_root_stays_the_program():
    assert plugin_dirs(ROOT) == [PLUGIN], "one plugin folder: gpu_aks_plugin/ (the root is the platform program)"
    assert run_plugin_command(PLUGIN, ["127.0.0.1:1"])[1:] == [str(PLUGIN), "127.0.0.1:1"]
    assert yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["runtime"]["name"] == "python"
    assert "GpuCluster(" in (ROOT / "__main__.py").read_text()


def test_the_host_command_without_a_main_module_runs_pulumi_run_plugin(tmp_path):
    (tmp_path / "PulumiPlugin.yaml").write_text("runtime: python\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "some-components"\n')
    assert run_plugin_command(tmp_path, ["a"])[1:] == ["-m", "pulumi.run.plugin", "some-components", "a"]
    (tmp_path / "__main__.py").write_text("")
    assert run_plugin_command(tmp_path, ["a"])[1:] == [str(tmp_path), "a"]


def _pins(path) -> dict[str, str]:
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return dict(line.split("==") for line in lines if "==" in line)


def test_the_plugin_installs_what_the_program_pins_and_no_path_it_would_rebuild_each_time():
    """The CLI installs the plugin folder's requirements.txt on every `pulumi package get-schema|gen-sdk|add`
    (pulumi `sdk/python/toolchain/pip.go`), and pip rebuilds a path requirement every time: the rules are
    loaded from the checkout instead (the next test)."""
    requirements = PLUGIN / "requirements.txt"
    pins, program = _pins(requirements), _pins(ROOT / "requirements.txt")
    assert pins and all(program.get(name) == version for name, version in pins.items()), (pins, program)
    assert {"pulumi", "pulumi-azure-native", "pulumi-kubernetes"} <= set(pins)
    lines = [line.split("#")[0].strip() for line in requirements.read_text().splitlines()]
    assert [line for line in lines if line and "==" not in line] == []


def test_the_plugin_loads_the_rules_from_the_checkout_where_they_are_not_installed():
    """A clone's virtualenv, made from the plugin's requirements.txt, has no gpu_aks_policies: the plugin's entry
    point loads policies/ under that name (here the editable install's finder is taken away first)."""
    script = ("import runpy, sys\n"
              "sys.meta_path[:] = [f for f in sys.meta_path if 'gpu_aks_policies' not in getattr(f, '__module__', '')]\n"
              f"runpy.run_path({str(PLUGIN / '__main__.py')!r}, run_name='not_main')\n"
              "print(sys.modules['gpu_aks_policies'].__file__, sys.modules['gpu_aks_policies.rules'].__name__)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [str(ROOT / "policies" / "__init__.py"), "gpu_aks_policies.rules"]


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plugin]:
    engine, monitor = FakeEngine(), FakeMonitor()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    engine_pb2_grpc.add_EngineServicer_to_server(engine, server)
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    # As the CLI's Python language host runs the folder with PulumiPlugin.yaml (tests/plugin_host.py:
    # `python <plugin folder> <engine address>` with its virtualenv's python), from the consumer's folder.
    [plugin_dir] = plugin_dirs(ROOT)
    process = subprocess.Popen(run_plugin_command(plugin_dir, [f"127.0.0.1:{port}"]),
                               cwd=tmp_path_factory.mktemp("consumer"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ})
    try:
        assert process.stdout is not None and process.stderr is not None
        first_line = process.stdout.readline().strip()
        assert first_line.isdigit(), f"the plugin printed {first_line!r} instead of its port: {process.stderr.read()}"
        channel = grpc.insecure_channel(f"127.0.0.1:{first_line}")
        yield Plugin(provider_pb2_grpc.ResourceProviderStub(channel), engine, monitor, f"127.0.0.1:{port}")
        channel.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
        server.stop(None)


@pytest.fixture(scope="module")
def schema(plugin: Plugin) -> dict[str, Any]:
    return json.loads(plugin.stub.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=30).schema)


def test_get_schema_matches_the_committed_snapshot(schema):
    assert schema == json.loads(SCHEMA_SNAPSHOT.read_text()), (
        "the package schema changed: review the change to GpuCluster's interface (docs/component-package.md, "
        "'What is a breaking change'), then run `venv/bin/python -m gpu_aks_plugin.schema`")


def _ecmascript_to_python(node: Any) -> Any:
    """The metaschema's patterns are ECMA-262 (`(?<major>...)`); Python's `re` spells named groups `(?P<`."""
    if isinstance(node, dict):
        return {key: re.sub(r"\(\?<(?![=!])", "(?P<", value) if key == "pattern" and isinstance(value, str)
                else _ecmascript_to_python(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_ecmascript_to_python(item) for item in node]
    return node


def metaschema_errors(package_schema: dict[str, Any]) -> list[str]:
    metaschema = _ecmascript_to_python(json.loads((FIXTURES / "pulumi" / "pulumi.json").read_text()))
    validator = jsonschema.Draft202012Validator(metaschema)
    return [f"{error.json_path}: {error.message[:200]}" for error in validator.iter_errors(package_schema)]


def test_the_served_and_committed_schema_pass_pulumis_metaschema(schema):
    assert metaschema_errors(schema) == []
    assert metaschema_errors(json.loads(SCHEMA_SNAPSHOT.read_text())) == []
    # The check can fail: an enum value described as null (gpu-aks 0.3.1 had 69) is refused.
    broken = json.loads(json.dumps(schema))
    next(t for t in broken["types"].values() if "enum" in t)["enum"][0]["description"] = None
    assert len(metaschema_errors(broken)) == 1


def test_the_schema_has_one_component_with_the_project_version(schema):
    assert schema["name"] == PROJECT
    assert schema["version"] == re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert list(schema["resources"]) == [TOKEN]
    assert schema["resources"][TOKEN]["isComponent"] is True


def _object(schema: dict[str, Any], ref: str) -> dict[str, Any]:
    return schema["types"][ref.removeprefix("#/types/")]


def _declared_types(schema: dict[str, Any]) -> Iterator[tuple[str, Section, dict[str, Any]]]:
    """Each declared section with the schema type GpuCluster's inputs give it."""
    todo = [("", DOCUMENT.root, {"properties": schema["resources"][TOKEN]["inputProperties"]})]
    while todo:
        path, section, type_def = todo.pop()
        yield path, section, type_def
        for name in section.key_names:
            item = section.declared(name)
            prop = type_def["properties"][name]
            if isinstance(item, Section):
                todo.append((f"{path}.{name}", item, _object(schema, prop["$ref"])))
            elif isinstance(item, ListOf):
                todo.append((f"{path}.{name}[]", item.item, _object(schema, prop["items"]["$ref"])))


def test_every_declared_config_key_is_an_input_and_nothing_else_is(schema):
    component = schema["resources"][TOKEN]
    assert component["requiredInputs"] == ["location"]
    sections = 0
    for path, section, type_def in _declared_types(schema):
        extra = {"location"} if not path else set()
        assert set(type_def["properties"]) == {*section.key_names, *extra}, path or "top level"
        required = sorted(name for name in section.key_names
                          if isinstance(section.declared(name), Key) and section.declared(name).required)
        assert sorted(type_def.get("required", [])) == sorted(required) or not path, path
        sections += 1
    assert sections >= 12, "the walk reached every section"
    autoscaler = schema["types"]["gpu-aks:index:AutoScalerProfile"]["properties"]
    assert {gpu_cluster_codegen.camel_from_kebab(key) for key in AUTOSCALER_SETTINGS} == set(autoscaler)
    assert schema["types"]["gpu-aks:index:GpuPool"]["required"] == ["name", "vmSize"]


def test_every_closed_set_is_an_enum_of_the_declared_values(schema):
    for path, section, type_def in _declared_types(schema):
        for name in section.key_names:
            item = section.declared(name)
            if isinstance(item, Key) and item.allowed:
                prop = type_def["properties"][name]
                ref = prop.get("$ref") or prop["items"]["$ref"]
                assert [value["value"] for value in _object(schema, ref)["enum"]] == list(item.allowed), f"{path}.{name}"


def _properties(schema: dict[str, Any], properties: dict[str, Any], where: str) -> Iterator[tuple[str, dict]]:
    for name, prop in properties.items():
        yield f"{where}.{name}", prop


def test_every_input_and_output_is_typed_and_documented(schema):
    component = schema["resources"][TOKEN]
    todo = [*_properties(schema, component["inputProperties"], "inputs"),
            *_properties(schema, component["properties"], "outputs")]
    seen_types = set()
    while todo:
        where, prop = todo.pop()
        assert prop.get("description"), f"{where} has no description"
        for inner in (prop, prop.get("items") or {}, prop.get("additionalProperties") or {}):
            ref = inner.get("$ref", "")
            assert ref != "pulumi.json#/Any", f"{where} is typed Any"
            assert inner.get("type") or ref or inner is not prop, f"{where} has no type"
            if ref.startswith("#/types/") and ref not in seen_types:
                seen_types.add(ref)
                type_def = _object(schema, ref)
                assert type_def.get("description"), f"{ref} has no description"
                todo += _properties(schema, type_def.get("properties", {}), ref)


def test_input_types_follow_the_config_keys(schema):
    pool = schema["types"]["gpu-aks:index:GpuPool"]["properties"]
    assert (pool["minCount"]["type"], pool["spotMaxPrice"]["type"], pool["keepAzureName"]["type"]) == (
        "integer", "number", "boolean")
    assert pool["nodeLabels"] == {**pool["nodeLabels"], "type": "object", "additionalProperties": {
        **pool["nodeLabels"]["additionalProperties"], "type": "string"}}
    assert pool["osSKU"]["$ref"] == "#/types/gpu-aks:index:OsSKU"
    assert [v["value"] for v in schema["types"]["gpu-aks:index:OsSKU"]["enum"]] == list(OS_SKUS)
    assert [v["value"] for v in schema["types"]["gpu-aks:index:GpuInstanceProfile"]["enum"]] == list(
        GPU_INSTANCE_PROFILES)
    # Every input is plain: it decides which resources exist, so SDKs ask for a known value.
    assert all(prop.get("plain") for prop in schema["resources"][TOKEN]["inputProperties"].values())


def test_outputs_are_the_outputs_contract(schema, dev_run):
    outputs = schema["resources"][TOKEN]["properties"]
    # The program also records three values for its own next run (components/previous_run.py); they are
    # not part of the contract.
    recorded = {NETWORK_OUTPUT, DEPLOYER_OUTPUT, IDENTITY_OUTPUT}
    assert recorded <= set(dev_run.stack_outputs)
    assert list(outputs) == [key for key in dev_run.stack_outputs if key not in recorded]
    gpu_pool = schema["types"]["gpu-aks:index:GpuPoolContract"]["properties"]
    assert set(gpu_pool) == set(next(iter(dev_run.stack_outputs["gpuPools"].values())))
    cpu_pool = schema["types"]["gpu-aks:index:CpuPoolContract"]["properties"]
    assert set(cpu_pool) == set(next(iter(dev_run.stack_outputs["cpuPools"].values())))
    assert outputs["gpuPools"]["additionalProperties"]["$ref"] == "#/types/gpu-aks:index:GpuPoolContract"


def _prefixless(graph: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """The graph with the component's name prefix taken off its children's names, and so off the
    mock IDs made from them (`gc0-aks-cluster-id`, also inside a comma-joined list of IDs); `gc0-` appears
    nowhere else."""
    text = json.dumps(graph).replace(f'"{prefix}', '"').replace(f"::{prefix}", "::").replace(f",{prefix}", ",")
    return sorted(map(_without_assignment_names, json.loads(text)), key=lambda entry: (entry["type"], entry["name"]))


def _without_assignment_names(entry: dict[str, Any]) -> dict[str, Any]:
    """A role assignment's name is a GUID hashed from its scope, the mock cluster ID, which carries the
    component's prefix: it cannot be un-prefixed as text. tests/test_components.py pins the name itself."""
    inputs = entry.get("inputs")
    if isinstance(inputs, dict) and "roleAssignmentName" in inputs:
        entry = {**entry, "inputs": {**inputs, "roleAssignmentName": "<guid of scope, principal, role>"}}
    return entry


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_construct_registers_what_the_program_registers(plugin, stack, dev_run, prod_run):
    run = {"dev": dev_run, "prod": prod_run}[stack]
    response = plugin.construct(stack_args(stack), stack=stack)
    recorded: list[RegisteredResource] = plugin.monitor.recording.registered
    [component] = [r for r in recorded if r.type == TOKEN]
    assert response.urn == component.urn and component.name == "gc0"
    construct_run = mockrun.ProgramRun(recorded, {}, set(), [])
    # Children are named `<component>-<child>` so two GpuClusters fit in one program; otherwise equal.
    assert _prefixless(resource_graph(construct_run, root="gc0"), "gc0-") == \
        _prefixless(resource_graph(run, root="gpu-aks"), "gc0-")
    state = json_format.MessageToDict(response.state)
    # Null outputs (no Prometheus endpoint where observability is off) are absent from Construct's state.
    contract_outputs = {k: v for k, v in run.stack_outputs.items()
                        if k not in (NETWORK_OUTPUT, DEPLOYER_OUTPUT, IDENTITY_OUTPUT) and v is not None}
    # An output the mocks leave unknown (the workspace's query endpoint) is the engine's unknown marker here
    # and absent from the program's stack outputs.
    unknown = {key for key, value in state.items() if value == UNKNOWN_VALUE}
    assert not unknown & set(contract_outputs), "an output the program knows is unknown to Construct"
    state = {key: value for key, value in state.items() if key not in unknown}
    assert mockrun.unwrap_secrets(state, mask=False) == json.loads(json.dumps(contract_outputs))
    assert mockrun.is_secret(state["kubeconfig"])


def _error_details(error: Any) -> list[tuple[str, str]]:
    """The per-property errors of a refused Construct, as the engine reads them: a google.rpc.Status
    in the `grpc-status-details-bin` trailer holding an InputPropertiesError."""
    [raw] = [value for key, value in error.trailing_metadata() if key == "grpc-status-details-bin"]
    status = status_pb2.Status.FromString(raw)
    details = errors_pb2.InputPropertiesError()
    status.details[0].Unpack(details)
    return [(e.property_path, e.reason) for e in details.errors]


def test_construct_refuses_bad_inputs_per_property_with_the_settings_messages(plugin):
    gpu_pool = {"name": "gpunp", "vmSize": "Standard_NC6", "minCount": 1.5, "osSKU": "Windows2019"}
    with pytest.raises(grpc.RpcError) as caught:
        plugin.construct({"location": "eastus2", "gpuPools": [gpu_pool]})
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    expected = [as_input_problem(problem) for problem in expected_problems({"gpuPools": [gpu_pool]}, "eastus2")]
    assert _error_details(caught.value) == expected
    assert ("gpuPools[gpunp].minCount", "1.5 is not a whole number of nodes") in _error_details(caught.value)
    assert plugin.monitor.recording.registered == [], "a refused input registers nothing"


# --- The YAML example and the docs --------------------------------------------------------------------

DOCS = ROOT / "docs" / "component-package.md"


def _platforms(program: dict[str, Any]) -> list[dict[str, Any]]:
    return [resource for resource in program["resources"].values() if resource["type"] in ("gpu-aks:GpuCluster", TOKEN)]


def yaml_programs() -> dict[str, dict[str, Any]]:
    """The example program, and the YAML program in the docs."""
    docs_yaml = DOCS.read_text().split("### YAML", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    return {"examples/yaml-platform": yaml.safe_load(EXAMPLE.read_text()),
            "docs/component-package.md": yaml.safe_load(docs_yaml)}


def unknown_properties(schema: dict[str, Any], properties: dict[str, Any]) -> list[str]:
    """Property paths that are not GpuCluster inputs (nested objects and lists of objects walked)."""
    unknown = []
    todo: list[tuple[str, Any, dict[str, Any]]] = [
        ("", properties, {"properties": schema["resources"][TOKEN]["inputProperties"]})]
    while todo:
        where, value, type_def = todo.pop()
        for key, item in value.items():
            path = f"{where}.{key}" if where else key
            if key not in type_def["properties"]:
                unknown.append(path)
                continue
            prop = type_def["properties"][key]
            ref = prop.get("items", prop).get("$ref", "")
            if ref.startswith("#/types/") and "properties" in _object(schema, ref):
                for index, element in enumerate(item if "items" in prop else [item]):
                    todo.append((f"{path}[{index}]" if "items" in prop else path, element, _object(schema, ref)))
    return unknown


@pytest.mark.parametrize("source", ["examples/yaml-platform", "docs/component-package.md"])
def test_yaml_programs_use_only_schema_properties_and_valid_values(source, schema):
    [platform] = _platforms(yaml_programs()[source])
    assert unknown_properties(schema, platform["properties"]) == []
    settings_from_args(platform["properties"], "example")
    assert unknown_properties(schema, {**platform["properties"], "gpuPool": []}) == ["gpuPool"], "the check can fail"


def test_the_example_names_the_plugin_folder_and_its_readme_pins_a_tag_of_it():
    packages = yaml.safe_load(EXAMPLE.read_text())["packages"]
    assert (EXAMPLE.parent / packages["gpu-aks"]).resolve() == PLUGIN
    readme = (EXAMPLE.parent / "README.md").read_text()
    assert re.search(r"pulumi package add github\.com/<org>/gpu-aks/gpu_aks_plugin@v<version>", readme)
