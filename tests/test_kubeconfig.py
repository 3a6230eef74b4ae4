"""The kubeconfig conversion against kubelogin's own converter: Azure/kubelogin
`pkg/internal/converter/convert_test.go`, the "with exec format kubeconfig, convert from devicecode to
<mode>" cases (input args as AKS returns them; expected args compared as a set, as kubelogin's
`validate` does, and here in order too)."""

from __future__ import annotations

import base64

import pytest
import yaml

from components.kubeconfig import KUBELOGIN_INSTALL_HINT, KubeconfigError, decode_kubeconfig, with_kubelogin_mode
from offline.mockrun import AKS_AAD_SERVER_ID, FAKE_TENANT, fake_aad_kubeconfig

CLIENT_ID = "80faf920-1908-4b52-b5ef-a8e7bedfc67a"


def converted(mode: str, kubeconfig: str | None = None) -> dict:
    config = yaml.safe_load(with_kubelogin_mode(kubeconfig or fake_aad_kubeconfig("c"), mode))
    return config["users"][0]["user"]["exec"]


@pytest.mark.parametrize("mode, expected", [
    # convert_test.go: "convert from devicecode to azurecli" -> get-token, --server-id, --login azurecli.
    # The tenant is dropped on purpose: `az login --identity` refuses one (kubelogin issue #123).
    ("azurecli", ["get-token", "--login", "azurecli", "--server-id", AKS_AAD_SERVER_ID]),
    # "convert from devicecode to spn": environment, server-id, tenant-id, client-id kept.
    ("spn", ["get-token", "--login", "spn", "--server-id", AKS_AAD_SERVER_ID, "--client-id", CLIENT_ID,
             "--tenant-id", FAKE_TENANT, "--environment", "AzurePublicCloud"]),
    # "convert from devicecode to msi": server-id only.
    ("msi", ["get-token", "--login", "msi", "--server-id", AKS_AAD_SERVER_ID]),
    # "convert from devicecode to workloadidentity": server-id only; the identity comes from the environment.
    ("workloadidentity", ["get-token", "--login", "workloadidentity", "--server-id", AKS_AAD_SERVER_ID]),
])
def test_each_mode_matches_kubelogins_converter(mode, expected):
    exec_config = converted(mode)
    assert exec_config["args"] == expected
    assert exec_config["command"] == "kubelogin"
    assert exec_config["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert "devicecode" not in exec_config["args"]


def test_install_hint_is_kubelogins_unless_one_was_there():
    assert converted("azurecli")["installHint"] == KUBELOGIN_INSTALL_HINT
    config = yaml.safe_load(fake_aad_kubeconfig("c"))
    config["users"][0]["user"]["exec"]["installHint"] = "Preserve this install hint"
    assert converted("azurecli", yaml.safe_dump(config))["installHint"] == "Preserve this install hint"


def test_cache_dir_is_kept():
    config = yaml.safe_load(fake_aad_kubeconfig("c"))
    config["users"][0]["user"]["exec"]["args"] += ["--token-cache-dir", "/tmp/cache"]
    assert converted("msi", yaml.safe_dump(config))["args"][-2:] == ["--cache-dir", "/tmp/cache"]


def test_missing_server_id_is_an_error_as_in_kubelogin():
    config = yaml.safe_load(fake_aad_kubeconfig("c"))
    config["users"][0]["user"]["exec"]["args"] = ["get-token", "--login", "devicecode"]
    with pytest.raises(KubeconfigError, match="--server-id"):
        with_kubelogin_mode(yaml.safe_dump(config), "azurecli")


def test_certificate_kubeconfig_is_left_alone():
    local = yaml.safe_dump({"users": [{"name": "admin", "user": {"client-certificate-data": "abc"}}]})
    assert with_kubelogin_mode(local, "azurecli") == local


def test_decoding_refuses_what_is_not_base64_text():
    assert decode_kubeconfig(base64.b64encode(b"apiVersion: v1").decode()) == "apiVersion: v1"
    with pytest.raises(KubeconfigError):
        decode_kubeconfig("not base64!")
