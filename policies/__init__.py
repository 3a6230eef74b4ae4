"""gpu-aks-policies: the GPU rules, the manifest checker, the scheduling explainer and the Pulumi
policy pack that runs them.

Self-contained: nothing here imports from outside this folder, so the folder is the publishable
policy pack (`PulumiPolicy.yaml`, `__main__.py`) and, installed with pip, the light package
`gpu_aks_policies` (PyYAML only; `pulumi-policy` is the `pack` extra). Everything imports it under that
one name: the platform program, the pack (which loads its own folder under it), the tools, the tests
(`python -m gpu_aks_policies.check`). Inside this repository `pip install -e .` (requirements.txt) maps
the name to this folder. A second name would load every module twice, with two adapter registries and
two `GpuSku` classes, so importing the folder as `policies` is refused. Importing it never starts the
Analyzer: `__main__.py` does that.
"""

PACKAGE = "gpu_aks_policies"
if __name__ != PACKAGE:
    raise ImportError(f"import this package as {PACKAGE!r}, not {__name__!r} (`pip install -e .` maps the name to "
                      "policies/; python -m gpu_aks_policies.check)")

__version__ = "0.5.0"
