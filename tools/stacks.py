"""The stacks of this project: one per `Pulumi.<stack>.yaml` beside `Pulumi.yaml`.

    python3 tools/stacks.py [--github-output] [--examples] [DIR]

Prints the stack names as a JSON list (`--github-output`: as `stacks=<list>`, the line a GitHub
Actions step appends to $GITHUB_OUTPUT, so the PR workflow's matrix follows the files present).
`--examples`: the example stack files of this project's program instead, `examples/<dir>/Pulumi.<stack>.yaml`
in a folder without a `Pulumi.yaml` of its own (a folder with one is an app project), as a list of
`{"stack", "file"}`; the workflow previews each with `tools.preview STACK --config-file FILE`.
Standard library only: the workflow runs it before anything is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.platform_settings import PlatformSettings

ROOT = Path(__file__).resolve().parent.parent
#: Pulumi's stack names: 1 to 100 letters, digits, '-', '_' and '.' (pulumi/pulumi v3.274.0, the CLI
#: `make engines` builds: sdk/go/common/tokens/stack_name.go `ParseStackName`, not empty, at most 100
#: characters, each of `[A-Za-z0-9_.-]`; the diy backend's `ValidateStackName` parses the name with it), so
#: a name with a line break, a slash or a control character never names a stack.
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
STACK_NAME_RULE = "1 to 100 letters, digits, '-', '_' or '.', as Pulumi's stack names are"
STACK_FILE = re.compile(rf"Pulumi\.({STACK_NAME.pattern})\.yaml")


def stacks(root: Path = ROOT) -> list[str]:
    names = (STACK_FILE.fullmatch(path.name) for path in root.glob("Pulumi.*.yaml"))
    return sorted(match.group(1) for match in names if match)


def example_stacks(root: Path = ROOT) -> list[dict[str, str]]:
    found = []
    for path in sorted((root / "examples").glob("*/Pulumi.*.yaml")):
        match = STACK_FILE.fullmatch(path.name)
        if match and not (path.parent / "Pulumi.yaml").exists():
            found.append({"stack": match.group(1), "file": path.relative_to(root).as_posix()})
    return found


# --- Reading a stack file, as the program would read its config -----------------------------------
# The offline tools that need a stack's settings (the preflight, the preview, the observability files)
# read them here, without Pulumi's runtime. The settings layer is imported where it is first needed:
# `python3 tools/stacks.py` (above) runs in CI before anything is installed.


class StackFileError(ValueError):
    """A stack file that cannot be used, with the line where that shows (0 when none applies)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


#: Stack files are small; these bounds turn hostile ones into errors, aliases expanded (config
#: becomes JSON, which would expand every alias): `documents.Limits` as keyword arguments.
STACK_FILE_LIMITS = {"max_bytes": 1024 * 1024, "max_depth": 64, "max_nodes": 100_000}
SECRET_PLACEHOLDER = "[secret placeholder]"


def _read_stack_file(path: Path, index: Any = None) -> list[tuple[int, Any]]:
    """The stack file's YAML documents (bounded, aliases expanded); raises DocumentError."""
    from gpu_aks_policies.documents import Limits, load_yaml, read_file

    limits = Limits(**STACK_FILE_LIMITS)
    return load_yaml(read_file(str(path), limits), limits, expanded=True, index=index)


