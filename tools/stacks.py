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
import re
import sys
from pathlib import Path

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
