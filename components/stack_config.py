"""The thin Pulumi side of the settings layer: read the stack's config, hand it to `parse_settings`.

A `SettingsError` becomes a `pulumi.RunError`, which the engine prints without a traceback: the
message lists every problem, with the values of secret keys masked. It is raised before any
resource is registered. Warnings (a Kubernetes version near its end of support) go to the log.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.settings import PROJECT, SettingsError
from components.settings.common import TODAY_VARIABLE, today

__all__ = ["TODAY_VARIABLE", "read_raw_config", "today"]

def _project_keys() -> list[str]:
    keys = set(pulumi.runtime.config.CONFIG.get()) | set(pulumi.runtime.get_config_env())
    return sorted(key.split(":", 1)[1] for key in keys if key.startswith(PROJECT + ":"))


def read_raw_config() -> tuple[dict[str, Any], set[str]]:
    """The project's keys, decoded, and which of them are secret."""
    config = pulumi.Config(PROJECT)
    raw: dict[str, Any] = {}
    secret_keys = {key for key in _project_keys() if pulumi.runtime.is_config_secret(f"{PROJECT}:{key}")}
    problems = []
    for key in _project_keys():
        try:
            raw[key] = config.get_object(key)
        except Exception:
            problems.append(f"{PROJECT}:{key}: is not valid JSON/YAML structured config")
    if problems:
        raise SettingsError(problems)
    return raw, secret_keys
