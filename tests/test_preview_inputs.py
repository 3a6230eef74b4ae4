"""The offline preview under hostile records and arguments: `--previous-outputs`, what it prints and writes.

The module they pin: `tools/preview.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from components.access import deployer_change_warning
from components.cluster import NETWORK_OUTPUT
from components.replacements import IDENTITY_OUTPUT
from components.settings import PROJECT
from components.settings.common import RECORD_SECRET
from offline.mockrun import run_program
from tests.conftest import ROOT
from tests.inputs import HANG_GUARD_S, HOSTILE_KEY, SECRET_SIGNATURE, SECRET_TEXT, assert_inert, assert_no_injection
from tools.preview import PreviewInputError, run_stack_program
from tools.stacks import config_from_stack_file

SECRET_WIRE = "1b47061264138c4ac30d75fd1eb44270"


#: Pulumi's wire form of an asset, a resource reference and an output (pulumi/runtime/rpc.py).
OTHER_WIRE = ("c44067f5952c0a294b673a41bacd8c17", "5cf8f73096256a8f31e491e813e4eb8e", "d0e6a833031e9bbcd3f4e8bde6ca49a4")


@pytest.fixture(scope="module")
def dev_outputs() -> dict[str, Any]:
    from tools.preview import run_stack_program
    run = run_stack_program("dev")
    assert run.error is None, run.error
    return json.loads(json.dumps(run.stack_outputs))


def _preview(tmp_path: Path, outputs: Any, *options: str) -> tuple[int, str]:
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs))
    result = subprocess.run([sys.executable, "-m", "tools.preview", "dev", "--previous-outputs", str(path), *options],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stdout + result.stderr


OLD_NAME = "s3cret-old-cluster-name"


OLD_CIDR = "10.99.0.0/16"


@pytest.fixture(scope="module")
def secret_export() -> dict[str, Any]:
    """The last update's outputs when `gpu-aks:cluster` was secret, as `pulumi stack output --json
    --show-secrets` prints them: Pulumi's marking gone, every value plain JSON."""
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", PROJECT)
    run = run_program(ROOT, "dev", config, [f"{PROJECT}:cluster"])
    assert run.error is None, run.error
    assert {IDENTITY_OUTPUT, NETWORK_OUTPUT} <= run.secret_outputs
    return json.loads(json.dumps(run.stack_outputs))


def _refusal(previous: dict[str, Any]) -> str:
    """The offline preview of dev (its cluster config not secret now) against `previous`."""
    with pytest.raises(PreviewInputError) as refused:
        run_stack_program("dev", previous_outputs=previous)
    text = str(refused.value)
    assert_inert(text.replace("\n", ""))
    return text


def _moved(outputs: dict[str, Any], record: str, secret: Any = "as recorded") -> dict[str, Any]:
    """`outputs` with the recorded cluster name or service CIDR changed (both are refused) and the
    record's `secret` field as given (absent: written by a gpu-aks before it)."""
    outputs = json.loads(json.dumps(outputs))
    if record == IDENTITY_OUTPUT:
        outputs[record]["cluster"]["resourceName"] = OLD_NAME
    else:
        outputs[record]["serviceCidr"] = OLD_CIDR
    if secret is None:
        del outputs[record][RECORD_SECRET]
    elif secret != "as recorded":
        outputs[record][RECORD_SECRET] = secret
    return outputs


def _dev_outputs() -> dict[str, Any]:
    import json

    from tools.preview import run_stack_program
    return json.loads(json.dumps(run_stack_program("dev").stack_outputs))


@pytest.mark.slow
@pytest.mark.parametrize("signature", OTHER_WIRE)
@pytest.mark.parametrize("where", ["clusterIdentity", "clusterNetwork.podCidr"])
def test_a_pulumi_wire_object_in_previous_outputs_is_bad_input(tmp_path, dev_outputs, signature, where):
    # An asset's signature under clusterIdentity hung the preview (the SDK decoded it in the mock run).
    outputs = json.loads(json.dumps(dev_outputs))
    wire = {SECRET_SIGNATURE: signature, "hash": 5, "urn": HOSTILE_KEY, "value": 1}
    if "." in where:
        outputs["clusterNetwork"]["podCidr"] = wire
    else:
        outputs[where] = wire
    code, text = _preview(tmp_path, outputs)
    assert code == 2 and f"{where} holds Pulumi's internal wire form" in text, text[-500:]
    assert_no_injection(text.replace("\n", ""))  # a multi-line answer: its own newlines only


@pytest.mark.slow
@pytest.mark.parametrize("name", ["clusterIdentity", "clusterNetwork", "deployerObjectId"])
def test_a_masked_record_is_refused_not_skipped(tmp_path, dev_outputs, name):
    # `pulumi stack output --json` prints "[secret]": read as garbage, every check passed without a word.
    code, text = _preview(tmp_path, {**dev_outputs, name: "[secret]"})
    assert code == 2 and f"{name} is '[secret]'" in text and "--show-secrets" in text


@pytest.mark.slow
def test_a_record_the_file_marks_secret_is_never_printed(tmp_path, dev_outputs):
    identity = json.loads(json.dumps(dev_outputs["clusterIdentity"]))
    identity["cluster"]["resourceName"] = SECRET_TEXT
    network = {**dev_outputs["clusterNetwork"], "networkPlugin": SECRET_TEXT + "-net"}
    for name, value in (("clusterIdentity", identity), ("clusterNetwork", network)):
        code, text = _preview(tmp_path, {**dev_outputs, name: {SECRET_SIGNATURE: SECRET_WIRE, "value": value}})
        assert code == 2 and SECRET_TEXT not in text and "[secret]" in text, text[-500:]


@pytest.mark.parametrize("recorded", [{"a": 1}, ["x"], 5, True, HOSTILE_KEY, "##[error]" + "f" * 10_000])
def test_a_recorded_deployer_of_any_shape_never_crashes_the_program(recorded):
    # A dict crashed the program (`'dict' object has no attribute 'lower'`); a string was printed raw.
    warning = deployer_change_warning(recorded, "22222222-2222-2222-2222-222222222222")
    if isinstance(recorded, str):
        assert warning is not None and len(warning) < 800
        assert_no_injection(warning)
    else:
        assert warning is None


def test_the_program_reads_a_recorded_deployer_of_the_wrong_type_as_no_record(dev_outputs):
    from tests.test_replacements import _dev_after
    run = _dev_after({**dev_outputs, "deployerObjectId": {"a": HOSTILE_KEY}})
    assert run.error is None, run.error


@pytest.mark.slow
@pytest.mark.parametrize("record", [IDENTITY_OUTPUT, NETWORK_OUTPUT])
@pytest.mark.parametrize("secret", ["as recorded", None, "yes", 1])
def test_a_record_that_was_secret_stays_masked_after_a_show_secrets_export(secret_export, record, secret):
    # The export holds the values in plain text; the preview printed them whenever the stack's cluster
    # config was no longer secret, though `pulumi preview` itself masks them (the engine knows they were).
    text = _refusal(_moved(secret_export, record, secret))
    assert OLD_NAME not in text and OLD_CIDR not in text and "[secret]" in text, text[-400:]


@pytest.mark.slow
@pytest.mark.parametrize("record", [IDENTITY_OUTPUT, NETWORK_OUTPUT])
def test_a_record_that_says_it_was_plain_is_quoted(secret_export, record):
    # What an export may show: the values of a record the program wrote as plain (`secret: false`).
    text = _refusal(_moved(secret_export, record, False))
    assert OLD_NAME in text or OLD_CIDR in text, text[-400:]


def test_only_the_records_the_program_reads_reach_the_sdk(tmp_path, monkeypatch):
    # Every output went into the StackReference the program reads its records from: the SDK turned each
    # JSON value into futures (about 23 kB each), so a legal 1 MB gpuPools contract took gigabytes.
    import json

    from tools import preview
    outputs = _dev_outputs()
    outputs["gpuPools"]["gput4"]["extra"] = [{"k": index} for index in range(20_000)]
    path = tmp_path / "previous.json"
    path.write_text(json.dumps(outputs))
    handed: list[dict[str, Any]] = []
    real = preview.PlatformMocks

    def recording(*args: Any, **kwargs: Any) -> Any:
        handed.extend(kwargs.get("stack_references", {}).values())
        return real(*args, **kwargs)

    monkeypatch.setattr(preview, "PlatformMocks", recording)
    preview.run_stack_program("dev", previous_outputs=preview.load_previous_outputs(path))
    [values] = handed
    assert set(values) == set(preview.RECORDED_OUTPUTS)
    assert len(json.dumps(values)) < 4_000


def test_a_record_with_more_values_than_gpu_aks_writes_is_refused(tmp_path):
    import json

    from tools import preview
    outputs = _dev_outputs()
    outputs["clusterIdentity"]["gpuPools"]["gput4"]["extra"] = list(range(preview.MAX_RECORD_VALUES))
    path = tmp_path / "previous.json"
    path.write_text(json.dumps(outputs))
    with pytest.raises(preview.PreviewInputError) as refused:
        preview.load_previous_outputs(path)
    assert "clusterIdentity holds more than 20000 values" in str(refused.value)
    # A hundred pools' record is read.
    outputs = _dev_outputs()
    pools = outputs["clusterIdentity"]["gpuPools"]
    pools.update({f"g{index}": {**pools["gput4"], "key": f"gpuPools[g{index}]"} for index in range(100)})
    path.write_text(json.dumps(outputs))
    assert preview.load_previous_outputs(path) is not None


@pytest.mark.slow  # runs the preview's reading of a 4 MB record under tracemalloc: hostile input at scale
def test_the_preview_s_memory_does_not_grow_with_outputs_it_does_not_read(tmp_path):
    # Bytes, not time: tracemalloc's peak with 20,000 unread values against none.
    import json

    from tools import preview
    outputs = _dev_outputs()
    peaks = []
    for extra in (0, 20_000):
        outputs["gpuPools"]["gput4"]["extra"] = list(range(extra))
        previous = json.loads(json.dumps(outputs))
        tracemalloc.start(1)
        try:
            preview.run_stack_program("dev", previous_outputs=previous)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < peaks[0] * 1.5, peaks


@pytest.mark.slow
@pytest.mark.parametrize("command, expected", [
    (["tools.preview", "prod", "--config-file", "{tmp}"], "error: --config-file {tmp}: not a regular file"),
    (["tools.preview", "x\n::error::y\x1b[2J"], "error: 'x\\n::error::y\\x1b[2J' is not a stack name"),
    (["tools.observability", "--out", "{tmp}/file", "prod"], "error: cannot write {tmp}/file/prod/"),
    (["tools.observability", "--out", "{tmp}", "x\n::error::y"], "error: 'x\\n::error::y' is not a stack name"),
    (["gpu_aks_policies.explain", "--platform", "{tmp}/x\n::error::y.json", "{tmp}/file"],
     "error: {tmp}/x\\n::error::y.json: expected the platform stack's outputs"),
])
def test_names_and_folders_a_tool_is_given_are_one_line_input_errors(tmp_path, command, expected):
    (tmp_path / "file").write_text("{}")
    (tmp_path / "x\n::error::y.json").write_text('{"Items": 5}')
    argv = [part.replace("{tmp}", str(tmp_path)) for part in command]
    result = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True,
                            timeout=HANG_GUARD_S)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(expected.replace("{tmp}", str(tmp_path))) or expected.replace("{tmp}", str(tmp_path)) in line
    assert_inert(result.stderr)


@pytest.mark.slow
def test_the_preview_s_json_shows_no_workflow_command_and_reads_back_the_same(tmp_path):
    # A tag value is free text: printed raw, `##[error]` in it was a workflow command in the CI log.
    text = (ROOT / "Pulumi.prod.yaml").read_text().replace("owner: platform-team", 'owner: "##[error]forged"')
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    result = subprocess.run([sys.executable, "-m", "tools.preview", "prod", "--json", "--config-file", str(stack_file)],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 0 and "##[" not in result.stdout
    [cluster] = [r for r in json.loads(result.stdout)["resources"] if r["type"].endswith(":ManagedCluster")]
    assert cluster["inputs"]["tags"]["owner"] == "##[error]forged"
