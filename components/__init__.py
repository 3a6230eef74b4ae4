"""gpu-aks platform components.

This package must stay importable without Pulumi: the pure modules (``catalog``,
``settings``, ``contract``) are shared with the policy pack and the offline tools.
"""
