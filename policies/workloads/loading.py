"""Which adapter module serves which API group, as data, so that each module is imported only when an
object it reads is seen.

Importing every adapter module at start-up was a tenth of the checker's start-up, paid again by each
run over a folder of Pods and Deployments, which need only `core`. So `registry.adapter_for` and
`Context.add` call `load_group` with the API group of each object before they look it up: the
first object of a group imports the modules listed for it here, and the rest cost a set lookup.
Documents that are not Kubernetes objects (no `kind`) load the modules listed under `DOCUMENTS`.

A test holds `MODULE_GROUPS` against what each module really registers (`register`,
`register_shape`, `collects`, `register_document`, `collects_documents`), so a module that is not
listed, or that registers a group its line does not name, fails the tests rather than going
unread. No kind is registered by two modules, so the order modules load in changes nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

#: The pseudo-group of documents that are not Kubernetes objects (a compiled Kubeflow pipeline).
DOCUMENTS = "<documents>"

#: Adapter module -> the API groups ("" is the core group) it registers kinds or collectors for.
MODULE_GROUPS: Mapping[str, tuple[str, ...]] = {
    "argo": ("argoproj.io",),
    "bentoml": ("serving.yatai.ai",),
    "core": ("", "apps", "batch"),
    "dra": ("resource.k8s.io",),
    "dynamo": ("nvidia.com",),
    "inert": ("", "karpenter.azure.com", "karpenter.sh", "kueue.x-k8s.io", "resource.k8s.io",
              "scheduling.volcano.sh"),
    "kaito": ("kaito.sh",),
    "kfp": ("pipelines.kubeflow.org", DOCUMENTS),
    "kserve": ("serving.kserve.io",),
    "kubevirt": ("instancetype.kubevirt.io", "kubevirt.io", "pool.kubevirt.io"),
    "nim": ("apps.nvidia.com",),
    "notebooks": ("kubeflow.org",),
    "runai": ("run.ai",),
    "slinky": ("slinky.slurm.net",),
    "spark": ("sparkoperator.k8s.io",),
    "tekton": ("tekton.dev",),
    "trainer": ("trainer.kubeflow.org",),
    "vllm": ("production-stack.vllm.ai",),
}

_MODULES_OF: dict[str, list[str]] = {}
for _module, _groups in sorted(MODULE_GROUPS.items()):
    for _group in _groups:
        _MODULES_OF.setdefault(_group, []).append(_module)

#: Groups whose modules are imported. A group no module serves is added the first time too.
_LOADED: set[str] = set()


def load_group(group: str) -> None:
    """Import the modules that register kinds or collectors of `group` (once; cheap after that).
    Safe from several threads (the pack's): a module another thread is importing is waited for."""
    if group in _LOADED:
        return
    for module in _MODULES_OF.get(group, ()):
        importlib.import_module(f"{__package__}.{module}")
    _LOADED.add(group)


def load_all() -> None:
    """Import every adapter module: for what reads the whole registry (the reference page, tests)."""
    for group in _MODULES_OF:
        load_group(group)
