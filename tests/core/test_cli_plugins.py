"""``memquill plugins``: built-in detectors, installed adapters, and load failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.core.plugin_helpers import DEMO_DISTRIBUTION, DEMO_VERSION, write_distribution

from memquill.cli import main
from memquill.plugins._manager import DISABLE_AUTOLOAD_ENV, PLUGIN_NAME as BUILTIN
from memquill.store._secrets import BUILTIN_DETECTORS

RUN_CLI = "import sys; from memquill.cli import main; sys.exit(main(sys.argv[1:]))"


def memquill(
    site: Path | None, *args: str, disable: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``memquill`` in a child process with ``site`` (a plugin folder) on its path."""
    env = {key: value for key, value in os.environ.items() if key != DISABLE_AUTOLOAD_ENV}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    if disable:
        env[DISABLE_AUTOLOAD_ENV] = "1"
    return subprocess.run(
        [sys.executable, "-c", RUN_CLI, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_json_lists_builtin_detectors_the_installed_adapter_and_failures(tmp_path: Path) -> None:
    site = write_distribution(tmp_path / "site")
    done = memquill(site, "plugins", "--json")
    assert done.returncode == 1, done.stderr  # a plugin failed to load: worth a status
    data = json.loads(done.stdout)

    detectors = [(d["name"], d["plugin"]) for d in data["secret_detectors"]]
    for detector in BUILTIN_DETECTORS:
        assert (detector.name, BUILTIN) in detectors
    assert ("tmp_demo_key", "tmp-demo") in detectors

    assert {
        "name": "tmp-demo",
        "framework": "Demo framework",
        "distribution": DEMO_DISTRIBUTION,
        "plugin": "tmp-demo",
    } in data["adapters"]
    assert [a["name"] for a in data["adapters"]] == sorted(a["name"] for a in data["adapters"])
    assert {"name": "tmp-demo", "distribution": DEMO_DISTRIBUTION, "version": DEMO_VERSION} in (
        data["plugins"]
    )

    failures = {f["plugin"]: f["message"] for f in data["failures"]}
    assert failures["tmp-broken"] == (
        "ModuleNotFoundError: No module named 'memquill_tmp_no_such_dependency'"
    )
    assert "tmp-unknown-hook" in failures


def test_text_names_each_adapter_detector_and_failure(tmp_path: Path) -> None:
    site = write_distribution(tmp_path / "site")
    done = memquill(site, "plugins")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert f"  tmp-demo  ({DEMO_DISTRIBUTION} {DEMO_VERSION})" in lines
    assert (
        f"  tmp-demo  framework Demo framework, distribution {DEMO_DISTRIBUTION} (plugin tmp-demo)"
        in lines
    )
    assert "  tmp_demo_key  (plugin tmp-demo)" in lines
    assert f"  {BUILTIN_DETECTORS[0].name}  (plugin {BUILTIN})" in lines
    assert (
        "  tmp-broken: ModuleNotFoundError: No module named 'memquill_tmp_no_such_dependency'"
        in lines
    )


def test_autoload_disabled_shows_only_the_builtins_and_succeeds(tmp_path: Path) -> None:
    site = write_distribution(tmp_path / "site")
    done = memquill(site, "plugins", "--json", disable=True)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [p["name"] for p in data["plugins"]] == [BUILTIN]
    assert data["adapters"] == []
    assert [d["name"] for d in data["secret_detectors"]] == [d.name for d in BUILTIN_DETECTORS]
    assert data["failures"] == []


def test_in_process_text_output_without_plugins(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, "1")
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"plugins (1):\n  {BUILTIN}  (memquill ")
    assert "adapters (0):\n  (none installed)\n" in out
    assert f"secret detectors ({len(BUILTIN_DETECTORS)}):\n" in out
    assert "failures" not in out
