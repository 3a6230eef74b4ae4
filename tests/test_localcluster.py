"""`python -m tools.localcluster` with input it must refuse: each gets a message naming what is wrong and exit 2,
never a traceback, nothing started, and a folder's name is printed with its control characters escaped.
None of these needs the cluster's programs (the cluster tier, tests/cluster/test_localcluster.py, runs them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testbed.localcluster import STATE_FILE, contract_nodes
from testbed.localcluster.client import InputError
from tools import localcluster

HERE = Path(__file__).resolve().parent
#: A version 3 contract (dev's outputs, as the stack snapshot holds them).
DEV = json.loads((HERE / "fixtures" / "stack_snapshot" / "dev.json").read_text())["stackOutputs"]
#: A version 2 contract (dev's outputs as gpu-aks wrote them at 1203a3a).
DEV_V2 = json.loads((HERE / "fixtures" / "contract" / "exported-at-1203a3a.json").read_text())["dev"]
#: A folder name that would start a new, forged log line and ring the terminal's bell if printed raw.
HOSTILE_NAME = "cp\x1b[2K\x07\n::error::forged"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = localcluster.main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def written(tmp_path: Path, document: Any) -> str:
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize("command", ["up", "down", "nodes"])
def test_a_state_file_up_did_not_write_is_refused_by_name(capsys, tmp_path, command):
    (tmp_path / STATE_FILE).write_text("{not json")
    extra = [written(tmp_path, DEV)] if command == "nodes" else []
    code, _, err = run(capsys, command, str(tmp_path), *extra)
    assert code == 2 and f"{tmp_path / STATE_FILE} is not a state file" in err


@pytest.mark.parametrize("state", [
    {"server": "https://127.0.0.1:1", "processes": [{"name": "etcd", "binary": "/bin/x", "pid": "12"}]},
    {"server": 7, "processes": []},
    {"server": "s", "processes": {"etcd": 1}},
    [],
])
def test_a_damaged_state_file_is_refused_by_name(capsys, tmp_path, state):
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    code, _, err = run(capsys, "down", str(tmp_path))
    assert code == 2 and "is not a state file" in err


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_state_file_that_is_no_regular_file_is_refused_without_blocking(capsys, tmp_path, kind):
    import os

    path = tmp_path / STATE_FILE
    if kind == "fifo":
        os.mkfifo(path)  # no writer: reading it would block forever
    elif kind == "device":
        path.symlink_to("/dev/zero")  # reading it would never end
    else:
        path.mkdir()
    code, _, err = run(capsys, "down", str(tmp_path))
    assert code == 2 and "is not a state file" in err


def test_down_of_a_stale_state_stops_nothing_and_forgets_it(capsys, tmp_path):
    # pid 1 runs init, not the binary the state names: it is never signalled.
    (tmp_path / STATE_FILE).write_text(json.dumps({"server": "https://127.0.0.1:1", "processes": [
        {"name": "etcd", "binary": "/nonexistent/etcd", "pid": 1, "args": []}]}))
    code, out, _ = run(capsys, "down", str(tmp_path))
    assert code == 0 and "stopped 0 process(es)" in out
    assert not (tmp_path / STATE_FILE).exists()


@pytest.mark.parametrize("junk", ["file", "etcd-file", "logs-file"])
def test_up_refuses_a_folder_holding_what_it_cannot_use(capsys, tmp_path, junk):
    directory = tmp_path / "cp"
    if junk == "file":
        directory.write_text("not a folder")
    else:
        directory.mkdir()
        (directory / junk.removesuffix("-file")).write_text("junk")
    code, _, err = run(capsys, "up", str(directory))
    assert code == 2 and str(directory) in err
    assert not (directory / STATE_FILE).exists() if directory.is_dir() else True


def test_nodes_needs_a_running_cluster(capsys, tmp_path):
    code, _, err = run(capsys, "nodes", str(tmp_path), written(tmp_path, DEV))
    assert code == 2 and "no local cluster runs in" in err and "up" in err


@pytest.mark.parametrize("document, expected", [
    ({**DEV, "pools": []}, "pools: expected a map of pool names to pools"),
    ({**DEV, "pools": {}, "gpuPools": {}, "cpuPools": {}}, "no GPU or CPU pool"),
    ({"contractVersion": 3, "gpuPools": {}}, "no GPU or CPU pool"),
    ({**DEV, "pools": {**DEV["pools"], "gput4": {**DEV["pools"]["gput4"], "offers": [{"vmSize": 4}]}}},
     "pools.gput4.offers"),
    ({**DEV, "pools": {**DEV["pools"], "gput4": {**DEV["pools"]["gput4"], "offers": "Standard_NC4as_T4_v3"}}},
     "pools.gput4.offers"),
    ({**DEV, "contractVersion": True}, "contractVersion"),
    ("[1, 2]", "expected"),
])
def test_nodes_refuses_a_document_that_is_no_contract_with_pools_naming_the_key(capsys, tmp_path, document, expected):
    path = tmp_path / "outputs.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    code, _, err = run(capsys, "nodes", str(tmp_path), str(path))
    assert code == 2 and str(path) in err and expected in err, err


def test_nodes_refuses_a_missing_file_and_a_copies_count_out_of_range(capsys, tmp_path):
    code, _, err = run(capsys, "nodes", str(tmp_path), str(tmp_path / "absent.json"))
    assert code == 2 and "absent.json" in err
    code, _, err = run(capsys, "nodes", str(tmp_path), written(tmp_path, DEV), "--copies", "0")
    assert code == 2 and "--copies 0" in err


def test_a_version_2_contract_registers_the_same_nodes_as_version_3(tmp_path):
    def shape(nodes: list[dict[str, Any]]) -> list[tuple[str, dict[str, str], Any]]:
        # Version 2 carries no offers[].allocatable (#48): its nodes report their capacity for CPU, memory and
        # pods, version 3's what the offer says pods get; the GPUs, labels and taints are the same.
        return sorted((n["metadata"]["annotations"]["gpu-aks.io/test-pool"],
                       {k: v for k, v in n["status"]["allocatable"].items() if k not in ("cpu", "memory", "pods")},
                       sorted(t["key"] for t in n["spec"]["taints"])) for n in nodes)

    from_v2 = contract_nodes(written(tmp_path, DEV_V2))
    assert shape(from_v2) == shape(contract_nodes(written(tmp_path, DEV)))
    assert {n["metadata"]["labels"]["gpu-aks.io/pool"] for n in from_v2} == {"cpu", "gput4"}
    t4 = next(n for n in contract_nodes(written(tmp_path, DEV)) if n["metadata"]["labels"]["gpu-aks.io/pool"] == "gput4")
    assert (t4["status"]["capacity"]["cpu"], t4["status"]["allocatable"]["cpu"]) == ("4", "3860m")


def test_a_folder_name_with_control_characters_is_printed_escaped(capsys, tmp_path):
    directory = tmp_path / HOSTILE_NAME
    for args in (["down", str(directory)], ["nodes", str(directory), written(tmp_path, DEV)]):
        _, out, err = run(capsys, *args)
        printed = out + err
        assert "\x1b" not in printed and "\x07" not in printed and "\n::error" not in printed
        assert "\\x1b[2K\\x07\\n::error::forged" in printed
        assert len(printed.strip().splitlines()) == 1


def test_the_help_is_the_whole_documentation(capsys):
    with pytest.raises(SystemExit):
        localcluster.main(["--help"])
    out = capsys.readouterr().out
    for command in ("up DIR", "nodes DIR OUTPUTS.json", "identity DIR USER", "down DIR"):
        assert command in out
    assert "Exit codes" in out and "kube-controller-manager" in out and "kwok" in out


def test_input_errors_are_input_errors():
    with pytest.raises(InputError):
        contract_nodes("/nonexistent/outputs.json")
