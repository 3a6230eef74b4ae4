"""`gpu-aks:cluster.securityProfile`: Microsoft Defender, KMS etcd encryption with your key, and Image
Cleaner. Each is off by default; docs/network.md says what each costs. Values are checked against the
REST model of the API version this program sends (`components/aks_api.py`). No Pulumi imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_aks_policies.declarations import Check, Key, Reader, Section, boolean, describe, is_whole_number, text

from components.aks_api import (
    API_VERSION,
    DEFAULT_IMAGE_CLEANER_INTERVAL_HOURS,
    IMAGE_CLEANER_INTERVAL_RANGE,
    KEY_VAULT_KEY_ID_RE,
    KEY_VAULT_NETWORK_ACCESS,
    parse_resource_id,
    resource_id_problem,
)
from components.settings.common import api_choice

_MODEL = f"ManagedCluster (API {API_VERSION}) securityProfile"


@dataclass(frozen=True)
class DefenderSettings:
    enabled: bool = False
    workspace: str | None = None


@dataclass(frozen=True)
class KmsSettings:
    enabled: bool = False
    key_id: str | None = None
    network_access: str = "Public"
    key_vault: str | None = None


@dataclass(frozen=True)
class ImageCleanerSettings:
    enabled: bool = False
    interval_hours: int = DEFAULT_IMAGE_CLEANER_INTERVAL_HOURS


@dataclass(frozen=True)
class SecurityProfileSettings:
    defender: DefenderSettings = DefenderSettings()
    azure_key_vault_kms: KmsSettings = KmsSettings()
    image_cleaner: ImageCleanerSettings = ImageCleanerSettings()

    def as_api(self) -> dict[str, Any]:
        """What `securityProfile` sends beside `workloadIdentity`: only what is turned on."""
        profile: dict[str, Any] = {}
        if self.defender.enabled:
            profile["defender"] = {"log_analytics_workspace_resource_id": self.defender.workspace,
                                   "security_monitoring": {"enabled": True}}
        kms = self.azure_key_vault_kms
        if kms.enabled:
            profile["azure_key_vault_kms"] = {"enabled": True, "key_id": kms.key_id,
                                              "key_vault_network_access": kms.network_access,
                                              **({"key_vault_resource_id": kms.key_vault} if kms.key_vault else {})}
        if self.image_cleaner.enabled:
            profile["image_cleaner"] = {"enabled": True, "interval_hours": self.image_cleaner.interval_hours}
        return profile


def _resource_id(kind: str) -> Any:
    return lambda value: resource_id_problem(kind, value)


def _key_id_problem(value: Any) -> str | None:
    if isinstance(value, str) and KEY_VAULT_KEY_ID_RE.fullmatch(value):
        return None
    return ("is not a Key Vault key identifier with its version, e.g. https://<vault>.vault.azure.net/keys/<key>/"
            "<32 hex characters> (`az keyvault key show --query key.kid`)")


def _defender_needs_workspace(reader: Reader) -> None:
    enabled, workspace = reader.get("securityMonitoring.enabled"), reader.get("logAnalyticsWorkspaceResourceId")
    if enabled and not workspace:
        reader.problem("logAnalyticsWorkspaceResourceId", "is missing; Microsoft Defender needs a Log Analytics "
                                                          "workspace (the REST model: \"When Microsoft Defender is "
                                                          "enabled, this field is required\")")
    elif workspace and not enabled:
        reader.problem("logAnalyticsWorkspaceResourceId", "is set but securityMonitoring.enabled is false; the REST "
                                                          "model: \"When Microsoft Defender is disabled, leave the field "
                                                          "empty\". Turn Defender on or remove the workspace")


def _kms_fields(reader: Reader) -> None:
    enabled, key_id = reader.get("enabled"), reader.get("keyId")
    access, vault = reader.get("keyVaultNetworkAccess"), reader.get("keyVaultResourceId")
    if not enabled:
        for name in ("keyId", "keyVaultResourceId"):
            if reader.get(name):
                reader.problem(name, "is set but enabled is false; the REST model says to leave it empty when KMS is "
                                     "off. Set enabled: true or remove it")
        return
    if not key_id:
        reader.problem("keyId", "is missing; KMS needs your key's identifier with its version (the REST model: "
                                "\"When Azure Key Vault key management service is enabled, this field is required\")")
    if access == "Private" and not vault:
        reader.problem("keyVaultResourceId", "is missing; keyVaultNetworkAccess Private needs the key vault's resource "
                                             "ID (the REST model: \"When keyVaultNetworkAccess is Private, this field "
                                             "is required\")")
    elif access == "Public" and vault:
        reader.problem("keyVaultResourceId", "is set but keyVaultNetworkAccess is Public; the REST model: \"When "
                                             "keyVaultNetworkAccess is Public, leave the field empty\"")
    if key_id and vault:
        key_vault_name = KEY_VAULT_KEY_ID_RE.fullmatch(key_id)
        parsed = parse_resource_id("keyVault", vault)
        if key_vault_name and parsed and key_vault_name.group("vault").lower() != parsed.name.lower():
            reader.problem("keyId", f"is a key of vault {key_vault_name.group('vault')!r}, but keyVaultResourceId names "
                                    f"vault {parsed.name!r}; name the vault that holds the key")
    if access == "Private":
        reader.warn("keyVaultNetworkAccess", "Private: AKS reaches a private key vault only through API Server VNet "
                                             "Integration (learn.microsoft.com/azure/aks/use-kms-etcd-encryption); "
                                             "gpu-aks does not configure it, so enable it on the cluster yourself")


def _interval_needs_cleaner(reader: Reader) -> None:
    if "intervalHours" in reader.raw and reader.raw.get("intervalHours") is not None and not reader.get("enabled"):
        reader.problem("intervalHours", "is set but enabled is false; set enabled: true or remove it")


DEFENDER = Section("defender", "Microsoft Defender for Containers (runtime threat detection), off by default. Billed "
                   "per node vCore by Defender for Cloud, plus Log Analytics ingestion (docs/network.md).", (
    Section("securityMonitoring", "Defender's threat detection.", (
        boolean("enabled", "Turn Defender's security monitoring on.", False,
                source=f"{_MODEL}.defender.securityMonitoring.enabled"),
    )),
    text("logAnalyticsWorkspaceResourceId", "The Log Analytics workspace Defender reports to (its resource ID).", None,
         check=_resource_id("workspace"), source=f"{_MODEL}.defender.logAnalyticsWorkspaceResourceId"),
    Check(_defender_needs_workspace, reads=("securityMonitoring.enabled", "logAnalyticsWorkspaceResourceId"),
          doc="Defender on needs a workspace; a workspace needs Defender on."),
), build=lambda r: DefenderSettings(r.get("securityMonitoring.enabled"), r.get("logAnalyticsWorkspaceResourceId")))

AZURE_KEY_VAULT_KMS = Section("azureKeyVaultKms", "etcd encryption of Kubernetes secrets with your Key Vault key "
                              "(KMS), off by default. Needs identity.type UserAssigned; Key Vault bills per operation "
                              "(docs/network.md).", (
    boolean("enabled", "Encrypt etcd with your key.", False, source=f"{_MODEL}.azureKeyVaultKms.enabled"),
    text("keyId", "The key's identifier, with its version.", None, check=_key_id_problem,
         source=f"{_MODEL}.azureKeyVaultKms.keyId"),
    api_choice("keyVaultNetworkAccess", "`Public` (the vault allows public access) or `Private` (private link only).",
               KEY_VAULT_NETWORK_ACCESS, "Public", source=f"{_MODEL}.azureKeyVaultKms.keyVaultNetworkAccess"),
    text("keyVaultResourceId", "The key vault's resource ID; only with keyVaultNetworkAccess Private.", None,
         check=_resource_id("keyVault"), source=f"{_MODEL}.azureKeyVaultKms.keyVaultResourceId"),
    Check(_kms_fields, reads=("enabled", "keyId", "keyVaultNetworkAccess", "keyVaultResourceId"),
          doc="KMS on needs a versioned key ID; Private needs the vault's resource ID, Public none."),
), build=lambda r: KmsSettings(r.get("enabled"), r.get("keyId"), r.get("keyVaultNetworkAccess"),
                               r.get("keyVaultResourceId")))


def _interval_problem(value: Any) -> str | None:
    low, high = IMAGE_CLEANER_INTERVAL_RANGE
    return None if is_whole_number(value) and low <= value <= high else \
        f"is not allowed; AKS takes whole hours from {low} to {high}"


IMAGE_CLEANER = Section("imageCleaner", "Image Cleaner removes unused images with known vulnerabilities from nodes, off "
                        "by default; no charge beyond the node CPU its pods use.", (
    boolean("enabled", "Run Image Cleaner.", False, source=f"{_MODEL}.imageCleaner.enabled"),
    Key("intervalHours", f"How often it scans, in hours ({describe(IMAGE_CLEANER_INTERVAL_RANGE[0])} to "
        f"{IMAGE_CLEANER_INTERVAL_RANGE[1]}).", "integer", DEFAULT_IMAGE_CLEANER_INTERVAL_HOURS,
        check=_interval_problem, convert=int, source=f"{_MODEL}.imageCleaner.intervalHours"),
    Check(_interval_needs_cleaner, reads=("enabled",), doc="`intervalHours` only with `enabled: true`."),
), build=lambda r: ImageCleanerSettings(r.get("enabled"), r.get("intervalHours")))

SECURITY_PROFILE = Section(
    "securityProfile", "Defender, KMS etcd encryption and Image Cleaner; each off by default (docs/network.md, "
    "\"Security profile\", has what each costs).", (DEFENDER, AZURE_KEY_VAULT_KMS, IMAGE_CLEANER),
    build=lambda r: SecurityProfileSettings(r.children["defender"].build(), r.children["azureKeyVaultKms"].build(),
                                            r.children["imageCleaner"].build()),
    source=f"{_MODEL} (ManagedClusterSecurityProfile)")
