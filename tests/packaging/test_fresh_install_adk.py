"""``memquill-adk`` alone from the wheels in a fresh virtualenv, then its documented example.

The virtualenv installs only ``memquill-adk`` with the README's ``pip install --find-links``
line (the distribution named instead; google-adk and the rest from the package index), runs
the memory-service example of the docs page and both READMEs with the root folder swapped for a
temporary one (no model, no network beyond the install), and ``memquill demo`` finds the
installed ``adk`` adapter.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.packaging.test_fresh_install import fresh_venv, installed_core, installed_names, run

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = '"/srv/memory"'
EXAMPLES = [
    ("docs/adapters/adk.md", "## The memory service"),
    ("README.md", "### Google ADK (`memquill-adk`)"),
    ("packages/adk_plugin/README.md", "## Install and use"),
]


@pytest.fixture(scope="module")
def adk_venv(dist_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding ``memquill-adk`` and what pip pulled in for it, nothing else."""
    return fresh_venv(dist_dir, tmp_path_factory.mktemp("fresh-adk") / "venv", "memquill-adk")


def test_only_the_adk_adapter_and_its_needs_are_installed(adk_venv: Path, tmp_path: Path) -> None:
    names = installed_names(adk_venv, tmp_path)
    assert {"memquill", "memquill-adk", "google-adk"} <= names
    assert not names & {"langchain-core", "memquill-mcp", "memquill-langchain", "pytest"}
    core = (ROOT / "packages/core/src/memquill/__init__.py").read_bytes()
    assert installed_core(adk_venv, tmp_path) == core


@pytest.mark.parametrize(("file", "heading"), EXAMPLES)
def test_the_memory_service_example_runs_in_the_fresh_install(
    adk_venv: Path, tmp_path: Path, file: str, heading: str
) -> None:
    content = (ROOT / file).read_text("utf-8")
    match = re.compile(r"```python\n(.*?)```", re.DOTALL).search(content, content.index(heading))
    assert match is not None and PLACEHOLDER in match.group(1)
    memory = tmp_path / "memory"
    memory.mkdir()
    script = tmp_path / "example.py"
    script.write_text(match.group(1).replace(PLACEHOLDER, repr(str(memory))), "utf-8")
    done = run(adk_venv, "python", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Ana prefers window seats.\n0\n"
    assert (memory / "travel" / "ana" / "memory" / "records.md").is_file()


def test_the_demo_runs_the_installed_adk_adapter(adk_venv: Path, tmp_path: Path) -> None:
    done = run(adk_venv, "memquill", "demo", "--adapter", "adk", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  adk   identical to the core" in done.stdout
