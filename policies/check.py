"""Check Kubernetes manifests against the GPU rules, with no Pulumi CLI and no cloud credentials.

    gpu-aks-check [--config FILE] [--platform OUTPUTS.json] [--format text|json|sarif] PATH...
    python -m gpu_aks_policies.check ...                    (the same, from this repository)
    helm template charts/trainer | gpu-aks-check -

PATH is a YAML/JSON file, a directory (searched for *.yaml, *.yml, *.json; symlinked directories are
followed once) or `-` for standard input. All inputs are read first and checked together, so a
pod's Namespace, its DRA claims and a TrainJob's runtime resolve across files. Each controller's
objects are read by its workload adapter (`policies/workloads/`); the rules are the policy pack's
own functions; `--config` takes the JSON that `pulumi preview --policy-pack-config` takes.
`--platform` adds `gpu-pods-fit-a-pool` and takes the GPU taints from the platform's pools.

Each violation names the field it is about (`spec.containers[0].resources.limits`) and points at
that field's line (and column, in SARIF, where known), in YAML and JSON files alike. With
`--platform`, a pod gets every verdict at once: the limits rules and whether it fits a pool, each
pool's reasons one a line.

Input is treated as hostile: files over `--max-file-size` bytes, nesting deeper than 256 levels,
alias and merge-key bombs, recursive aliases, tags that do not fit, duplicate keys, text that is
not UTF-8 or holds raw control characters, unreadable or dangling paths and anything that is not a
regular file (a FIFO, a device: never opened in a way that waits) are input errors with file and
line, and every other file is still checked and reported, in every format. Names from the input
are printed with control characters escaped, and no printed line can be a GitHub Actions workflow
command. Exit code: 0 clean, 1 a mandatory violation, 2 bad input; 141 when the reader of the
output goes away early (`| head -1`), as for any tool SIGPIPE ends.
"""

from __future__ import annotations

import argparse
import functools
import os
import stat
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from . import __version__
from .device_classes import device_class_refusals
from .documents import (
    DEFAULT_LIMITS,
    DocumentError,
    Limits,
    SourceIndex,
    file_kind,
    gc_paused,
    load_json,
    load_yaml,
    not_regular,
    read_bounded,
    read_file,
    safe_text,
)
from .podspecs import PodSpec, object_identity
from .rule_config import RuleConfig, RuleConfigError
from .rules import RULES, Rule, parse_rule_config, read_rule_config_file
from .scope import request_scope
from .terminal import EncodedJson, escape_line, json_output, json_string, run_cli
from .workloads import Context, context_of, pod_specs_of
from .workloads.shapes import ShapeReachError

if TYPE_CHECKING:
    from .fit import Platform

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
STDIN_NAME = "<stdin>"


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
    #: The field the finding is about (`spec.containers[0].resources.limits`), and the column of
    #: its key when known (0 otherwise); `line` is that field's line where the file tells it.
    path: str = field(default="", compare=False)
    column: int = field(default=0, compare=False)


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


@dataclass(frozen=True)
class LoadedObject:
    file: str
    doc: int
    line: int
    obj: Mapping[str, Any]
    #: Where the fields of the document were written (None: findings keep the line of the document).
    index: SourceIndex | None = field(default=None, compare=False, repr=False)

    def locate(self, path: str) -> tuple[int, int]:
        """(line, column) of the field at `path`, as near as the file tells (column 0: not known)."""
        found = self.index.locate(self.obj, path) if self.index is not None and path else None
        return found if found is not None else (self.line, 0)


# --- Finding and reading the inputs -----------------------------------------------------------


def _walk(directory: str, errors: list[InputError], seen: set[tuple[int, int]]) -> list[str]:
    """Manifest files under a directory, sorted, iteratively; each real directory is entered once,
    so a symlink loop is not followed twice."""
    files: list[str] = []
    pending = [directory]
    while pending:
        current = pending.pop()
        try:
            info = os.stat(current)
        except OSError as error:
            errors.append(InputError(current, 0, f"cannot read: {error.strerror or error}"))
            continue
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError as error:
            errors.append(InputError(current, 0, f"cannot list: {error.strerror or error}"))
            continue
        subdirectories = []
        for entry in entries:
            path = entry.path
            try:
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError:
                is_dir = is_file = False
            if is_dir:
                subdirectories.append(path)
            elif entry.name.endswith(MANIFEST_SUFFIXES):
                if is_file:
                    files.append(path)
                else:  # a FIFO, a device or a link to one is named like a manifest: say so, never open it
                    errors.append(InputError(path, 0, _not_a_file(path)))
        pending.extend(reversed(subdirectories))
    return files


