"""Run a Pulumi program for real under the Pulumi SDK's own mock runtime, and record what it registers.

The program is the real `__main__.py`; only the engine is replaced (`pulumi.runtime.set_mocks`), so
no cloud, CLI or credentials are needed. `RecordingMonitor` keeps, for every resource, what the
engine would see: type, name, parent, options (ignore/replace/delete-before-replace, provider) and
its inputs exactly as serialized on the wire (`request.object`: numbers as floats, secrets wrapped,
unknowns as the engine's sentinels), which is what the offline preview forwards to the policy pack.
Shared by `tools.preview`, the tests and the benchmarks.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi.resource
import pulumi.runtime.resource
import yaml
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime.settings import ROOT, SETTINGS
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await
from pulumi_policy.deserialize import SPECIAL_SECRET_SIG, SPECIAL_SIG_KEY
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from components.settings import PROJECT
from offline import azure_answers

#: The engine's wire markers, as the SDK names them (pulumi `sdk/go/common/resource/properties.go`):
#: a secret is `{SECRET_SIG: SECRET_VALUE_SIG, "value": ...}`; an unknown string is UNKNOWN_SENTINEL.
SECRET_SIG = SPECIAL_SIG_KEY
SECRET_VALUE_SIG = SPECIAL_SECRET_SIG
UNKNOWN_SENTINEL = UNKNOWN_STRING_VALUE


@dataclass
class RegisteredResource:
    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    provider: str
    #: Inputs as they cross the wire: a protobuf Struct in JSON form (secrets and unknowns marked).
    wire_inputs: dict[str, Any]
    ignore_changes: list[str]
    replace_on_changes: list[str]
    delete_before_replace: bool
    dependencies: list[str]
    outputs: dict[str, Any] = field(default_factory=dict)

    @property
    def inputs(self) -> dict[str, Any]:
        """Inputs with secrets unwrapped (for assertions); use `masked_inputs` for display."""
        return unwrap_secrets(self.wire_inputs, mask=False)

    @property
    def masked_inputs(self) -> dict[str, Any]:
        return unwrap_secrets(self.wire_inputs, mask=True)


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(SECRET_SIG) == SECRET_VALUE_SIG


def unwrap_secrets(value: Any, mask: bool) -> Any:
    if is_secret(value):
        return "[secret]" if mask else unwrap_secrets(value.get("value"), mask)
    if isinstance(value, dict):
        return {k: unwrap_secrets(v, mask) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap_secrets(v, mask) for v in value]
    return value


class WarningLog(logging.Handler):
    """Where the mock engine's log goes (`pulumi.log.warn` under mocks logs to a `logging.Logger`): the
    warnings are kept for the caller instead of reaching stderr through logging's last resort."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.logger = logging.Logger("gpu-aks.mockrun")  # not registered: every run has its own
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno == logging.WARNING:
            self.messages.append(record.getMessage())


class RecordingMonitor(pulumi_mocks.MockMonitor):
    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.registered: list[RegisteredResource] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - the gRPC method name
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            return response
        self.registered.append(RegisteredResource(
            urn=response.urn, type=request.type, name=request.name, parent=request.parent,
            custom=request.custom, provider=request.provider,
            wire_inputs=json_format.MessageToDict(request.object),
            ignore_changes=list(request.ignoreChanges), replace_on_changes=list(request.replaceOnChanges),
            delete_before_replace=request.deleteBeforeReplace, dependencies=list(request.dependencies),
            outputs=json_format.MessageToDict(response.object),
        ))
        return response



# --- Mocks shaped like Azure and Kubernetes answer -------------------------------------------------

# Azure's computed answers come from one table the engine tier's stand-in shares (offline/azure_answers.py).
FAKE_TENANT = azure_answers.TENANT_ID
FAKE_SUBSCRIPTION = azure_answers.SUBSCRIPTION_ID
FAKE_DEPLOYER_OBJECT_ID = azure_answers.DEPLOYER_OBJECT_ID
#: The principal IDs of a cluster's system-assigned identity and of a user-assigned identity.
FAKE_CLUSTER_PRINCIPAL_ID = azure_answers.CLUSTER_PRINCIPAL_ID
FAKE_IDENTITY_PRINCIPAL_ID = azure_answers.IDENTITY_PRINCIPAL_ID
AKS_AAD_SERVER_ID = azure_answers.AKS_AAD_SERVER_ID


