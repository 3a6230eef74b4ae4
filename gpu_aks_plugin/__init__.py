"""The gpu-aks component package's plugin: this folder, with its own `PulumiPlugin.yaml` and `__main__.py`."""
