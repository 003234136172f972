"""Build hook: the wheel and the sdist ship the built web app (src/chatmem/web/dist).

The bundle is not committed (it is built from frontend/ and its lockfile). When a wheel or an sdist
is built from a checkout that has no bundle yet, this builds it with npm (Node 20.19+); a wheel
built from an sdist finds it already there, so installing a release never needs Node. Editable
installs (``pip install -e .``, what ``make`` does) skip this: ``make ui`` builds the bundle there.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class WebAppBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name == "wheel" and version == "editable":
            return
        root = Path(self.root)
        if (root / "src/chatmem/web/dist/index.html").is_file():
            return
        frontend = root / "frontend"
        if not (frontend / "package.json").is_file():
            raise RuntimeError("src/chatmem/web/dist is missing and there is no frontend/ to build")
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(
                "building chatmem from source needs Node 20.19+ and npm to build the web app "
                "(frontend/); release wheels and sdists already contain it"
            )
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=frontend, check=True)
        subprocess.run([npm, "run", "build"], cwd=frontend, check=True)
