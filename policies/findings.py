"""What every rule returns: `Finding`s (one verdict on one place), and the helpers the rules share to
write them (an undecided verdict, a YAML list in a fix). Below the rules: the pod rules
(`pod_rules.py`), the pool rules (`pool_rules.py`), the fit (`fit.py`) and the registry (`rules.py`)
import it. No Pulumi imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .podspecs import UndecidableError


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one place. `decided` is False when an unknown preview value hid the
    answer; `subject` names the resource a stack rule blames (empty for resource rules)."""

    policy: str
    path: str
    message: str
    decided: bool = True
    subject: str = ""


def undecided(policy: str, error: UndecidableError, subject: str = "") -> Finding:
    return Finding(policy, error.path, f"could not decide: {error}; the rule runs again on `pulumi up`",
                   decided=False, subject=subject)


def yaml_list(items: Iterable[Mapping[str, str]], indent: str) -> str:
    lines = []
    for item in items:
        first = True
        for key, value in item.items():
            lines.append(f"{indent}{'- ' if first else '  '}{key}: {value}")
            first = False
    return "\n".join(lines)


def dedupe(findings: list[Finding]) -> list[Finding]:
    # A rule finds at most one thing on most objects: hashing each frozen Finding only to learn that
    # cost a few percent of a check of thousands of small manifests.
    return findings if len(findings) < 2 else list(dict.fromkeys(findings))

