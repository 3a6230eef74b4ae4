"""Entry point the Pulumi CLI runs: `python -u -m pulumi.policy ENGINE_ADDRESS .` inside policies/.

There `sys.path[0]` is this folder, not the repository root, so the root goes on the path first and
the rules import as `policies.*`, exactly as they do from the root (`python -m policies.check`).
Constructing PolicyPack starts the Analyzer, prints its port and never returns.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack

from policies.pack import PACK_NAME, build_policies

PolicyPack(name=PACK_NAME, policies=build_policies(), enforcement_level=EnforcementLevel.MANDATORY)
