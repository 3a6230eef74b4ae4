"""Offline preview: what `pulumi preview --policy-pack policies` would show, with no cloud and no CLI.

    python -m tools.preview STACK [--json] [--policy-pack-config FILE] [--config-file FILE] [--prices FILE]
                                  [--previous-outputs FILE]

Runs `__main__.py` for the stack (config from `Pulumi.STACK.yaml`; encrypted `secure:` values become
placeholders that stay secret) under the Pulumi SDK's mock runtime, prints the resources it would
create as a tree, then sends every resource to the policy pack over its real gRPC interface
(`Analyze` per resource, `AnalyzeStack` once), prints the violations grouped by policy, and ends with
a summary of what differs between stacks: pools (size, GPU model, counts, Spot) and their taints, the
admission policy's actions and exempt namespaces, the Kubernetes version with its end of AKS support,
the maintenance windows, the capacity the GPU pools need at their maximum, and what every pool costs
(hourly per node, monthly at its floor and ceiling; `components/cost.py`). `--json` prints one
document with the resources, the violations, the stack's outputs (the contract app stacks read;
secret outputs masked), which `gpu_aks_policies.check --platform` takes as it is, and `cost`. Prices
come from the shipped table (`components/prices.json`), or with `--prices FILE` from a Retail Prices
API answer (one page, or a JSON list of pages; its date is the file's).
The program compares each run with the stack's last update (`components/previous_run.py`): the
cluster's network, the deployer, and what this run would replace or delete (`clusterIdentity`,
`components/replacements.py`). Offline there is no last update unless `--previous-outputs FILE`
gives one: the JSON `pulumi stack output --json --show-secrets` prints for the stack. A refused change
ends the preview with exit code 2; the program's warnings (a GPU pool replaced or removed, `protect`
turned off, ...) are listed under "Warnings:" and in the JSON document's `warnings`.
Exit code: 0 no mandatory violation, 1 a mandatory violation, 2 bad input (unknown stack, unreadable
or invalid config, each with its file and line and every config problem listed; a change the program
refuses against `--previous-outputs`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import pulumi
from gpu_aks_policies.catalog import sharing_name
from gpu_aks_policies.declarations import whole_as_int
from gpu_aks_policies.documents import DocumentError, Limits, gc_paused, load_json, read_file, safe_text
from gpu_aks_policies.limits import MAX_RECORD_VALUES, MAX_SHOWN_CHARS
from gpu_aks_policies.pools.model import Offer
from gpu_aks_policies.rule_config import RuleConfigError
from gpu_aks_policies.rules import read_rule_config_file
from gpu_aks_policies.terminal import escape_field, escape_json, escape_line, run_cli

from components.access import DEPLOYER_OUTPUT
from components.aks_api import kubernetes_minor
from components.cluster import NETWORK_OUTPUT
from components.cost import cost_document, cost_lines
from components.platform_settings import PlatformSettings
from components.pools import PlatformPools, platform_pools
from components.pricing import PriceError, PriceTable, read_answer_files, read_price_table, table_from_pages
from components.replacements import IDENTITY_OUTPUT
from components.settings import PROJECT, SettingsError
from components.settings.common import RECORD_SECRET
from offline.analyzer import Diagnostic, PolicyPackProcess, terminated_as_exit, wire_struct
from offline.mockrun import (
    SECRET_SIG,
    SECRET_VALUE_SIG,
    PlatformMocks,
    ProgramRun,
    RegisteredResource,
    own_stack_reference,
    run_program,
)
from tools.preflight import capacity_lines
from tools.stacks import (
    STACK_NAME,
    STACK_NAME_RULE,
    StackFileError,
    config_from_stack_file,
    settings_from_stack_file,
    stacks,
)

ROOT = Path(__file__).resolve().parent.parent

#: The inputs worth a line in the tree: what a reviewer checks before `pulumi up`.
SHOWN_INPUTS = (
    "location", "kubernetesVersion", "agentPoolName", "vmSize", "count", "minCount", "maxCount", "nodeTaints", "nodeLabels",
    "scaleSetPriority", "gpuInstanceProfile", "gpuProfile", "agentPoolProfiles", "vnetSubnetID", "podSubnetID",
    "osDiskType", "osDiskSizeGB", "maxPods", "outboundType",
)


class PreviewInputError(Exception):
    """Bad input: exit code 2."""


def run_stack_program(stack: str, root: Path = ROOT, stack_file: Path | None = None,
                      previous_outputs: Mapping[str, Any] | None = None) -> ProgramRun:
    """Run the program for `stack`; `previous_outputs`: the stack's outputs after its last update
    (`--previous-outputs`), which the program's checks against the last update read back."""
    if stack_file is not None and not stack_file.is_file():
        raise PreviewInputError(f"--config-file {escape_line(str(stack_file))}: "
                                f"{'not a regular file' if stack_file.exists() else 'no such file'}")
    stack_file = stack_file or root / f"Pulumi.{stack}.yaml"
    if not stack_file.is_file():
        raise PreviewInputError(f"unknown stack {stack!r}: there is no {escape_line(stack_file.name)}; stacks here: "
                                f"{', '.join(stacks(root)) or 'none'}")
    try:
        config, secret_keys = config_from_stack_file(stack_file, PROJECT)
    except StackFileError as error:
        raise PreviewInputError(f"{stack_file}:{error.line}: cannot use this stack file: "
                                f"{str(error).split(': ', 1)[-1]}") from None
    mocks = None
    if previous_outputs:
        # A value the file marks secret (Pulumi's wire form, `load_previous_outputs`) is read back as a
        # secret output, so the program's messages mask it as they do after a real update. So is a
        # record that does not say it was plain (`secret: false`): `pulumi stack output --json
        # --show-secrets` prints secrets as plain JSON, so its values may have been secret.
        values, secret = {}, ["kubeconfig"]
        # Only the records the program reads back (`RECORDED_OUTPUTS`): the SDK turns every value of a
        # StackReference's outputs into futures and Outputs as it deserializes them, about 23 kB and
        # 1 ms per JSON node here, so a legal 1 MB `gpuPools` contract of 90,000 nodes took gigabytes.
        for name, value in previous_outputs.items():
            if name not in RECORDED_OUTPUTS:
                continue
            unwrapped = _secret_value(value)
            values[name] = unwrapped[0] if unwrapped else value
            if unwrapped or (name in MASKED_RECORDS and _maybe_secret(value)):
                secret.append(name)
        mocks = PlatformMocks(stack_references={own_stack_reference(stack): values}, secret_outputs=tuple(secret))
    run = run_program(root, stack, config, secret_keys, mocks=mocks)
    if isinstance(run.error, pulumi.RunError):
        # The program's message names each key (the stack file's reading adds the line it is on); what
        # it warned about before it stopped belongs to the same answer (as `pulumi preview` shows its
        # diagnostics): every problem at once.
        raise PreviewInputError(str(_located(stack_file, stack) or run.error)
                                + "".join(f"\nwarning: {warning}" for warning in run.warnings))
    if run.error is not None:
        raise PreviewInputError(f"the program failed: {type(run.error).__name__}: {run.error}")
    return run