def fake_aad_kubeconfig(cluster_name: str, server: str | None = None) -> str:
    """What `listClusterUserCredential?format=exec` returns for an Azure AD cluster: a kubelogin
    exec config that logs in with devicecode."""
    return yaml.safe_dump(azure_answers.aad_kubeconfig(
        cluster_name, server or f"https://{cluster_name}.hcp.eastus2.azmk8s.io:443"), sort_keys=False)


def own_stack_reference(stack: str, project: str = PROJECT) -> str:
    """The name `components/previous_run.py` reads its own stack by under the mock engine (which reports
    no organization: the DIY backend's `organization`); give `PlatformMocks(stack_references=...)` the
    last update's outputs under it."""
    return f"organization/{project}/{stack}"


class PlatformMocks(pulumi.runtime.Mocks):
    """Answers the way Azure and the Kubernetes provider would, with plausible computed outputs."""

    def __init__(self, extra_calls: Mapping[str, Any] | None = None,
                 stack_references: Mapping[str, Mapping[str, Any]] | None = None,
                 secret_outputs: tuple[str, ...] = ("kubeconfig",)) -> None:
        self.extra_calls = dict(extra_calls or {})
        #: Outputs of other stacks, by stack name, as a `pulumi.StackReference` reads them.
        self.stack_references = dict(stack_references or {})
        self.secret_outputs = secret_outputs
        self.calls: list[pulumi.runtime.MockCallArgs] = []
        #: Each cluster's API server, by cluster name, for the kubeconfig AKS hands out.
        self.cluster_servers: dict[str, str] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        state = dict(args.inputs)
        if args.typ == "pulumi:pulumi:StackReference":
            name = args.inputs.get("name", args.name)
            # A stack not listed has no outputs yet, as Pulumi answers for a stack never deployed
            # (gpu-aks reads its own stack this way: components/previous_run.py).
            outputs = dict(self.stack_references.get(name, {}))
            return name, {"name": name, "outputs": outputs,
                          "secretOutputNames": [key for key in self.secret_outputs if key in outputs]}
        if args.typ == "azure-native:resources:ResourceGroup":
            state["name"] = args.inputs.get("resourceGroupName", args.name)
        elif args.typ == "azure-native:containerservice:ManagedCluster":
            state["name"] = args.inputs.get("resourceName", args.name)
            # Azure computes its answers from the values, secret or not.
            inputs = unwrap_secrets(args.inputs, mask=False)
            name = str(inputs.get("resourceName", args.name))
            state.update(azure_answers.cluster_answers(
                name, str(inputs.get("resourceGroupName", "")), str(inputs.get("location") or "eastus2"),
                inputs.get("dnsPrefix") or inputs.get("fqdnSubdomain"), inputs.get("identity"),
                bool((inputs.get("oidcIssuerProfile") or {}).get("enabled")), inputs.get("nodeResourceGroup")))
            self.cluster_servers[name] = f"https://{state['fqdn']}:443"
        elif args.typ == "azure-native:containerservice:AgentPool":
            state["name"] = args.inputs.get("agentPoolName", args.name)
        elif args.typ.startswith("kubernetes:") and isinstance(state.get("metadata"), dict):
            state["metadata"] = {"name": args.name, **state["metadata"]}
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list]:
        self.calls.append(args)
        if args.token in self.extra_calls:
            return self.extra_calls[args.token](args), []
        if args.token == "azure-native:containerservice:listManagedClusterUserCredentials":
            name = args.args.get("resourceName", "cluster")
            kubeconfig = fake_aad_kubeconfig(name, self.cluster_servers.get(name))
            return {"kubeconfigs": [{"name": "clusterUser",
                                     "value": base64.b64encode(kubeconfig.encode()).decode()}]}, []
        if args.token == "azure-native:authorization:getClientConfig":
            return azure_answers.client_config(), []
        if args.token == "azure-native:managedidentity:getUserAssignedIdentity":
            return azure_answers.user_assigned_identity(str(args.args.get("resourceGroupName")),
                                                        str(args.args.get("resourceName", "identity"))), []
        if args.token == "kubernetes:yaml:decode":
            return {"result": [doc for doc in yaml.safe_load_all(args.args["text"]) if doc]}, []
        return {}, []


