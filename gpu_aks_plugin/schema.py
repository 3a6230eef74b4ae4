"""The package schema snapshot: `gpu_aks_plugin/schema.json`, what `GetSchema` returns, committed so a
change to GpuCluster's public interface shows in review (tests/test_component_package.py fails until
it is regenerated). Regenerate the generated inputs module and the snapshot with one command:

    venv/bin/python -m gpu_aks_plugin.schema
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCHEMA_SNAPSHOT = Path(__file__).resolve().parent / "schema.json"
REPOSITORY = SCHEMA_SNAPSHOT.parent.parent


def package_schema() -> dict[str, object]:
    """The schema the plugin serves, built in this process."""
    # Imported here: `main` writes the generated module this imports first.
    from gpu_aks_plugin.provider import GpuAksProvider, package_version

    schema = GpuAksProvider(package_version()).schema
    assert schema is not None
    return dict(json.loads(schema))


def main() -> int:
    from components import gpu_cluster_codegen

    gpu_cluster_codegen.main()
    # A fresh interpreter, so the schema is built from the module just written.
    code = ("import json; from gpu_aks_plugin.schema import SCHEMA_SNAPSHOT, package_schema; "
            "SCHEMA_SNAPSHOT.write_text(json.dumps(package_schema(), indent=2, sort_keys=True) + '\\n')")
    subprocess.run([sys.executable, "-c", code], cwd=REPOSITORY, check=True)
    print(f"wrote {SCHEMA_SNAPSHOT.relative_to(REPOSITORY)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