def _located(stack_file: Path, stack: str) -> SettingsError | None:
    """The stack's settings problems, each with its file and line (`stacks.located_problems`)."""
    try:
        settings_from_stack_file(stack_file, stack)
    except SettingsError as error:
        return error
    except (StackFileError, OSError):
        pass
    return None


def analyze(run: ProgramRun, pack_config: dict[str, Any] | None,
            started: PolicyPackProcess | None = None) -> list[Diagnostic]:
    """Every resource through the pack (`started`: a pack process started earlier, which this ends)."""
    with started or PolicyPackProcess() as pack:
        if pack_config:
            pack.configure({name: section if isinstance(section, dict) else {"enforcementLevel": section}
                            for name, section in pack_config.items()})
        diagnostics = []
        for resource in run.resources:
            for diagnostic in pack.analyze(resource.type, resource.name, wire_struct(resource.wire_inputs), resource.urn):
                diagnostics.append(diagnostic if diagnostic.urn else Diagnostic(
                    diagnostic.policy, diagnostic.level, resource.urn, diagnostic.message))
        diagnostics += pack.analyze_stack(
            [(r.urn, r.type, r.name, wire_struct(r.outputs)) for r in run.resources if r.custom])
    return diagnostics


#: Inputs that are machinery, not configuration (a dynamic resource's serialized provider).
HIDDEN_INPUTS = ("__provider",)


