"""Regenerate the documentation pages that are generated from one declaration in the code.

    python -m tools.docs            write every generated page
    python -m tools.docs --check    write nothing; exit 1 naming each page that is stale

Each generated page comes from a function in the module that owns its facts (the config-key
declarations, the rule registry, the typed outputs contract). GENERATED lists them explicitly: a
generator whose module or function is not there yet (a branch not merged) is reported and skipped,
and the tests skip its page with that reason, so adding one is one line here. A function returns the
page's text, or for a `.json` page a JSON-ready object (written with indent 2 and a final newline).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class GeneratedPage:
    #: the page, relative to the repository root
    page: str
    #: `module:function`, the function taking no arguments
    generator: str

    def function(self) -> Callable[[], Any] | None:
        module_name, function_name = self.generator.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and (module_name == error.name or module_name.startswith(error.name + ".")):
                return None  # not on this branch yet; any other missing import is a real error
            raise
        function = getattr(module, function_name, None)
        return function if callable(function) else None

    def render(self) -> str | None:
        """The page's text, or None when the generator is not available."""
        function = self.function()
        if function is None:
            return None
        content = function()
        if self.page.endswith(".json") and not isinstance(content, str):
            return json.dumps(content, indent=2) + "\n"
        text = str(content)
        return text if text.endswith("\n") else text + "\n"


#: One line per generated page (the helpers who own the facts list theirs in the project's
#: GENERATORS notes; the lead completes this list when merging their branches).
GENERATED: tuple[GeneratedPage, ...] = (
    GeneratedPage("docs/configuration.md", "components.platform_settings:reference_markdown"),
    GeneratedPage("docs/policies.md", "gpu_aks_policies.rules:policies_markdown"),
    GeneratedPage("docs/contract.md", "gpu_aks_policies.contract:contract_markdown"),
    GeneratedPage("docs/contract.schema.json", "gpu_aks_policies.contract:json_schema"),
    GeneratedPage("docs/workloads.md", "gpu_aks_policies.workloads.registry:workloads_markdown"),
)


def stale_pages(pages: Iterable[GeneratedPage] = GENERATED, root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(stale pages, pages whose generator is not available)."""
    return _staleness([(page, page.render()) for page in pages], root)


def _staleness(rendered: Iterable[tuple[GeneratedPage, str | None]], root: Path) -> tuple[list[str], list[str]]:
    stale, unavailable = [], []
    for page, text in rendered:
        if text is None:
            unavailable.append(f"{page.page} <- {page.generator}")
        elif not (root / page.page).is_file() or (root / page.page).read_text() != text:
            stale.append(page.page)
    return stale, unavailable


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated page is stale")
    args = parser.parse_args(list(argv) if argv is not None else None)
    rendered = [(page, page.render()) for page in GENERATED]  # each generator runs once
    stale, unavailable = _staleness(rendered, ROOT)
    for line in unavailable:
        print(f"skipped (generator not available on this branch): {line}", file=sys.stderr)
    if args.check:
        for name in stale:
            print(f"stale: {name} (run `python -m tools.docs`)", file=sys.stderr)
        return 1 if stale else 0
    for page, text in rendered:
        if text is not None and page.page in stale:
            (ROOT / page.page).write_text(text)
            print(f"wrote {page.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
