"""A user's first minutes: ``memquill-langchain`` alone from the wheels, then the README's example.

A fresh virtualenv (the standard library's ``venv``, its own pip) installs only
``memquill-langchain`` with the README's own ``pip install --find-links`` line, run in a shell
with the virtualenv activated (its ``bin`` first on ``PATH``) and the wheels' folder swapped for
the built files (everything else comes from the package index), and runs the LangChain example
exactly as the repository README and the package's own README show it, with the workspace path
swapped for a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.doc_blocks import find

# Building and installing the distributions in fresh environments takes minutes of its own.
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "/home/me/notes"
WHEELS = "/path/to/memquill/dist"
FACT = "The user prefers tea over coffee."


def langchain_example(readme: Path, section: str) -> str:
    """The first Python block after ``section`` in ``readme``."""
    text = readme.read_text("utf-8")
    start = text.index(section)
    match = re.compile(r"```python\n(.*?)```", re.DOTALL).search(text, start)
    assert match is not None, f"{readme}: no Python block after {section!r}"
    return match.group(1)


@pytest.fixture(scope="module")
def venv(dist_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding ``memquill-langchain`` and what pip pulled in for it, nothing else."""
    root = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    line = install_line()
    assert WHEELS in line
    activated = {
        **{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
        "VIRTUAL_ENV": str(root),
        "PATH": os.pathsep.join([str(root / "bin"), os.environ.get("PATH", "")]),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    subprocess.run(
        ["bash", "-c", line.replace(WHEELS, str(dist_dir))],
        check=True,
        timeout=600,
        env=activated,
        stdout=subprocess.DEVNULL,
    )
    return root


def install_line() -> str:
    """The README's ``pip install --find-links …`` line (section Install)."""
    block = find("README.md", lambda b: b.heading == "Install" and b.lang == "sh", "the install")
    (line,) = [line for line in block.text.splitlines() if line.startswith("pip install ")]
    return line


def run(venv: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMQUILL_", "VIRTUAL_ENV"))}
    return subprocess.run(
        [str(venv / "bin" / argv[0]), *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "HOME": str(cwd)},
        check=False,
    )


def test_only_the_langchain_adapter_and_its_needs_are_installed(venv: Path, tmp_path: Path) -> None:
    listed = run(venv, "python", "-m", "pip", "list", "--format", "json", cwd=tmp_path)
    names = {entry["name"].lower() for entry in json.loads(listed.stdout)}
    assert {"memquill", "memquill-langchain", "langchain-core"} <= names
    assert not names & {"langchain", "memquill-mcp", "memquill-llamaindex", "mcp", "pytest"}
    # The installed core is the one just built from this tree, not a namesake from an index.
    found = run(venv, "python", "-c", "import memquill; print(memquill.__file__)", cwd=tmp_path)
    installed = Path(found.stdout.strip()).read_bytes()
    assert installed == (ROOT / "packages/core/src/memquill/__init__.py").read_bytes()


@pytest.mark.parametrize(
    ("readme", "section"),
    [("README.md", "### LangChain"), ("packages/langchain_plugin/README.md", "## Use")],
)
def test_the_readme_langchain_example_runs(
    venv: Path, tmp_path: Path, readme: str, section: str
) -> None:
    workspace = tmp_path / "notes"
    workspace.mkdir()
    code = langchain_example(ROOT / readme, section)
    assert PLACEHOLDER in code
    script = tmp_path / "example.py"
    script.write_text(code.replace(PLACEHOLDER, str(workspace)), "utf-8")
    done = run(venv, "python", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    receipt, *search, last = done.stdout.splitlines()
    assert json.loads(receipt)["status"] == "saved"
    assert search[0].startswith("1. [memory/records/") and FACT in search
    assert last == FACT
    assert FACT in (workspace / "memory" / "records.md").read_text("utf-8")


def test_the_demo_runs_the_installed_adapter_and_names_the_missing_ones(
    venv: Path, tmp_path: Path
) -> None:
    done = run(venv, "memquill", "demo", "--adapter", "langchain", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("Parity: the adapter returned exactly the core's results.")
    missing = run(venv, "memquill", "demo", "--adapter", "mcp", cwd=tmp_path)
    assert missing.returncode == 11
    assert missing.stderr == (
        "error[invalid]: adapter 'mcp' is not installed (installed: langchain). "
        "Install with: pip install memquill-mcp\n"
    )