def displayed_inputs(resource: RegisteredResource) -> dict[str, Any]:
    return {k: v for k, v in resource.masked_inputs.items() if k not in HIDDEN_INPUTS}


def masked_outputs(run: ProgramRun) -> dict[str, Any]:
    """The stack's outputs as `pulumi stack output --json` shows them: secrets as "[secret]"."""
    return {key: "[secret]" if key in run.secret_outputs else value for key, value in run.stack_outputs.items()}


def _shown(resource: RegisteredResource) -> dict[str, Any]:
    inputs = displayed_inputs(resource)
    shown = {key: inputs[key] for key in SHOWN_INPUTS if key in inputs}
    if resource.type.startswith("kubernetes:"):
        metadata = inputs.get("metadata") or {}
        if "namespace" in metadata:
            shown["namespace"] = metadata["namespace"]
        pod = ((inputs.get("spec") or {}).get("template") or {}).get("spec") or {}
        images = [c.get("image") for c in pod.get("containers") or [] if isinstance(c, dict)]
        if images:
            shown["images"] = images
        if pod.get("tolerations"):
            shown["tolerations"] = pod["tolerations"]
    if resource.type == "pulumi:providers:kubernetes" and "kubeconfig" in inputs:
        shown["kubeconfig"] = inputs["kubeconfig"]
    return shown


def _whole_numbers(value: Any) -> Any:
    """Numbers cross the wire as floats; show `2`, not `2.0`, as `pulumi preview` does."""
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    return whole_as_int(value)


def _compact(value: Any) -> str:
    return json.dumps(_whole_numbers(value), separators=(", ", ": "))


def render_tree(stack: str, run: ProgramRun) -> list[str]:
    children: dict[str, list[RegisteredResource]] = defaultdict(list)
    urns = {r.urn for r in run.resources}
    for resource in run.resources:
        children[resource.parent if resource.parent in urns else ""].append(resource)
    lines = [f"Previewing {PROJECT}/{stack} offline (Pulumi mock runtime; nothing is sent to Azure)", "",
             f"     Type{' ' * 52}Name", f" +   pulumi:pulumi:Stack{' ' * 34}{PROJECT}-{stack}"]

    def walk(parent: str, depth: int) -> None:
        for resource in sorted(children[parent], key=lambda r: (r.type, r.name)):
            indent = "  " * depth
            lines.append(f" +   {indent}├─ {resource.type:<{52 - 2 * depth}} {resource.name}")
            for key, value in _shown(resource).items():
                lines.append(f"     {indent}│    {key}: {_compact(value)}")
            walk(resource.urn, depth + 1)

    walk("", 1)
    lines.append("")
    lines.append(f"Resources:\n    + {len(run.resources) + 1} to create")
    return lines


