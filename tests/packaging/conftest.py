"""The built distributions under test: CI's own build, or one made here on demand.

``.ci/run`` builds the four sdists and wheels once and points ``MEMQUILL_DIST_DIR`` at them, so
these tests check the very files a release would upload. Without it (a developer running
``uv run pytest -m packaging``), they are built into a temporary folder with ``uv build``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MEMQUILL_DIST_DIR")
    if given:
        return Path(given).resolve()
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "run under `uv run` (which sets UV), or set MEMQUILL_DIST_DIR to built files"
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [uv, "build", "--all-packages", "--quiet", "--out-dir", str(out)],
        cwd=ROOT,
        check=True,
        timeout=600,
    )
    return out
