"""Check Kubernetes manifests against the GPU rules, with no Pulumi CLI and no cloud credentials.

    python -m policies.check [--config FILE] [--format text|json|sarif] PATH...
    helm template charts/trainer | python -m policies.check -

PATH is a YAML/JSON file, a directory (searched recursively for *.yaml, *.yml, *.json) or `-` for
stdin. Multi-document files, `List` kinds and custom resources with pod templates are handled. The
rules are the policy pack's own functions; `--config` takes the JSON that `pulumi preview
--policy-pack-config` takes. Exit code: 0 clean, 1 a mandatory violation, 2 bad input (every other
file is still checked and reported).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import abc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from policies.gpu_rules import POD_RULES
from policies.podspecs import find_pod_specs, object_identity
from policies.rule_config import (
    DEFAULT_LEVELS,
    DESCRIPTIONS,
    RuleConfig,
    RuleConfigError,
    parse_rule_config,
    read_rule_config_file,
)

try:  # libyaml's loader, the field's standard fast path; pure Python where it is missing
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
_DOCUMENT_START = re.compile(r"^---", re.MULTILINE)


@dataclass(frozen=True)
class Violation:
    file: str
    doc: int
    kind: str
    name: str
    policy: str
    level: str
    message: str
    line: int = field(default=1, compare=False)


@dataclass(frozen=True)
class InputError:
    file: str
    line: int
    message: str


@dataclass
class Report:
    violations: list[Violation] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    checked: int = 0

    @property
    def exit_code(self) -> int:
        if self.errors:
            return 2
        return 1 if any(v.level == "mandatory" for v in self.violations) else 0


def manifest_files(paths: Sequence[str], report: Report) -> Iterator[str]:
    for raw in paths:
        if raw == STDIN:
            yield STDIN
            continue
        path = Path(raw)
        if path.is_dir():
            yield from (str(p) for p in sorted(path.rglob("*")) if p.suffix in MANIFEST_SUFFIXES and p.is_file())
        elif path.is_file():
            yield str(path)
        else:
            report.errors.append(InputError(raw, 0, "no such file or directory"))


def _document_lines(text: str) -> list[int]:
    """1-based first line of each YAML document, for locations in reports."""
    markers = list(_DOCUMENT_START.finditer(text))
    starts = [text.count("\n", 0, marker.start()) + 1 for marker in markers]
    head = text[: markers[0].start()] if markers else text
    if not markers or any(line.strip() and not line.lstrip().startswith(("#", "%")) for line in head.splitlines()):
        starts.insert(0, 1)
    return starts


def _line_of_document(text: str, index: int) -> int:
    """The line where document `index` starts, from the YAML parser itself (only used for errors)."""
    for position, node in enumerate(yaml.compose_all(text, Loader=_Loader)):
        if position == index and node is not None:
            return node.start_mark.line + 1
    return 1


def load_documents(text: str, file: str, report: Report) -> list[tuple[int, int, Mapping[str, Any]]]:
    """(doc index, line, object) for every Kubernetes object in a file; `List` kinds are expanded."""
    try:
        if file.endswith(".json"):
            documents: list[Any] = [json.loads(text)]
        else:
            documents = list(yaml.load_all(text, Loader=_Loader))
    except json.JSONDecodeError as error:
        report.errors.append(InputError(file, error.lineno, f"invalid JSON: {error.msg}"))
        return []
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(error, "problem", None) or str(error)
        report.errors.append(InputError(file, line, f"invalid YAML: {problem}"))
        return []
    lines = _document_lines(text) if len(documents) > 1 else [1]
    objects: list[tuple[int, int, Mapping[str, Any]]] = []
    for index, document in enumerate(documents):
        if document is None:
            continue
        line = lines[index] if index < len(lines) else 1
        if not isinstance(document, abc.Mapping):
            line = _line_of_document(text, index) if not file.endswith(".json") else 1
            report.errors.append(InputError(
                file, line, f"document {index} is a {type(document).__name__}, not a Kubernetes object (a mapping)"))
            continue
        items = document.get("items")
        if str(document.get("kind", "")).endswith("List") and isinstance(items, list):
            objects.extend((index, line, item) for item in items if isinstance(item, abc.Mapping))
        else:
            objects.append((index, line, document))
    return objects


def check_object(obj: Any, configs: dict[str, RuleConfig]) -> Iterator[tuple[str, str, str]]:
    """(policy, level, message) for every finding of the pod rules on one object."""
    pods = list(find_pod_specs(obj))
    if not pods:
        return
    for policy, rule in POD_RULES.items():
        config = configs[policy]
        if config.level == "disabled":
            continue
        for finding in rule(obj, config, pods):
            yield policy, config.level, finding.message


def check_text(text: str, file: str, configs: dict[str, RuleConfig], report: Report) -> None:
    for index, line, obj in load_documents(text, file, report):
        report.checked += 1
        kind, name = object_identity(obj)
        for policy, level, message in check_object(obj, configs):
            report.violations.append(Violation(file, index, kind, name, policy, level, message, line))


def check_paths(paths: Sequence[str], configs: dict[str, RuleConfig], stdin: TextIO | None = None) -> Report:
    report = Report()
    for file in manifest_files(paths, report):
        if file == STDIN:
            check_text((stdin or sys.stdin).read(), "<stdin>", configs, report)
            continue
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            report.errors.append(InputError(file, 0, f"cannot read: {error}"))
            continue
        check_text(text, file, configs, report)
    return report


# --- Output ------------------------------------------------------------------------------------


def render_text(report: Report) -> str:
    lines = []
    for error in report.errors:
        lines.append(f"{error.file}:{error.line}: error: {error.message}")
    for v in report.violations:
        indented = v.message.replace("\n", "\n    ")
        lines.append(f"{v.file}:{v.line} (document {v.doc}) {v.kind}/{v.name} [{v.level}] {v.policy}:\n    {indented}")
    mandatory = sum(v.level == "mandatory" for v in report.violations)
    lines.append(f"{report.checked} object(s) checked: {mandatory} mandatory and "
                 f"{len(report.violations) - mandatory} advisory violation(s), {len(report.errors)} input error(s)")
    return "\n".join(lines)


def render_json(report: Report) -> str:
    violations = [{k: v for k, v in asdict(violation).items() if k != "line"} for violation in report.violations]
    return json.dumps({"violations": violations, "errors": [asdict(e) for e in report.errors],
                       "checked": report.checked}, indent=2)


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render_sarif(report: Report, descriptions: Mapping[str, str] = DESCRIPTIONS) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it: mandatory violations and input errors are
    errors, advisory ones warnings, each located at the first line of its document."""
    rules = [{
        "id": policy, "name": policy, "shortDescription": {"text": descriptions[policy]},
        "fullDescription": {"text": descriptions[policy]},
        "defaultConfiguration": {"level": "error" if level == "mandatory" else "warning"},
        "helpUri": "https://github.com/gpu-aks/gpu-aks#the-policy-pack",
    } for policy, level in DEFAULT_LEVELS.items()]
    rules.append({"id": "input-error", "name": "input-error", "shortDescription": {"text": "The input could not be read."},
                  "defaultConfiguration": {"level": "error"}})

    def location(file: str, line: int) -> list[dict[str, Any]]:
        uri = "stdin" if file == "<stdin>" else Path(file).as_posix()
        return [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": max(1, line)}}}]

    results = [{
        "ruleId": v.policy, "level": "error" if v.level == "mandatory" else "warning",
        "message": {"text": f"{v.kind}/{v.name} (document {v.doc}): {v.message}"},
        "locations": location(v.file, v.line),
    } for v in report.violations]
    results += [{"ruleId": "input-error", "level": "error", "message": {"text": e.message},
                 "locations": location(e.file, e.line)} for e in report.errors]
    return json.dumps({
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "gpu-aks-policies", "version": "0.1.0", "rules": rules}},
                  "results": results}],
    }, indent=2)


RENDERERS = {"text": render_text, "json": render_json, "sarif": render_sarif}


def load_config(path: str | None) -> dict[str, RuleConfig]:
    return parse_rule_config(read_rule_config_file(path) if path is not None else {})


def main(argv: Iterable[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m policies.check", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="policy config JSON, as for `pulumi preview --policy-pack-config`")
    parser.add_argument("--format", choices=sorted(RENDERERS), default="text")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory, or - for stdin")
    args = parser.parse_args(list(argv) if argv is not None else None)
    out = stdout or sys.stdout
    try:
        configs = load_config(args.config)
    except RuleConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    report = check_paths(args.paths, configs, stdin)
    print(RENDERERS[args.format](report), file=out)
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
