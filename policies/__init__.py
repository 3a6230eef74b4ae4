"""The gpu-aks policy pack and the pure GPU rules it runs.

Importing this package must never start the Analyzer server: `policies/__main__.py` does that, and
only the Pulumi CLI (or a test acting like it) runs it. The rule modules have no Pulumi imports.
"""
