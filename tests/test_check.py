"""`python -m gpu_aks_policies.check`: the manifest checker for PR pipelines."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_aks_policies.check import Report, Violation, main, render_json, render_sarif, sarif_uri
from hypothesis import given, settings
from hypothesis import strategies as st

MANIFESTS = Path(__file__).parent / "manifests"
CORPUS = MANIFESTS / "corpus"
BROKEN = MANIFESTS / "broken"
ROOT = Path(__file__).resolve().parent.parent


def run(*argv: str, stdin: str | bytes = "") -> tuple[int, str]:
    out = io.StringIO()
    data = stdin.encode() if isinstance(stdin, str) else stdin
    code = main(list(argv), stdin=io.BytesIO(data), stdout=out)
    return code, out.getvalue()


def violations_of(output: str) -> list[tuple[str, int, str, str, str]]:
    return sorted((Path(v["file"]).name, v["doc"], v["kind"], v["name"], v["policy"])
                  for v in json.loads(output)["violations"])


def test_good_manifests_pass():
    code, output = run("--format", "json", str(CORPUS / "good"))
    report = json.loads(output)
    assert code == 0
    assert report["checked"] == 5, "batch.yaml has two documents, list.json two items"
    assert report["violations"] == [] and report["errors"] == []


def test_corpus_verdicts():
    code, output = run("--format", "json", str(CORPUS))
    assert code == 1
    assert violations_of(output) == [
        ("fractional.yaml", 0, "Pod", "half-gpu", "gpu-limits-are-whole-numbers"),
        ("fractional.yaml", 0, "Pod", "half-gpu", "gpu-limits-are-whole-numbers"),
        ("jobset.yaml", 0, "JobSet", "train", "gpu-limits-are-whole-numbers"),
        ("pytorchjob.yaml", 0, "PyTorchJob", "resnet", "gpu-pods-tolerate-gpu-taint"),
        ("rendered-chart.yaml", 2, "Deployment", "trainer", "gpu-pods-select-gpu-nodes"),
        ("rendered-chart.yaml", 2, "Deployment", "trainer", "gpu-pods-tolerate-gpu-taint"),
        ("untolerated-statefulset.yaml", 0, "StatefulSet", "llm", "gpu-pods-tolerate-gpu-taint"),
    ]
    pytorch = [v for v in json.loads(output)["violations"] if v["name"] == "resnet"][0]
    assert "spec.pytorchReplicaSpecs.Worker.template.spec" in pytorch["message"]
    assert pytorch["level"] == "mandatory"


def test_helm_output_on_stdin():
    text = (CORPUS / "helm" / "rendered-chart.yaml").read_text()
    code, output = run("--format", "json", "-", stdin=text)
    report = json.loads(output)
    assert code == 1 and report["checked"] == 4
    assert {v["file"] for v in report["violations"]} == {"<stdin>"}


def test_broken_input_is_reported_with_file_and_line_and_the_rest_is_still_checked():
    code, output = run("--format", "json", str(BROKEN), str(CORPUS / "bad" / "untolerated-statefulset.yaml"),
                       str(MANIFESTS / "missing.yaml"))
    report = json.loads(output)
    assert code == 2
    errors = sorted((Path(e["file"]).name, e["line"], e["message"]) for e in report["errors"])
    assert errors == [
        ("invalid.json", 2, "invalid JSON, column 10: Expecting value"),
        ("invalid.yaml", 4, "invalid YAML, column 1: did not find expected ',' or ']'"),
        ("missing.yaml", 0, "no such file or directory"),
        ("not-a-mapping.yaml", 1, "document 0 is a list, not a Kubernetes object (a mapping)"),
        ("second-doc-string.yaml", 5, "document 1 is a str, not a Kubernetes object (a mapping)"),
    ]
    assert report["checked"] == 2, "the ConfigMap before the bad document and the StatefulSet"
    assert [v["name"] for v in report["violations"]] == ["llm"]


def test_config_changes_the_taint_and_levels(tmp_path):
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({
        "gpu-pods-tolerate-gpu-taint": {"gpuTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "gpu-pods-select-gpu-nodes": "disabled",
    }))
    code, output = run("--config", str(config), "--format", "json", str(MANIFESTS / "seeds" / "flyte-plain-gpu.yaml"))
    assert code == 0 and json.loads(output)["violations"] == []


def test_bad_config_exits_2(tmp_path, capsys):
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"gpu-pods-tolerate-gpu-taint": {"enforcementLevel": "fatal"}}))
    assert run("--config", str(config), str(CORPUS))[0] == 2
    assert "gpu-pods-tolerate-gpu-taint.enforcementLevel: 'fatal' is not one of advisory, mandatory, disabled" in \
        capsys.readouterr().err


def test_text_format_names_file_line_object_and_fix():
    code, output = run(str(CORPUS / "bad" / "untolerated-statefulset.yaml"))
    assert code == 1
    # The line of the pod spec that lacks the tolerations (13), not the document's first line (2).
    assert ("untolerated-statefulset.yaml:13 (document 0) StatefulSet/llm [mandatory] gpu-pods-tolerate-gpu-taint "
            "at spec.template.spec.tolerations:") in output
    assert "      - key: sku" in output
    assert output.strip().endswith("1 object(s) checked: 1 mandatory and 0 advisory violation(s), 0 input error(s)")


def test_sarif_is_valid_2_1_0_and_locates_documents():
    code, output = run("--format", "sarif", str(CORPUS / "helm"), str(BROKEN / "invalid.yaml"))
    sarif = json.loads(output)
    assert code == 2 and sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    regions = {(r["ruleId"], tuple(r["locations"][0]["physicalLocation"]["region"].values())) for r in results}
    # The Deployment starts on line 20, after --- and a comment; its pod spec, which lacks the
    # tolerations, is the key `spec:` on line 34, column 5.
    assert ("gpu-pods-tolerate-gpu-taint", (34, 5)) in regions
    assert ("input-error", (4,)) in regions
    [toleration] = [r for r in results if r["ruleId"] == "gpu-pods-tolerate-gpu-taint"]
    assert toleration["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "spec.template.spec.tolerations",
                                                                "kind": "member"}]
    levels = {r["ruleId"]: r["level"] for r in results}
    assert levels == {"gpu-pods-tolerate-gpu-taint": "error", "gpu-pods-select-gpu-nodes": "warning",
                      "input-error": "error"}
    rules = {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in results} <= rules


def test_sarif_has_the_fields_github_code_scanning_requires():
    # No copy of the OASIS schema ships in any package available here; these are the SARIF 2.1.0
    # fields GitHub's upload documents as required, checked one by one.
    sarif = json.loads(run("--format", "sarif", str(CORPUS), str(BROKEN))[1])
    assert sarif["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    [run_] = sarif["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "gpu-aks-policies" and driver["rules"]
    for rule in driver["rules"]:
        assert rule["id"] and rule["shortDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note", "none")
    assert run_["results"]
    for result in run_["results"]:
        assert result["level"] in ("error", "warning", "note", "none") and result["message"]["text"]
        [location] = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        assert isinstance(physical["region"]["startLine"], int) and physical["region"]["startLine"] >= 1


def test_runs_as_a_module_from_the_repo_root():
    text = (MANIFESTS / "seeds" / "generic-gpu-pod.yaml").read_text()
    result = subprocess.run([sys.executable, "-m", "gpu_aks_policies.check", "-"], input=text, text=True,
                            capture_output=True, cwd=ROOT, check=False)
    assert result.returncode == 1 and "gpu-pods-tolerate-gpu-taint" in result.stdout


#: What a check without `--platform` and without SARIF never needs: the fit and the outputs contract
#: it reads, Karpenter's disruption advice, and the installed package's metadata (SARIF's links).
NOT_LOADED_BY_A_PLAIN_CHECK = ("gpu_aks_policies.fit", "gpu_aks_policies.contract", "importlib.metadata")


def test_a_plain_check_does_not_load_what_only_the_platform_or_sarif_need():
    """Start-up weighs on a run over many small files (issue 30): those modules load where they are used."""
    script = ("import sys\nfrom gpu_aks_policies.check import main\ncode = main(sys.argv[1:])\n"
              f"print([name for name in {NOT_LOADED_BY_A_PLAIN_CHECK!r} if name in sys.modules], code)")
    seed = str(MANIFESTS / "seeds" / "generic-gpu-pod.yaml")
    result = subprocess.run([sys.executable, "-c", script, "--format", "json", seed], capture_output=True, text=True,
                            cwd=ROOT, check=False)
    assert result.stdout.splitlines()[-1] == "[] 1", result.stderr
    code, output = run("--format", "sarif", seed)
    assert code == 1 and json.loads(output)["runs"][0]["results"], "SARIF still loads what it needs"


def test_a_field_path_leads_to_the_line_and_column_of_its_deepest_written_part():
    from gpu_aks_policies.documents import SourceIndex, load_yaml

    text = ("spec:\n"                      # 1
            "  containers:\n"              # 2
            "  - name: a\n"                # 3
            "    resources:\n"             # 4
            "      limits:\n"              # 5
            "        nvidia: 1\n"          # 6
            "        nvidia.com/gpu: 1\n"  # 7
            "  - {name: b}\n"              # 8
            "  tolerations: []\n")         # 9
    index = SourceIndex()
    [(_, pod)] = load_yaml(text, index=index)
    limits = "spec.containers[0].resources.limits"
    # A key holding dots is found although a shorter key (`nvidia`) is there too.
    assert index.locate(pod, f"{limits}.nvidia.com/gpu") == (7, 9)
    assert index.locate(pod, f"{limits}.nvidia") == (6, 9)
    # The deepest part written: a missing key, an index past the end, or a digit that is not ASCII
    # (`²` once crashed `int`) stops there.
    assert index.locate(pod, f"{limits}.amd.com/gpu") == (5, 7)
    assert index.locate(pod, "spec.containers[1].resources") == (8, 0)  # the item's flow mapping
    assert index.locate(pod, "spec.containers[2].name") == (2, 3)
    assert index.locate(pod, "spec.containers[\u00b2].name") == (2, 3)
    assert index.locate(pod, "spec.nodeSelector") == (1, 1)
    assert index.locate(pod, "metadata.name") is None


# Anything input may put into a finding: quotes, backslashes, controls, non-ASCII, lone surrogates,
# and the workflow-command forms.
_ANY_TEXT = st.one_of(st.text(), st.sampled_from(['"', "\\", "\n", "##[error]x", "::error::x", "\u2028", "\ud800"]))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_ANY_TEXT, _ANY_TEXT, _ANY_TEXT, st.sampled_from(["mandatory", "advisory"]), _ANY_TEXT,
                          st.integers(-1, 10**6), st.integers(-1, 500), _ANY_TEXT), max_size=4))
def test_json_and_sarif_reports_hold_every_finding_exactly(findings):
    """The reports are written a finding per line, SARIF's results directly as JSON: each still
    decodes to exactly the finding's data, whatever its text holds."""
    violations = [Violation(f"k8s/{file}.yaml", 0, kind, name, "gpu-limits-are-whole-numbers", level, message, line, path,
                            column) for kind, name, file, level, message, line, column, path in findings]
    report = Report(violations=violations, checked=len(violations))
    assert json.loads(render_json(report))["violations"] == [vars(v) for v in violations]
    expected = []
    for v in violations:
        region = {"startLine": max(1, v.line), **({"startColumn": v.column} if v.column > 0 else {})}
        location = {"physicalLocation": {"artifactLocation": {"uri": Path(v.file).as_posix()}, "region": region},
                    **({"logicalLocations": [{"fullyQualifiedName": v.path, "kind": "member"}]} if v.path else {})}
        expected.append({"ruleId": v.policy, "level": "error" if v.level == "mandatory" else "warning",
                         "message": {"text": f"{v.kind}/{v.name} (document {v.doc}): {v.message}"},
                         "locations": [location]})
    sarif = render_sarif(report)
    assert json.loads(sarif)["runs"][0]["results"] == expected
    assert "##[" not in sarif and sarif.isascii()


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab/.\\", min_size=1, max_size=12))
def test_a_sarif_uri_is_the_files_posix_path(file):
    directories: dict[str, str] = {}
    assert sarif_uri(file, directories) == Path(file).as_posix()
    assert sarif_uri(file, directories) == Path(file).as_posix()  # from the remembered directory