def _not_a_file(path: str) -> str:
    """Why a path that is neither a regular file nor a directory cannot be read."""
    try:
        return not_regular(file_kind(os.stat(path).st_mode))
    except FileNotFoundError:
        return "a dangling symbolic link" if os.path.islink(path) else "no such file or directory"
    except OSError as error:
        return f"cannot read: {error.strerror or error}"


def input_files(paths: Sequence[str], errors: list[InputError]) -> list[str]:
    files: list[str] = []
    seen: set[tuple[int, int]] = set()
    for raw in paths:
        if raw == STDIN:
            files.append(STDIN)
            continue
        try:
            mode = os.stat(raw).st_mode
        except OSError:
            mode = 0
        if stat.S_ISDIR(mode):
            files.extend(_walk(raw, errors, seen))
        elif stat.S_ISREG(mode):
            files.append(raw)
        else:
            errors.append(InputError(raw, 0, _not_a_file(raw)))
    return files


#: The checker's limit is an option: its too-large messages say how to raise it.
SIZE_HINT = " (raise it with --max-file-size)"


def read_text(file: str, limits: Limits, stdin: BinaryIO | None = None) -> str:
    """A file's (or standard input's) text, within the size limit (raises DocumentError)."""
    if file == STDIN:
        return read_bounded(stdin if stdin is not None else sys.stdin.buffer, limits, SIZE_HINT)
    return read_file(file, limits, SIZE_HINT)


def load_objects(text: str, file: str, limits: Limits, errors: list[InputError]) -> list[LoadedObject]:
    """Every Kubernetes object in a file (`List` kinds expanded); documents that are not objects
    are input errors, and the rest of the file is kept (the documents before a YAML syntax error
    included)."""
    broken: DocumentError | None = None
    index = SourceIndex()
    try:
        if file.endswith(".json"):
            documents = [(_first_line(text), load_json(text, limits, index))]
        else:
            documents = load_yaml(text, limits, index=index)
    except DocumentError as problem:
        documents, broken = problem.complete, problem
    errors.extend(InputError(file, duplicate.line, duplicate.message) for duplicate in index.duplicates)
    objects: list[LoadedObject] = []
    for number, (line, document) in enumerate(documents):
        if document is None:
            continue
        if not isinstance(document, Mapping):
            errors.append(InputError(file, line, f"document {number} is a {type(document).__name__}, not a Kubernetes "
                                                 "object (a mapping)"))
            continue
        items = document.get("items")
        if isinstance(document.get("kind"), str) and document["kind"].endswith("List") and isinstance(items, list):
            objects.extend(LoadedObject(file, number, line, item, index) for item in items if isinstance(item, Mapping))
        else:
            objects.append(LoadedObject(file, number, line, document, index))
    if broken is not None:
        errors.append(InputError(file, broken.line, broken.message))
    return objects


def _first_line(text: str) -> int:
    """The line a JSON document starts on (after leading blank lines)."""
    return text.count("\n", 0, len(text) - len(text.lstrip())) + 1


def read_inputs(paths: Sequence[str], limits: Limits = DEFAULT_LIMITS,
                stdin: BinaryIO | None = None) -> tuple[list[LoadedObject], list[InputError]]:
    errors: list[InputError] = []
    objects: list[LoadedObject] = []
    with gc_paused():
        for file in input_files(paths, errors):
            name = STDIN_NAME if file == STDIN else file
            try:
                objects.extend(load_objects(read_text(file, limits, stdin), name, limits, errors))
            except DocumentError as problem:
                errors.append(InputError(name, problem.line, problem.message))
    return objects, errors


# --- Checking ---------------------------------------------------------------------------------


#: The rules the checker runs on each object: every rule over pod specs, wherever the pack runs it.
CHECKER_RULES: tuple[Rule, ...] = tuple(rule for rule in RULES.values() if rule.subject == "pods")


def check_object(obj: Mapping[str, Any], configs: Mapping[str, RuleConfig], context: Context,
                 platform: Platform | None = None,
                 identity: tuple[str, str] | None = None) -> list[tuple[str, str, str, str]]:
    """(policy, level, message, field path) for every finding of the pod rules on one object, in one
    request scope (what the rules derive from a pod is computed once for all of them). `identity`:
    the object's (kind, name), when the caller has it already."""
    with request_scope():
        # The pod specs per declared shapes (`workloadShapes`): every rule's config declares the same
        # ones unless the config gives them to some rules only.
        pods_by_shapes: dict[tuple[Any, ...], list[PodSpec]] = {}
        identity = identity or object_identity(obj)
        results: list[tuple[str, str, str, str]] = []
        for rule in CHECKER_RULES:
            config = configs[rule.name]
            if config.level == "disabled" or (rule.needs_platform and platform is None):
                continue
            pods = pods_by_shapes.get(config.workload_shapes)
            if pods is None:
                pods = pods_by_shapes[config.workload_shapes] = pod_specs_of(obj, context, config.workload_shapes)
            if pods:
                results.extend((rule.name, config.level, finding.message, finding.path)
                               for finding in rule.check_pods(pods, config, context, platform, identity))
        return results