def render_violations(diagnostics: list[Diagnostic]) -> list[str]:
    if not diagnostics:
        return ["", "Policies:", "    ✅ gpu-aks-policies: no violations"]
    by_policy: dict[str, list[Diagnostic]] = defaultdict(list)
    for diagnostic in diagnostics:
        by_policy[diagnostic.policy].append(diagnostic)
    lines = ["", "Policy Violations:"]
    for policy, items in sorted(by_policy.items()):
        for item in items:
            lines.append(f"    [{item.level}]  {policy}  ({item.urn.rsplit('::', 1)[-1] or 'stack'})")
            lines.extend(f"    {line}" for line in item.message.splitlines())
    return lines


# --- The summary: what differs between stacks, read from what the program registered ---------------

#: Resource types the summary reads (pulumi-azure-native 3.29 and pulumi-kubernetes 4 type tokens).
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
MAINTENANCE_CONFIGURATION = "azure-native:containerservice:MaintenanceConfiguration"
ADMISSION_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
def _offers_text(offers: Iterable[Offer]) -> str:
    """What a pool's GPU offers give, each GPU once: a NodePool of several sizes of one GPU reads "H100 NVL,
    1 or 2 nvidia.com/gpu per node", not a clause per size (the sizes are listed before it)."""
    counts: dict[tuple[str | None, str | None, str | None], list[int]] = {}
    for offer in offers:
        counts.setdefault((offer.gpu_model, offer.resource, offer.mig_partition), []).append(offer.per_node)
    return "; ".join(f"{model}, {' or '.join(map(str, sorted(set(per_node))))} {resource} per node"
                     + (f" (MIG {partition})" if partition else "")
                     for (model, resource, partition), per_node in counts.items())


def _pool_lines(pools: PlatformPools) -> list[str]:
    """One line per pool, from its facts (what every kind answers): sizes, GPUs, counts, Spot, taints."""
    lines = []
    for pool in pools.pools:
        what = _offers_text(pool.gpu_offers) or (
            "system (CPU)" if pool.role == "system" else "CPU")
        if pool.sharing is not None:
            what += f" ({pool.sharing.replicas} shares per GPU, {sharing_name(pool.sharing.strategy)})"
        counts = f"{pool.min_count}-{pool.max_count} nodes" if pool.min_count != pool.max_count else f"{pool.min_count} nodes"
        capacity = {kind for offer in pool.offers for kind in offer.capacity_types}
        spot = (", Spot first, on-demand when Spot has none" if capacity == {"spot", "onDemand"} else
                ", Spot" if pool.spot else "")
        lines.append(f"    {pool.name}: {', '.join(pool.vm_sizes)}, {what}, {counts}{spot}; "
                     f"taints: {', '.join(pool.taints) or 'none'}")
    return lines


def _network_lines(run: ProgramRun, pools: PlatformPools) -> list[str]:
    """Egress, API server and identity, and which subnet each pool's nodes join (docs/network.md; the
    pools from their facts, whatever their kind)."""
    lines = []
    for cluster in run.by_type(MANAGED_CLUSTER):
        inputs = cluster.masked_inputs
        network, api = inputs.get("networkProfile") or {}, inputs.get("apiServerAccessProfile") or {}
        mode = f" {network['networkPluginMode']}" if network.get("networkPluginMode") else ""
        private = (f"private (DNS zone {str(api.get('privateDNSZone', 'system')).rsplit('/', 1)[-1]})"
                   if api.get("enablePrivateCluster") else "public")
        identity = (inputs.get("identity") or {}).get("type", "SystemAssigned")
        lines.append(f"  Network: {network.get('networkPlugin')}{mode}, outbound {network.get('outboundType')}; API "
                     f"server {private}; control-plane identity {identity}")
        placed = [f"{pool.name} -> {pool.node_subnet.rsplit('/', 1)[-1]}" for pool in pools.pools if pool.node_subnet]
        lines.append(f"    nodes in your subnets: {', '.join(placed)}" if placed else
                     "    nodes in the VNet AKS manages")
    return lines


