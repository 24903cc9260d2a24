"""The five distributions are releasable: license, metadata, one version, honest floors.

What the built wheels and sdists contain is checked in ``tests/packaging`` (run by CI on the
built files); this module checks the sources they are built from, in every test run.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

import memquill

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "memquill": "core",
    "memquill-adk": "adk_plugin",
    "memquill-anthropic": "anthropic_plugin",
    "memquill-langchain": "langchain_plugin",
    "memquill-llamaindex": "llamaindex_plugin",
    "memquill-mcp": "mcp_plugin",
    "memquill-openai-agents": "openai_agents_plugin",
    "memquill-pydantic-ai": "pydantic_ai_plugin",
}
ADAPTERS = {name: folder for name, folder in PACKAGES.items() if name != "memquill"}
DOC_PAGES = {
    "memquill-adk": "adk",
    "memquill-anthropic": "anthropic",
    "memquill-langchain": "langchain",
    "memquill-llamaindex": "llamaindex",
    "memquill-mcp": "mcp",
    "memquill-openai-agents": "openai-agents",
    "memquill-pydantic-ai": "pydantic-ai",
}


def pyproject(folder: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "packages" / folder / "pyproject.toml").read_text("utf-8"))


def dependencies(name: str) -> list[str]:
    """The requirements a distribution declares (an adapter's, besides its memquill pin)."""
    config = pyproject(PACKAGES[name])
    if name == "memquill":
        return config["project"]["dependencies"]
    return config["tool"]["hatch"]["metadata"]["hooks"]["custom"]["dependencies"]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_distribution_carries_the_license_and_full_metadata(name: str) -> None:
    folder = ROOT / "packages" / PACKAGES[name]
    project = pyproject(PACKAGES[name])["project"]
    assert project["name"] == name
    # Each package folder is its own build root, so it needs its own copy of the license.
    assert (folder / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    assert (project["license"], project["license-files"]) == ("MIT", ["LICENSE"])
    assert project["authors"] and project["keywords"] and project["description"]
    assert "Programming Language :: Python :: 3.11" in project["classifiers"]
    assert "Typing :: Typed" in project["classifiers"]
    # What is supported, as the README's "Platforms" says: Linux and macOS (the walk macOS
    # gets instead of inotify runs in CI with MEMQUILL_INDEX_WATCH=0), not Windows.
    systems = {c for c in project["classifiers"] if c.startswith("Operating System ::")}
    assert systems == {"Operating System :: POSIX :: Linux", "Operating System :: MacOS"}
    assert "Linux and macOS" in (ROOT / "README.md").read_text("utf-8").split("## Platforms")[1]
    assert (folder / "src" / name.replace("-", "_") / "py.typed").is_file()
    assert {"Homepage", "Repository", "Issues", "Changelog"} <= set(project["urls"])
    assert project["requires-python"] == ">=3.11"


@pytest.mark.parametrize("name", PACKAGES)
def test_every_distribution_has_a_readme_of_its_own(name: str) -> None:
    project = pyproject(PACKAGES[name])["project"]
    readme = (ROOT / "packages" / PACKAGES[name] / project["readme"]).read_text("utf-8")
    assert readme.startswith(f"# {name}\n")
    assert f"pip install {name}\n" in readme
    assert len(readme.splitlines()) >= 30, "a real description, not a pointer elsewhere"
    # PyPI shows it without the repository around it: links must be absolute.
    relative = re.findall(r"\]\((?!https://)([^)]+)\)", readme)
    assert relative == [], f"relative links break on the package index: {relative}"


def test_one_version_written_once_for_every_distribution() -> None:
    literals = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "packages").rglob("*.py")
        if re.search(r"^__version__ = ['\"]", path.read_text("utf-8"), re.MULTILINE)
    ]
    assert literals == ["packages/core/src/memquill/__init__.py"]
    core = pyproject("core")
    assert core["project"]["dynamic"] == ["version"]
    assert core["tool"]["hatch"]["version"]["path"] == "src/memquill/__init__.py"
    for folder in ADAPTERS.values():
        config = pyproject(folder)
        assert set(config["project"]["dynamic"]) == {"version", "dependencies"}
        assert config["tool"]["hatch"]["version"]["path"] == "../core/src/memquill/__init__.py"
    adapters = [importlib.import_module(name.replace("-", "_")) for name in ADAPTERS]
    assert {module.__version__ for module in adapters} == {memquill.__version__}


def test_the_adapters_pin_the_core_through_one_identical_build_hook() -> None:
    hooks = {
        (ROOT / "packages" / f / "hatch_build.py").read_text("utf-8") for f in ADAPTERS.values()
    }
    assert len(hooks) == 1
    (hook,) = hooks
    assert "f\"memquill=={metadata['version']}\"" in hook
    for name in ADAPTERS:
        assert not [r for r in dependencies(name) if r.startswith("memquill")], "the hook pins"


def test_the_changelog_has_the_current_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text("utf-8")
    assert "## [Unreleased]" in changelog
    assert f"## [{memquill.__version__}]" in changelog


@pytest.mark.parametrize("name", ADAPTERS)
def test_the_adapter_docs_state_the_declared_floor(name: str) -> None:
    framework = dependencies(name)[0]
    page = (ROOT / "docs" / "adapters" / f"{DOC_PAGES[name]}.md").read_text("utf-8")
    assert f"Requires `{framework}`" in page


@pytest.mark.parametrize("name", PACKAGES)
def test_every_floor_is_proven_by_the_lowest_versions_job(name: str) -> None:
    """Each requirement has a lower bound, and ``.ci/lowest`` installs the distribution."""
    script = (ROOT / ".ci" / "lowest").read_text("utf-8")
    assert f"packages/{PACKAGES[name]}" in script
    for requirement in dependencies(name):
        assert re.search(r">=\d", requirement), f"{name}: {requirement} has no floor"


def test_the_langgraph_extra_has_a_floor_its_page_states_and_the_lowest_job_proves() -> None:
    extras = pyproject("langchain_plugin")["project"]["optional-dependencies"]
    (requirement,) = extras["langgraph"]
    assert re.search(r">=\d", requirement), requirement
    page = (ROOT / "docs" / "adapters" / "langgraph.md").read_text("utf-8")
    assert f"Requires `{requirement}`" in page
    script = (ROOT / ".ci" / "lowest").read_text("utf-8")
    assert '"packages/langchain_plugin[langgraph]"' in script
