"""What the built sdists and wheels carry: the license, the metadata, one version, the pin."""

from __future__ import annotations

import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest

import memquill

# Building and installing the distributions in fresh environments takes minutes of its own.
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[2]
VERSION = memquill.__version__
FOLDERS = {
    "memquill": "core",
    "memquill-adk": "adk_plugin",
    "memquill-anthropic": "anthropic_plugin",
    "memquill-langchain": "langchain_plugin",
    "memquill-llamaindex": "llamaindex_plugin",
    "memquill-mcp": "mcp_plugin",
    "memquill-openai-agents": "openai_agents_plugin",
    "memquill-pydantic-ai": "pydantic_ai_plugin",
}
LICENSE = (ROOT / "LICENSE").read_bytes()


def stem(name: str) -> str:
    return f"{name.replace('-', '_')}-{VERSION}"


def wheel(dist_dir: Path, name: str) -> zipfile.ZipFile:
    return zipfile.ZipFile(dist_dir / f"{stem(name)}-py3-none-any.whl")


def sdist(dist_dir: Path, name: str) -> tarfile.TarFile:
    return tarfile.open(dist_dir / f"{stem(name)}.tar.gz")


def parse(text: bytes) -> Message:
    return Parser().parsestr(text.decode("utf-8"))


def test_exactly_the_listed_distributions_are_built(dist_dir: Path) -> None:
    suffixes = ("-py3-none-any.whl", ".tar.gz")
    expected = {f"{stem(name)}{suffix}" for name in FOLDERS for suffix in suffixes}
    assert {path.name for path in dist_dir.iterdir() if path.suffix in {".whl", ".gz"}} == expected


@pytest.mark.parametrize("name", FOLDERS)
def test_the_wheel_carries_the_license_and_the_metadata(dist_dir: Path, name: str) -> None:
    with wheel(dist_dir, name) as archive:
        info = f"{stem(name)}.dist-info"
        assert archive.read(f"{info}/licenses/LICENSE") == LICENSE
        metadata = parse(archive.read(f"{info}/METADATA"))
        files = archive.namelist()
    expect_metadata(metadata, name)
    assert f"{name.replace('-', '_')}/py.typed" in files
    # Only the package itself: no tests, benchmarks or build helpers.
    assert not [f for f in files if f.startswith(("tests/", "benchmarks/", "hatch_build"))]


@pytest.mark.parametrize("name", FOLDERS)
def test_the_sdist_carries_the_license_and_the_metadata(dist_dir: Path, name: str) -> None:
    with sdist(dist_dir, name) as archive:
        license_file = archive.extractfile(f"{stem(name)}/LICENSE")
        pkg_info = archive.extractfile(f"{stem(name)}/PKG-INFO")
        assert license_file is not None and pkg_info is not None
        assert license_file.read() == LICENSE
        expect_metadata(parse(pkg_info.read()), name)


def expect_metadata(metadata: Message, name: str) -> None:
    assert (metadata["Name"], metadata["Version"]) == (name, VERSION)
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Author"] == "The memquill authors"
    assert metadata["Requires-Python"] == ">=3.11"
    assert "Programming Language :: Python :: 3.11" in metadata.get_all("Classifier", [])
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL", []))
    assert {"Homepage", "Repository", "Issues", "Changelog"} <= set(urls)
    # The long description is the package's own README, rendered as Markdown.
    assert metadata["Description-Content-Type"] == "text/markdown"
    readme = (ROOT / "packages" / FOLDERS[name] / "README.md").read_text("utf-8")
    assert metadata.get_payload() == readme
    requires = metadata.get_all("Requires-Dist", [])
    if name != "memquill":
        assert f"memquill=={VERSION}" in requires, requires


def test_the_core_wheel_registers_the_inert_pytest_plugin(dist_dir: Path) -> None:
    with wheel(dist_dir, "memquill") as archive:
        entry_points = archive.read(f"{stem('memquill')}.dist-info/entry_points.txt").decode()
        assert "_memquill_pytest/__init__.py" in archive.namelist()
    assert "[pytest11]\nmemquill = _memquill_pytest\n" in entry_points
    assert "[console_scripts]\nmemquill = memquill.cli:main\n" in entry_points
