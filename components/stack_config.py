"""The thin Pulumi side of the settings layer: read the stack's config, hand it to `parse_settings`.

A `SettingsError` becomes a `pulumi.RunError`, which the engine prints without a traceback: the
message lists every problem. It is raised before any resource is registered.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.settings import PlatformSettings, SettingsError, parse_settings

PROJECT = "gpu-aks"


def _project_keys() -> list[str]:
    keys = set(pulumi.runtime.config.CONFIG.get()) | set(pulumi.runtime.get_config_env())
    return sorted(key.split(":", 1)[1] for key in keys if key.startswith(PROJECT + ":"))


def read_raw_config() -> dict[str, Any]:
    config = pulumi.Config(PROJECT)
    raw: dict[str, Any] = {"location": pulumi.Config("azure-native").get("location")}
    problems = []
    for key in _project_keys():
        try:
            raw[key] = config.get_object(key)
        except Exception as error:
            problems.append(f"{PROJECT}:{key}: is not valid JSON/YAML structured config ({error})")
    if problems:
        raise SettingsError(problems)
    return raw


def load_settings() -> PlatformSettings:
    try:
        return parse_settings(read_raw_config(), pulumi.get_stack())
    except SettingsError as error:
        raise pulumi.RunError(str(error)) from None
