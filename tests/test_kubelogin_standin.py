"""The cluster tier's kubelogin stand-in (testbed/standins/kubelogin.py) takes exactly what kubelogin's converter
writes for each mode (components/kubeconfig.py, held to kubelogin's convert_test.go by tests/test_kubeconfig.py)
and refuses what kubelogin would not run unattended."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from components.kubeconfig import with_kubelogin_mode
from offline.mockrun import fake_aad_kubeconfig
from testbed.standins import kubelogin

SECRETS = {"spn": {"AZURE_CLIENT_SECRET": "s"},
           "workloadidentity": {"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "AZURE_FEDERATED_TOKEN_FILE": "/f"}}


def converted_args(mode: str) -> list[str]:
    config = yaml.safe_load(with_kubelogin_mode(fake_aad_kubeconfig("c"), mode))
    return config["users"][0]["user"]["exec"]["args"]


@pytest.fixture
def signed_in(tmp_path: Path) -> dict[str, str]:
    identity = tmp_path / "deployer.kubeconfig"
    identity.write_text(json.dumps({"users": [{"name": "deployer", "user": {"token": "tok-deployer"}}]}))
    return {kubelogin.IDENTITY_ENV: str(identity)}


@pytest.mark.parametrize("mode", sorted(kubelogin.FLAGS))
def test_what_the_converter_writes_gets_the_signed_in_identitys_token(mode, signed_in, capsys):
    assert kubelogin.main(converted_args(mode), {**signed_in, **SECRETS.get(mode, {})}) == 0
    credential = json.loads(capsys.readouterr().out)
    assert credential["kind"] == "ExecCredential" and credential["status"]["token"] == "tok-deployer"


def test_the_kubeconfig_aks_hands_out_is_refused_unconverted(signed_in, capsys):
    aks_args = yaml.safe_load(fake_aad_kubeconfig("c"))["users"][0]["user"]["exec"]["args"]
    assert kubelogin.main(aks_args, signed_in) == 1
    assert "--login devicecode" in capsys.readouterr().err


@pytest.mark.parametrize("args, refusal", [
    (["get-token", "--login", "azurecli"], "missing ['--server-id']"),
    (["get-token", "--login", "azurecli", "--server-id", kubelogin.AKS_SERVER_ID, "--tenant-id", "t"],
     "extra ['--tenant-id']"),
    (["get-token", "--login", "msi", "--server-id", "not-aks"], "--server-id not-aks"),
    (["convert-kubeconfig", "-l", "azurecli"], "only `kubelogin get-token`"),
])
def test_anything_else_is_refused_by_name(args, refusal, signed_in, capsys):
    assert kubelogin.main(args, signed_in) == 1
    assert refusal in capsys.readouterr().err


@pytest.mark.parametrize("mode", sorted(SECRETS))
def test_a_mode_without_its_secrets_fails_as_kubelogin_would(mode, signed_in, capsys):
    assert kubelogin.main(converted_args(mode), signed_in) == 1
    assert f"--login {mode} needs" in capsys.readouterr().err


def test_a_client_certificate_identity_is_passed_on(tmp_path, capsys):
    """The local cluster's admin kubeconfig holds a client certificate, not a token."""
    import base64

    admin = tmp_path / "admin.kubeconfig"
    admin.write_text(json.dumps({"users": [{"name": "admin", "user": {
        "client-certificate-data": base64.b64encode(b"CERT").decode(),
        "client-key-data": base64.b64encode(b"KEY").decode()}}]}))
    assert kubelogin.main(converted_args("msi"), {kubelogin.IDENTITY_ENV: str(admin)}) == 0
    status = json.loads(capsys.readouterr().out)["status"]
    assert (status["clientCertificateData"], status["clientKeyData"]) == ("CERT", "KEY") and "token" not in status


def test_nobody_signed_in_is_said(capsys):
    assert kubelogin.main(converted_args("azurecli"), {}) == 1
    assert kubelogin.IDENTITY_ENV in capsys.readouterr().err


def test_an_identity_that_is_no_regular_file_is_refused_naming_the_variable(tmp_path, capsys):
    """GPU_AKS_KUBELOGIN_AS was read whole with `Path.read_text()`: a FIFO hung the credential plugin (and with it
    every kubectl and `pulumi up` of the cluster tier), /dev/zero ate memory (#50). It is read as every path a
    tool is given is (`read_file`: a regular file, bounded), refused before any read."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero", str(tmp_path)):
        assert kubelogin.main(converted_args("azurecli"), {kubelogin.IDENTITY_ENV: path}) == 1
        error = capsys.readouterr().err
        assert error.count(kubelogin.IDENTITY_ENV) == 1 and "not a regular file" in error, error