# --- Running a program ----------------------------------------------------------------------------


@dataclass
class ProgramRun:
    resources: list[RegisteredResource]
    #: `pulumi.export`ed values, resolved, and which of them are secret.
    stack_outputs: dict[str, Any]
    secret_outputs: set[str]
    calls: list[pulumi.runtime.MockCallArgs]
    error: BaseException | None = None
    #: What the program logged as warnings (`pulumi.log.warn`), in order: the preview shows them.
    warnings: list[str] = field(default_factory=list)

    def by_type(self, type_: str) -> list[RegisteredResource]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: str | None = None) -> RegisteredResource:
        matches = [r for r in self.by_type(type_) if name is None or r.name == name]
        if len(matches) != 1:
            raise AssertionError(f"expected one {type_} {name or ''}, got {[r.name for r in matches]}")
        return matches[0]


@contextmanager
def _program_on_path(program_dir: Path) -> Iterator[None]:
    old_path, old_cwd = list(sys.path), os.getcwd()
    sys.path.insert(0, str(program_dir))
    os.chdir(program_dir)
    try:
        yield
    finally:
        sys.path[:] = old_path
        os.chdir(old_cwd)


@contextmanager
def _alias_urns_left_to_the_engine() -> Iterator[None]:
    """Stops the SDK computing, for every resource, the URN of each of its aliases: work whose result
    nothing reads while the monitor takes alias specs, as the mock monitor and every current engine do.

    `Resource.__init__` collapses each alias to a URN Output up front (pulumi `resource.py`,
    `self._aliases.append(collapse_alias_to_urn(...))`), and only `all_aliases` reads `_aliases`,
    to build a child's inherited aliases for an engine without alias specs
    (`pulumi/runtime/resource.py`, `prepare_aliases`). With specs the engine gets each alias as
    written and resolves it itself. azure-native gives each resource an alias per former API
    version: about 770 aliases in the prod stack, whose URN Outputs and tasks took 0.17 s of the
    0.30 s it takes to register its resources. `_aliases` then keeps the aliases as written, and
    `all_aliases` raises should a monitor without specs ever call it while this is in place
    (tests/test_preview.py holds both: the aliases the monitor receives are the same either way, and
    the SDK reads `_aliases` nowhere else)."""
    collapse, inherit = pulumi.resource.collapse_alias_to_urn, pulumi.runtime.resource.all_aliases

    def as_written(alias: Any, *_defaults: Any) -> Any:
        return alias

    def unreachable(*_args: Any) -> Any:
        raise RuntimeError("alias URNs were left to the engine, but the monitor takes no alias specs")

    pulumi.resource.collapse_alias_to_urn = as_written  # type: ignore[assignment]
    pulumi.runtime.resource.all_aliases = unreachable  # type: ignore[assignment]
    try:
        yield
    finally:
        pulumi.resource.collapse_alias_to_urn = collapse
        pulumi.runtime.resource.all_aliases = inherit


#: Set on every exception of the chain that `run_pulumi` returned in `ProgramRun.error`.
_RETURNED = "_gpu_aks_returned_in_program_run"


def _mark_returned(error: BaseException) -> None:
    seen: list[BaseException] = []
    link: BaseException | None = error
    while link is not None and not any(link is earlier for earlier in seen):  # pulumi's chains can loop
        seen.append(link)
        with suppress(AttributeError, TypeError):
            setattr(link, _RETURNED, True)
        link = link.__cause__ or link.__context__