def _without_secure_values(value: Any) -> tuple[Any, bool]:
    """The value with every `{secure: ...}` (at any depth: `pulumi config set --path --secret`)
    replaced by a placeholder, and whether there was one."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        found = False
        result = {}
        for key, item in value.items():
            result[key], nested = _without_secure_values(item)
            found = found or nested
        return result, found
    if isinstance(value, list):
        items = [_without_secure_values(item) for item in value]
        return [item for item, _ in items], any(found for _, found in items)
    return value, False


def _key_lines(path: Path, keys: Sequence[str]) -> list[int]:
    """The lines of `config` keys of a stack file already read once (0 where not found)."""
    from gpu_aks_policies.documents import SourceIndex

    index = SourceIndex()
    documents = _read_stack_file(path, index)
    config = next((doc.get("config") for _, doc in documents if isinstance(doc, dict)), None)
    lines = index.mappings.get(id(config), [])
    order = list(config) if isinstance(config, dict) else []
    return [lines[order.index(key) + 2] if key in order and order.index(key) + 2 < len(lines) else 0 for key in keys]


def config_from_stack_file(path: Path, project: str) -> tuple[dict[str, str], list[str]]:
    """Config as the engine passes it to a program: `project:key` -> string (objects as JSON), and
    which keys are secret. Encrypted `secure:` values, top-level or nested, cannot be decrypted
    offline: they become a placeholder and their key is marked secret, as Pulumi marks it.

    Raises StackFileError for anything that is not a usable stack file."""
    from gpu_aks_policies.documents import DocumentError
    from gpu_aks_policies.limits import MAX_SHOWN_CHARS
    from gpu_aks_policies.terminal import escape_field

    try:
        documents = _read_stack_file(path)
    except DocumentError as problem:
        raise StackFileError(problem.line, problem.message) from None
    documents = [(line, doc) for line, doc in documents if doc is not None]
    if len(documents) > 1:
        raise StackFileError(documents[1][0], "a stack file is one YAML document")
    line, document = documents[0] if documents else (1, {})
    if not isinstance(document, dict):
        raise StackFileError(line, f"the stack file is a {type(document).__name__}; it must be a mapping with a "
                                   "'config' key")
    raw = document.get("config") or {}
    if not isinstance(raw, dict):
        raise StackFileError(line, "'config' must be a map of keys to values")
    config: dict[str, str] = {}
    secret_keys: list[str] = []
    written_as: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise StackFileError(line, f"config key {json.dumps(key, default=str)} is not a string")
        full_key = key if ":" in key else f"{project}:{key}"
        if full_key in written_as:
            # `gpuPools` is `gpu-aks:gpuPools` in the project's stack file: one of the two values would be
            # lost without a word (Pulumi keeps whichever its map iteration meets last).
            first, again = _key_lines(path, (written_as[full_key], key))
            shown, full, earlier = (escape_field(text, MAX_SHOWN_CHARS) for text in (key, full_key, written_as[full_key]))
            raise StackFileError(again, f"config key '{shown}' is {full}, already given as '{earlier}' at line {first}; "
                                        "give it once")
        written_as[full_key] = key
        value, secret = _without_secure_values(value)
        if secret:
            secret_keys.append(full_key)
        config[full_key] = value if isinstance(value, str) else json.dumps(value, default=str)
    return config, secret_keys


def settings_from_stack_file(path: Path, stack: str, environ: Mapping[str, str] = os.environ) -> PlatformSettings:
    """A stack file's settings as the program parses them, without running it: every `gpu-aks:` value
    decoded as JSON where it is JSON (`Config.get_object`), `GPU_AKS_TODAY` and the deployer's
    environment honoured. The offline tools that need a stack's settings (the preflight, the preview
    summary, the observability files) all read it here. Raises StackFileError or SettingsError."""
    from components.platform_settings import parse_settings
    from components.settings import PROJECT, SettingsError
    from components.settings.common import today

    config, secret_keys = config_from_stack_file(path, PROJECT)
    raw: dict[str, Any] = {}
    for key, value in config.items():
        if key.startswith(PROJECT + ":"):
            try:
                raw[key.split(":", 1)[1]] = json.loads(value)
            except ValueError:
                raw[key.split(":", 1)[1]] = value
    secret = {key.split(":", 1)[1] for key in secret_keys if key.startswith(PROJECT + ":")}
    try:
        return parse_settings(raw, stack, config.get("azure-native:location"), secret, today(environ), environ)
    except SettingsError as error:
        raise SettingsError(located_problems(path, error.problems)) from None


#: A problem's key as settings name it: the config key (`gpu-aks:gpuPools`), a list item by name or
#: position (`[gput4]`, `[0]`), then the path inside it.
_PROBLEM_KEY = re.compile(r"(?P<top>[A-Za-z0-9_.-]+:[A-Za-z0-9_]+)(\[(?P<item>[^\]]*)\])?(?P<rest>[.\[].*)?")


def located_problems(path: Path, problems: list[str]) -> list[str]:
    """Each settings problem led by the stack file and the line of the key it names
    (`Pulumi.prod.yaml:34: gpu-aks:cluster.apiServerAccessProfile.authorizedIPRanges[0]: ...`), or of
    the nearest key written above it when the key itself is absent. A problem that names no key of
    the file (`GPU_AKS_TODAY`) is kept as it is. Only called once parsing failed: the file is read
    again, with where each key was written."""
    from gpu_aks_policies.documents import DocumentError, SourceIndex
    from gpu_aks_policies.terminal import escape_line

    index = SourceIndex(items=True)
    try:
        documents = _read_stack_file(path, index)
    except DocumentError:
        return problems
    document = next((doc for _, doc in documents if doc is not None), None)
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict):
        return problems
    shown = escape_line(str(path))
    located = []
    for problem in problems:
        line = _line_of(problem.split(": ", 1)[0], config, index)
        located.append(f"{shown}:{line}: {problem}" if line else problem)
    return located


def _line_of(key: str, config: dict[str, Any], index: Any) -> int:
    from components.settings import PROJECT

    match = _PROBLEM_KEY.fullmatch(key)
    if match is None:
        return 0
    top, item, rest = match["top"], match["item"], match["rest"] or ""
    if top not in config and top.startswith(PROJECT + ":"):
        top = top.split(":", 1)[1]  # the stack file may leave the project's namespace out
    if top not in config:
        return 0
    path = top
    if item is not None:
        items = config[top] if isinstance(config[top], list) else []
        position = int(item) if item.isdigit() else next(
            (number for number, entry in enumerate(items) if isinstance(entry, dict) and entry.get("name") == item), None)
        path += f"[{position}]" if position is not None else ""
        rest = rest if position is not None else ""
    found = index.locate(config, path + rest)
    return abs(found[0]) if found else 0



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--github-output", action="store_true", help="print `stacks=<json>` for $GITHUB_OUTPUT")
    parser.add_argument("--examples", action="store_true", help="list the example stack files under examples/")
    parser.add_argument("root", nargs="?", type=Path, default=ROOT, help="the project directory")
    args = parser.parse_args(argv)
    if args.examples:
        examples = json.dumps(example_stacks(args.root))
        print(f"examples={examples}" if args.github_output else examples)
        return 0
    found = stacks(args.root)
    if not found:
        print(f"error: no Pulumi.<stack>.yaml in {str(args.root)!r}", file=sys.stderr)  # repr: on one line, no control
        return 2
    listing = json.dumps(found)
    print(f"stacks={listing}" if args.github_output else listing)
    return 0


if __name__ == "__main__":
    sys.exit(main())