def _admission_lines(run: ProgramRun) -> list[str]:
    bindings = run.by_type(ADMISSION_BINDING)
    if not bindings:
        return ["  Admission policy: off (no ValidatingAdmissionPolicyBinding)"]
    lines = []
    for binding in bindings:
        spec = binding.masked_inputs.get("spec") or {}
        actions = ", ".join(spec.get("validationActions") or [])
        selector = (spec.get("matchResources") or {}).get("namespaceSelector") or {}
        exempt = [value for expression in selector.get("matchExpressions") or [] if expression.get("operator") == "NotIn"
                  for value in expression.get("values") or []]
        lines.append(f"  Admission policy {spec.get('policyName')}: {actions}; exempt namespaces: {', '.join(exempt) or 'none'}")
    return lines


def _kubernetes_lines(run: ProgramRun) -> list[str]:
    version = str(run.stack_outputs.get("kubernetesVersion") or "")
    lines = []
    for cluster in run.by_type(MANAGED_CLUSTER):
        version = str(cluster.masked_inputs.get("kubernetesVersion") or version)
        upgrade = cluster.masked_inputs.get("autoUpgradeProfile") or {}
        minor = kubernetes_minor(version)
        support = (f"end of AKS support {minor.end_of_support:%Y-%m} (the AKS release calendar)" if minor
                   else "not in the AKS calendar this version knows")
        lines.append(f"  Kubernetes {version}: {support}; upgrade channel {upgrade.get('upgradeChannel', 'none')}, "
                     f"node OS channel {upgrade.get('nodeOSUpgradeChannel', 'unset')}")
    return lines


def _maintenance_lines(run: ProgramRun) -> list[str]:
    """The planned-maintenance windows the stack declares (AKS's `aksManagedAutoUpgradeSchedule` and
    `aksManagedNodeOSUpgradeSchedule` MaintenanceConfigurations), read from the registered resources so
    the summary needs no knowledge of the settings that produce them."""
    lines = []
    for resource in run.by_type(MAINTENANCE_CONFIGURATION):
        inputs = resource.masked_inputs
        window = inputs.get("maintenanceWindow") or {}
        schedule = window.get("schedule") or {}
        when = "; ".join(f"{kind} {_compact(value)}" for kind, value in schedule.items()) or "no schedule"
        lines.append(f"    {inputs.get('configName') or resource.name}: {when}, from {window.get('startTime', '?')} "
                     f"{window.get('utcOffset', '+00:00')} for {_whole_numbers(window.get('durationHours', '?'))} h")
    return ["  Maintenance windows:", *lines] if lines else [
        "  Maintenance windows: none declared (AKS may upgrade at any time within its channel)"]


def _stack_settings(stack: str, stack_file: Path | None) -> PlatformSettings | None:
    try:
        return settings_from_stack_file(stack_file or ROOT / f"Pulumi.{stack}.yaml", stack)
    except (StackFileError, SettingsError, OSError):
        return None  # the program's run has already reported it


def render_summary(stack: str, run: ProgramRun, stack_file: Path | None = None,
                   cost: dict[str, Any] | None = None) -> list[str]:
    """What differs between stacks, after the tree and the violations (`stack_file`: `--config-file`).
    The pools and their capacity come from the pools' facts (`components/pools/`): what each pool asks
    of Azure's quota is the preflight's computation, nodes at maxCount plus the upgrade surge."""
    settings = _stack_settings(stack, stack_file)
    pools = platform_pools(settings) if settings is not None else PlatformPools(())
    capacity = ["  Capacity (preflight, before `pulumi up`):",
                *(f"    {line}" for line in capacity_lines(settings, stack_file))] if settings is not None else []
    return ["", f"Summary of {PROJECT}/{stack}:", *_kubernetes_lines(run), "  Pools:", *_pool_lines(pools),
            *_network_lines(run, pools), *_admission_lines(run), *_maintenance_lines(run), *capacity,
            *(cost_lines(cost) if cost is not None else [])]