def check_objects(objects: Sequence[LoadedObject], configs: Mapping[str, RuleConfig],
                  platform: Platform | None = None, report: Report | None = None) -> Report:
    report = report or Report()
    context = context_of(o.obj for o in objects)
    for loaded in objects:
        report.checked += 1
        for path, message in device_class_refusals(loaded.obj):  # an object the API server refuses outright
            report.errors.append(InputError(loaded.file, loaded.locate(path)[0], message))
        kind, name = identity = object_identity(loaded.obj)
        try:
            findings = check_object(loaded.obj, configs, context, platform, identity)
        except RecursionError:
            report.errors.append(InputError(loaded.file, loaded.line, "nested too deeply to check"))
            continue
        except ShapeReachError as error:
            report.errors.append(InputError(loaded.file, loaded.line, str(error)))
            continue
        for policy, level, message, path in findings:
            line, column = loaded.locate(path)
            report.violations.append(Violation(loaded.file, loaded.doc, kind, name, policy, level, message, line,
                                               path, column))
    return report


def check_paths(paths: Sequence[str], configs: Mapping[str, RuleConfig], stdin: BinaryIO | None = None,
                limits: Limits = DEFAULT_LIMITS, platform: Platform | None = None) -> Report:
    with gc_paused():
        objects, errors = read_inputs(paths, limits, stdin)
        report = check_objects(objects, configs, platform, Report(errors=errors))
        # Freed before the collector wakes: its first pass after `gc.enable()` would otherwise scan
        # every container of every parsed document (all still in the youngest generation), a
        # tenth of the whole run when most manifests break a rule.
        del objects
    return report


# --- Output ------------------------------------------------------------------------------------


def render_text(report: Report) -> str:
    """One line per input error, a head line and the indented message per violation, and a
    summary. Names from the input stay on their line, and the whole text passes `safe_text`: no
    control character, and no line that GitHub Actions would run as a workflow command."""
    lines = []
    for error in report.errors:
        lines.append(f"{escape_line(error.file)}:{error.line}: error: {error.message}")
    for v in report.violations:
        indented = v.message.replace("\n", "\n    ")
        at = f" at {escape_line(v.path)}" if v.path else ""
        lines.append(f"{escape_line(v.file)}:{v.line} (document {v.doc}) {escape_line(v.kind)}/{escape_line(v.name)} "
                     f"[{v.level}] {v.policy}{at}:\n    {indented}")
    mandatory = sum(v.level == "mandatory" for v in report.violations)
    lines.append(f"{report.checked} object(s) checked: {mandatory} mandatory and "
                 f"{len(report.violations) - mandatory} advisory violation(s), {len(report.errors)} input error(s)")
    return safe_text("\n".join(lines))


def render_json(report: Report) -> str:
    # A finding's fields are all text and numbers: its attribute dict is its JSON object
    # (`dataclasses.asdict` deep-copies each field, a tenth of the run on thousands of findings).
    return json_output({"violations": [vars(violation) for violation in report.violations],
                        "errors": [vars(error) for error in report.errors], "checked": report.checked},
                       one_line=("violations", "errors"))


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


DISTRIBUTION = "gpu-aks-policies"


@functools.lru_cache(maxsize=1)
def repository_url() -> str | None:
    """The `Repository` URL of the installed package's metadata (`[project.urls]` in pyproject.toml), so a
    fork's SARIF links to its own docs by changing one line. None when the package is not installed (the
    pack copied elsewhere) or names no repository: SARIF's `helpUri` is optional."""
    import importlib.metadata  # only SARIF reports read it; it costs a fifth of the checker's start-up

    try:
        entries = importlib.metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "repository" and url.strip().startswith("https://"):
            return url.strip().rstrip("/")
    return None


def help_uri(rule: Rule) -> str | None:
    """Where a rule is documented: docs/policies.md of the package's repository, at the rule's anchor."""
    repository = repository_url()
    return f"{repository}/blob/main/docs/policies.md#{rule.name}" if repository else None


def sarif_rules() -> list[dict[str, Any]]:
    """The SARIF `rules` metadata, one per rule declaration (`gpu_aks_policies.rules`)."""
    rules = []
    for rule in RULES.values():
        entry: dict[str, Any] = {
            "id": rule.name, "name": rule.name, "shortDescription": {"text": rule.description},
            "fullDescription": {"text": rule.description},
            "defaultConfiguration": {"level": "error" if rule.level == "mandatory" else "warning"}}
        uri = help_uri(rule)
        if uri:
            entry["helpUri"] = uri
        rules.append(entry)
    return rules


