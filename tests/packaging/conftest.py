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


@pytest.fixture(scope="session")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of this repository as a clone has it: every tracked (or new, unignored) file as it
    is in the working tree, and nothing else: no ``.venv``, no build output, no caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    )
    target = tmp_path_factory.mktemp("clone") / "memquill"
    for name in filter(None, listed.stdout.decode("utf-8").split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not in a clone
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def uv_command() -> str:
    """The ``uv`` the tests run under (``uv run`` sets ``UV``), else the one on ``PATH``."""
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "run under `uv run` (which sets UV), or put uv on PATH"
    return uv