def _report_returned_errors_once(loop: asyncio.AbstractEventLoop) -> None:
    """A failed run leaves futures that hold its error unread: the SDK resolves each output of the
    failed resource with it, and `wait_for_rpcs` raises at the first failed RPC without awaiting the
    rest (pulumi `runtime/stack.py`, `runtime/resource.py`). When the collector later frees them,
    asyncio reports "Future exception was never retrieved" with the whole traceback (`Future.__del__`),
    at whatever moment a collection happens: a second report of an error `ProgramRun.error` already
    carries, and a traceback in the output of a command. On CPython 3.11 before 3.11.8 formatting
    that traceback calls `ast.parse` for its caret lines, and the AST constructor keeps its depth
    in state the interpreter shares (CPython gh-106905): a collection that starts inside another
    `ast.parse` (the allocations of the tree it builds start one) leaves that outer call raising
    `SystemError: AST constructor recursion depth mismatch`. So the loop's handler drops the
    "never retrieved" report for an error that a run returned, and hands every other report on."""
    previous = loop.get_exception_handler()
    if getattr(previous, _RETURNED, False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if getattr(context.get("exception"), _RETURNED, False) and "never retrieved" in str(context.get("message")):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    setattr(handler, _RETURNED, True)
    loop.set_exception_handler(handler)


def run_pulumi(
    program: Callable[[], Any], stack: str, config: Mapping[str, str] | None = None,
    secret_keys: list[str] | None = None, project: str = "gpu-aks", mocks: PlatformMocks | None = None,
    preview: bool = True,
) -> ProgramRun:
    """Run `program` (any callable that declares resources) under the mock engine; errors are
    returned in `ProgramRun.error`, not raised."""
    mocks = mocks or PlatformMocks()
    monitor = RecordingMonitor(mocks)
    ROOT.set(None)
    pulumi.runtime.set_all_config(dict(config or {}), list(secret_keys or []))
    warnings = WarningLog()
    pulumi_mocks.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=monitor,
                           logger=warnings.logger)
    # What `pulumi.runtime.test` does before each test: outputs and RPCs of an earlier run (a failed
    # one leaves some behind) must not be awaited by this one.
    SETTINGS.rpc_manager.clear()
    SETTINGS.outputs.clear()
    error: BaseException | None = None
    _report_returned_errors_once(_ensure_event_loop())
    try:
        with _alias_urns_left_to_the_engine():
            _sync_await(run_pulumi_func(program))
    except Exception as caught:
        error = caught
        _mark_returned(error)
    outputs: dict[str, Any] = {}
    secrets: set[str] = set()
    root = ROOT.get()
    if error is None and root is not None:
        # The mock runtime finishes the Stack resource before the program runs, so its exports are
        # never sent to the monitor: resolve them from the Stack object itself.
        exports = dict(root.outputs)  # type: ignore[attr-defined]  # the root is always a pulumi Stack
        for name, (value, is_secret_output) in _sync_await(_resolve_exports(exports)).items():
            outputs[name] = value
            if is_secret_output:
                secrets.add(name)
    return ProgramRun(monitor.registered, outputs, secrets, mocks.calls, error, warnings.messages)


def run_program(program_dir: Path, stack: str, config: Mapping[str, str], secret_keys: list[str] | None = None,
                **kwargs: Any) -> ProgramRun:
    """Run `program_dir/__main__.py` as the Pulumi CLI would, with `program_dir` as cwd and on sys.path."""
    with _program_on_path(program_dir):
        return run_pulumi(lambda: runpy.run_path(str(program_dir / "__main__.py"), run_name="__main__"),
                          stack, config, secret_keys, **kwargs)


async def _resolve_exports(exports: dict[str, Any]) -> dict[str, tuple[Any, bool]]:
    resolved = {}
    for name, value in exports.items():
        output = pulumi.Output.from_input(value)
        resolved[name] = (await output.future(), await output.is_secret())
    return resolved
