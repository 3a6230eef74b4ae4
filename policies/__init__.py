"""gpu-aks-policies: the GPU rules, the manifest checker, the scheduling explainer and the Pulumi
policy pack that runs them.

Self-contained: nothing here imports from outside this folder, so the folder is the publishable
policy pack (`PulumiPolicy.yaml`, `__main__.py`) and, installed with pip, the light package
`gpu_aks_policies` (PyYAML only; `pulumi-policy` is the `pack` extra). Inside this repository it is
also importable as `policies` (`python -m policies.check`): every module imports its siblings
relatively, so both names work. Importing it never starts the Analyzer: `__main__.py` does that.
"""

__version__ = "0.2.0"