def sarif_uri(file: str, directories: dict[str, str]) -> str:
    """`Path(file).as_posix()` (what code scanning matches against the repository), with each
    directory's form remembered in `directories`: a Path per finding cost more than the rest of
    the SARIF report when thousands of manifests broke a rule."""
    directory, name = os.path.split(file)
    if not name or name in (".", ".."):
        return Path(file).as_posix()
    base = directories.get(directory)
    if base is None:
        base = Path(directory).as_posix() if directory else ""
        base = directories[directory] = "" if base == "." else base
    return f"{base}{name}" if not base or base.endswith("/") else f"{base}/{name}"


def sarif_result(rule: str, level: str, text: str, uri: str, line: int, column: int = 0, path: str = "") -> EncodedJson:
    """One SARIF result, written directly as the JSON of

        {"ruleId": rule, "level": level, "message": {"text": text},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri},
                                             "region": {"startLine": line, "startColumn": column}},
                        "logicalLocations": [{"fullyQualifiedName": path, "kind": "member"}]}]}

    (`startLine` at least 1, `startColumn` only when known, `logicalLocations` only with a path),
    every string through json's own escaper. Building those eight containers per finding and
    encoding them took three times as long, the largest part of a SARIF report of thousands."""
    region = f'"startLine": {max(1, int(line))}' + (f', "startColumn": {int(column)}' if column > 0 else "")
    logical = f', "logicalLocations": [{{"fullyQualifiedName": {json_string(path)}, "kind": "member"}}]' if path else ""
    return EncodedJson(f'{{"ruleId": {json_string(rule)}, "level": {json_string(level)}, "message": {{"text": '
                       f'{json_string(text)}}}, "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": '
                       f'{json_string(uri)}}}, "region": {{{region}}}}}{logical}}}]}}')


def render_sarif(report: Report) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it: mandatory violations and input errors are
    errors, advisory ones warnings, each located at the line (and column, where known) of the field
    it is about, with that field's path as its logical location."""
    rules = sarif_rules()
    rules.append({"id": "input-error", "name": "input-error", "shortDescription": {"text": "The input could not be read."},
                  "defaultConfiguration": {"level": "error"}})

    directories: dict[str, str] = {}

    def uri(file: str) -> str:
        return "stdin" if file == STDIN_NAME else sarif_uri(file, directories)

    results = [sarif_result(v.policy, "error" if v.level == "mandatory" else "warning",
                            f"{v.kind}/{v.name} (document {v.doc}): {v.message}", uri(v.file), v.line, v.column, v.path)
               for v in report.violations]
    results += [sarif_result("input-error", "error", e.message, uri(e.file), e.line) for e in report.errors]
    return json_output({
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "gpu-aks-policies", "version": __version__, "rules": rules}},
                  "results": results}],
    }, one_line=("rules", "results"))


RENDERERS = {"text": render_text, "json": render_json, "sarif": render_sarif}


def load_config(path: str | None) -> dict[str, RuleConfig]:
    return parse_rule_config(read_rule_config_file(path) if path is not None else {})


def byte_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of bytes") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1 byte")
    return value


def _refused(error: Exception) -> int:
    """An option's file could not be used: say why, exit 2."""
    print(safe_text(f"error: {error}"), file=sys.stderr)
    return 2


def main(argv: Iterable[str] | None = None, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-aks-check", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", help="policy config JSON, as for `pulumi preview --policy-pack-config`")
    parser.add_argument("--platform", metavar="OUTPUTS.json",
                        help="the platform's outputs (`pulumi stack output --json`): adds gpu-pods-fit-a-pool")
    parser.add_argument("--format", choices=sorted(RENDERERS), default="text")
    parser.add_argument("--max-file-size", type=byte_count, default=DEFAULT_LIMITS.max_bytes, metavar="BYTES",
                        help=f"refuse larger inputs (default {DEFAULT_LIMITS.max_bytes})")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory, or - for stdin")
    args = parser.parse_args(list(argv) if argv is not None else None)
    out = stdout or sys.stdout
    try:
        configs = load_config(args.config)
    except RuleConfigError as error:
        return _refused(error)
    platform = None
    if args.platform:
        # The fit and the outputs contract it reads load only here: the plain check never uses them,
        # and importing them cost a third of its start-up.
        from .fit import PlatformError, read_platform

        try:
            platform = read_platform(args.platform)
        except PlatformError as error:
            return _refused(error)
    limits = Limits(max_bytes=args.max_file_size)
    with gc_paused():  # a report of thousands of findings is rendered as it was built: acyclic
        report = check_paths(args.paths, configs, stdin, limits, platform)
        output = RENDERERS[args.format](report)
    print(output, file=out)
    return report.exit_code


def run() -> None:
    """The `gpu-aks-check` command."""
    run_cli(main)


if __name__ == "__main__":
    run()
