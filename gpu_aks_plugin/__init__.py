"""The gpu-aks component package's plugin (`PulumiPlugin.yaml` points here)."""
