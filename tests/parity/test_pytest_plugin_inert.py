"""The ``pytest11`` plugin is inert in a project that does not use ``memquill.testing``.

pytest loads every installed ``pytest11`` plugin in every project of the environment, so a
project that merely has memquill installed runs here, in a pytest subprocess of its own: the
plugin is loaded, yet memquill is never imported, no marker is added, and a skipped test stays
skipped. The same project with a ``ParitySuite`` subclass gets the guard.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

UNRELATED = """
import sys

import pytest


def test_the_plugin_is_loaded_but_imports_nothing_of_memquill(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("memquill")
    assert [name for name in sys.modules if name.split(".")[0] == "memquill"] == []


@pytest.mark.skip(reason="skipped on purpose")
def test_a_skip_stays_a_skip():
    raise AssertionError("never runs")
"""

PARITY = """
import pytest
from memquill.testing._runner import CoreHarness
from memquill.testing import ParitySuite


class Skipping(CoreHarness):
    def call(self, name, arguments):
        pytest.skip("not supported here")


class TestSkipping(ParitySuite):
    def harness_factory(self):
        return Skipping
"""


def run_pytest(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "MEMQUILL_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *arguments],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def project(tmp_path: Path, tests: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    # Its own config, strict like many projects: an unknown marker would be an error.
    ini = "[pytest]\naddopts = --strict-markers\nasyncio_default_fixture_loop_scope = function\n"
    (root / "pytest.ini").write_text(ini, "utf-8")
    (root / "test_unrelated.py").write_text(textwrap.dedent(tests), "utf-8")
    return root


def test_a_project_without_memquill_testing_sees_no_difference(tmp_path: Path) -> None:
    root = project(tmp_path, UNRELATED)
    done = run_pytest(root, "-q", "-rs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout
    assert "SKIPPED [1] test_unrelated.py:" in done.stdout
    assert ": skipped on purpose" in done.stdout
    markers = run_pytest(root, "--markers")
    assert markers.returncode == 0 and "memquill" not in markers.stdout
    # Switched off, the project runs the same way.
    off = run_pytest(root, "-q", "-rs", "-p", "no:memquill")
    assert off.returncode == 1  # has_plugin("memquill") is now false: the plugin was real
    assert "1 failed, 1 skipped" in off.stdout


def test_a_project_with_a_parity_suite_gets_the_skip_guard(tmp_path: Path) -> None:
    root = project(tmp_path, PARITY)
    done = run_pytest(root, "-q", "-m", "memquill_parity", "-k", "search-no-result")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "a parity test was skipped" in done.stdout
    assert "1 failed" in done.stdout