def load_prices(path: Path | None) -> PriceTable:
    """The shipped price table, or a Retail Prices API answer (`--prices`), dated by the file."""
    try:
        if path is None:
            return read_price_table()
        pages = read_answer_files([path])
        saved = datetime.fromtimestamp(path.stat().st_mtime, UTC).date()
        return table_from_pages(pages, saved, f"Azure Retail Prices API answer {path.name}")
    except (PriceError, OSError) as error:
        raise PreviewInputError(f"--prices: {error}" if path is not None else str(error)) from None


def stack_cost(stack: str, table: PriceTable, root: Path = ROOT, stack_file: Path | None = None) -> dict[str, Any]:
    """The top-level `cost` of the preview: every pool of the stack, priced in its region."""
    try:
        settings = settings_from_stack_file(stack_file or root / f"Pulumi.{stack}.yaml", stack)
    except (StackFileError, SettingsError) as error:
        raise PreviewInputError(str(error)) from None
    return cost_document(platform_pools(settings).pools, table, settings.cluster.location, settings.cluster.sku_tier,
                         settings.cluster.node_provisioning_profile.unbounded_nodepools)


def to_json(stack: str, run: ProgramRun, diagnostics: list[Diagnostic], cost: dict[str, Any] | None = None) -> str:
    document = {
        "stack": stack,
        "resources": [{"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent, "inputs": displayed_inputs(r)}
                      for r in run.resources],
        "violations": [{"policy": d.policy, "level": d.level, "urn": d.urn, "message": d.message} for d in diagnostics],
        "outputs": masked_outputs(run),
        "warnings": list(run.warnings),
    }
    if cost is not None:
        document["cost"] = cost
    # Tags, names and messages are input: a `##[` in any of them would be a workflow command in a CI log.
    return escape_json(json.dumps(document, indent=2))


def in_print_order(run: ProgramRun, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Sorts the run's resources by URN and returns the diagnostics sorted by policy, URN and message:
    every renderer then prints the same text for the same program, run after run."""
    run.resources.sort(key=lambda resource: resource.urn)
    return sorted(diagnostics, key=lambda d: (d.policy, d.urn, d.level, d.message))


#: The outputs the program reads back from its last update (components/previous_run.py).
RECORDED_OUTPUTS = (IDENTITY_OUTPUT, NETWORK_OUTPUT, DEPLOYER_OUTPUT)
#: `pulumi stack output --json` of one stack is small (the kubeconfig is its largest value).
PREVIOUS_OUTPUTS_LIMITS = Limits(max_bytes=4 * 1024 * 1024, max_depth=64, max_nodes=200_000)


def _values_in(value: Any, most: int) -> int:
    """How many JSON values `value` holds, itself included, counted up to `most` + 1."""
    count, pending = 0, [value]
    while pending and count <= most:
        item = pending.pop()
        count += 1
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return count


#: Pulumi's wire format marks secrets, assets, archives, resources and outputs with an object holding
#: this key, which the SDK then decodes as such; in a file only a top-level secret is taken, and anything
#: else was a hang or a crash of the program. The markers' public names (pulumi_policy's, through mockrun).
SPECIAL_SIGNATURE_KEY = SECRET_SIG
SECRET_SIGNATURE = SECRET_VALUE_SIG
#: What `pulumi stack output --json` prints for a secret without `--show-secrets`.
MASKED_SECRET = "[secret]"


#: The recorded outputs whose values the program's messages quote, each saying whether it was secret
#: (`RECORD_SECRET`); the deployer's object ID is never secret.
MASKED_RECORDS = (IDENTITY_OUTPUT, NETWORK_OUTPUT)


def _maybe_secret(record: Any) -> bool:
    """A record from a file that does not say it was exported plain (an older gpu-aks wrote no
    `secret` field): the file cannot tell, so its values stay masked."""
    return not (isinstance(record, dict) and record.get(RECORD_SECRET) is False)


def _secret_value(value: Any) -> tuple[Any] | None:
    """(the value,) of a secret in Pulumi's wire form, else None."""
    if isinstance(value, dict) and value.get(SPECIAL_SIGNATURE_KEY) == SECRET_SIGNATURE and set(value) == {
            SPECIAL_SIGNATURE_KEY, "value"}:
        return (value["value"],)
    return None


def _signature_at(outputs: dict[str, Any]) -> str | None:
    """The path of the first Pulumi wire signature other than a top-level secret's, if any."""
    pending: list[tuple[Any, str]] = []
    for name, value in outputs.items():
        unwrapped = _secret_value(value)
        pending.append((unwrapped[0] if unwrapped else value, name))
    while pending:  # iterative: the document is bounded by PREVIOUS_OUTPUTS_LIMITS, its depth is not ours
        value, where = pending.pop()
        if isinstance(value, dict):
            if SPECIAL_SIGNATURE_KEY in value:
                return where
            pending.extend((child, f"{where}.{key}") for key, child in value.items())
        elif isinstance(value, list):
            pending.extend((child, f"{where}[{index}]") for index, child in enumerate(value))
    return None


def load_previous_outputs(path: Path | None) -> dict[str, Any] | None:
    """`--previous-outputs`: a JSON object of the stack's outputs, as `pulumi stack output --json` prints it."""
    if path is None:
        return None
    try:
        outputs = load_json(read_file(str(path), PREVIOUS_OUTPUTS_LIMITS), PREVIOUS_OUTPUTS_LIMITS)
    except DocumentError as error:
        raise PreviewInputError(f"--previous-outputs: {error.at(str(path))}") from None
    except OSError as error:
        raise PreviewInputError(f"--previous-outputs: cannot read {path}: {error.strerror or error}") from None
    if not isinstance(outputs, dict):
        raise PreviewInputError(f"--previous-outputs: {path} holds a JSON {type(outputs).__name__}; it must be the "
                                "object `pulumi stack output --json` prints")
    signature = _signature_at(outputs)
    if signature is not None:
        raise PreviewInputError(f"--previous-outputs: {path}: {escape_field(signature, 200)} holds Pulumi's internal wire "
                                "form (an asset, archive, resource or nested secret), which `pulumi stack output --json` "
                                "never prints; give its output")
    large = [name for name in RECORDED_OUTPUTS if _values_in(outputs.get(name), MAX_RECORD_VALUES) > MAX_RECORD_VALUES]
    if large:
        raise PreviewInputError(f"--previous-outputs: {path}: {', '.join(large)} holds more than {MAX_RECORD_VALUES} "
                                "values, more than any record gpu-aks writes; give this stack's own "
                                "`pulumi stack output --json --show-secrets`")
    masked = [name for name in RECORDED_OUTPUTS if outputs.get(name) == MASKED_SECRET]
    if masked:
        # Read as a string, the record would be skipped as garbage: the checks would pass without a word.
        raise PreviewInputError(f"--previous-outputs: {path}: {', '.join(masked)} {'is' if len(masked) == 1 else 'are'} "
                                f"{MASKED_SECRET!r} (`pulumi stack output --json` masks secrets), so this run cannot be "
                                "checked against the last update; give `pulumi stack output --json --show-secrets`")
    return outputs


def render_warnings(run: ProgramRun) -> list[str]:
    """What the program warned about (`pulumi.log.warn`), as `pulumi preview` lists its diagnostics."""
    return ["", "Warnings:", *(f"    warning: {warning}" for warning in run.warnings)] if run.warnings else []


def load_pack_config(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        return read_rule_config_file(path)
    except RuleConfigError as error:
        raise PreviewInputError(str(error)) from None


def main(argv: Iterable[str] | None = None, stdout: TextIO | None = None) -> int:
    # The program's run allocates hundreds of thousands of short-lived objects over a heap of SDK
    # modules and classes that every full collection would walk again: a third of the run's CPU
    # time. Nothing here lives long enough to need the collector (`gc_paused`).
    with gc_paused(), terminated_as_exit():
        return _main(argv, stdout)


def _main(argv: Iterable[str] | None = None, stdout: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.preview", description=__doc__.splitlines()[0])
    parser.add_argument("stack", help="stack name: reads Pulumi.STACK.yaml")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--policy-pack-config", metavar="FILE", help="as `pulumi preview --policy-pack-config`")
    parser.add_argument("--config-file", metavar="FILE", type=Path,
                        help="stack config to use instead of Pulumi.STACK.yaml, as `pulumi preview --config-file`")
    parser.add_argument("--prices", metavar="FILE", type=Path,
                        help="price the pools from this Retail Prices API answer instead of the shipped table")
    parser.add_argument("--previous-outputs", metavar="FILE", type=Path,
                        help="the stack's outputs after its last update (`pulumi stack output --json`): "
                             "checks what this run would replace against them")
    args = parser.parse_args(list(argv) if argv is not None else None)
    out = stdout or sys.stdout
    if not STACK_NAME.fullmatch(args.stack):
        # The name is printed in the tree and the summary and names the stack file: one Pulumi refuses
        # (a line break would forge report lines) is refused before anything runs.
        print(safe_text(f"error: '{escape_field(args.stack, MAX_SHOWN_CHARS)}' is not a stack name: {STACK_NAME_RULE}"),
              file=sys.stderr)
        return 2
    try:
        pack_config = load_pack_config(args.policy_pack_config)
        table = load_prices(args.prices)
        previous_outputs = load_previous_outputs(args.previous_outputs)
    except PreviewInputError as error:
        print(safe_text(f"error: {error}"), file=sys.stderr)
        return 2
    # The pack's interpreter starts while the program runs: half the preview's wall time went to
    # waiting for one, then the other. This function owns it: it ends here whatever happens, a signal
    # included (`main` turns SIGTERM into SystemExit), so no pack outlives the preview.
    pack = PolicyPackProcess().start()
    try:
        return _previewed(args, pack, pack_config, table, previous_outputs, out)
    except PreviewInputError as error:
        print(safe_text(f"error: {error}"), file=sys.stderr)
        return 2
    finally:
        pack.__exit__(None, None, None)


def _previewed(args: argparse.Namespace, pack: PolicyPackProcess, pack_config: dict[str, Any] | None,
               table: PriceTable, previous_outputs: dict[str, Any] | None, out: TextIO) -> int:
    run = run_stack_program(args.stack, stack_file=args.config_file, previous_outputs=previous_outputs)
    cost = stack_cost(args.stack, table, stack_file=args.config_file)
    # The pack sees resources in the order the program registered them, as the engine would; what is
    # printed (PR comments, diffs) must not depend on that order, which the SDK's async runtime varies.
    diagnostics = in_print_order(run, analyze(run, pack_config, pack))
    if args.json:
        print(to_json(args.stack, run, diagnostics, cost), file=out)
        mandatory = [d for d in diagnostics if d.level == "mandatory"]
        if mandatory:
            # The JSON goes to a file or a pipe (`make outputs`); say on stderr why the exit code is 1.
            print(safe_text("\n".join([*render_violations(mandatory)[1:], "",
                                        f"error: {len(mandatory)} mandatory policy violation(s): `pulumi preview` "
                                        "would fail; fix them, or make a rule advisory with "
                                        "--policy-pack-config (docs/enforcement.md)"])), file=sys.stderr)
    else:
        print(safe_text("\n".join(render_tree(args.stack, run) + render_warnings(run) + render_violations(diagnostics)
                                   + render_summary(args.stack, run, args.config_file, cost))), file=out)
    return 1 if any(d.level == "mandatory" for d in diagnostics) else 0


if __name__ == "__main__":
    run_cli(main)
