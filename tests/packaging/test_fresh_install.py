"""A user's first minutes: ``memquill-langchain`` (or ``memquill-anthropic``) alone from the
wheels, then the README's example.

A fresh virtualenv (the standard library's ``venv``, its own pip) installs only
``memquill-langchain`` with the README's own ``pip install --find-links`` line, run in a shell
with the virtualenv activated (its ``bin`` first on ``PATH``) and the wheels' folder swapped for
the built files (everything else comes from the package index), and runs the LangChain example
exactly as the repository README and the package's own README show it, with the workspace path
swapped for a temporary folder. Another installs only ``memquill-anthropic`` by the same line
(its distribution named instead) and runs the memory-tool example of the docs page and both
READMEs, with ``ANTHROPIC_BASE_URL`` pointing at a scripted Messages API on 127.0.0.1 (no
network).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.adapters.anthropic.anthropic_helpers import (
    EXAMPLE_PLACEHOLDER,
    EXAMPLES,
    check_example_run,
    example_code,
    example_env,
    example_replies,
)
from tests.adapters.anthropic.scripted_api import ScriptedMessagesAPI
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


def fresh_venv(dist_dir: Path, root: Path, distribution: str) -> Path:
    """A virtualenv at ``root`` holding ``distribution`` and what pip pulled in for it."""
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
        [
            "bash",
            "-c",
            line.replace(WHEELS, str(dist_dir)).replace(" memquill-langchain", f" {distribution}"),
        ],
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


@pytest.fixture(scope="module")
def venv(dist_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding ``memquill-langchain`` and what pip pulled in for it, nothing else."""
    return fresh_venv(dist_dir, tmp_path_factory.mktemp("fresh") / "venv", "memquill-langchain")


@pytest.fixture(scope="module")
def anthropic_venv(dist_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding ``memquill-anthropic`` and what pip pulled in for it, nothing else."""
    root = tmp_path_factory.mktemp("fresh-anthropic") / "venv"
    return fresh_venv(dist_dir, root, "memquill-anthropic")


@pytest.fixture(scope="module")
def pydantic_ai_venv(dist_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding ``memquill-pydantic-ai`` and what pip pulled in for it, nothing else."""
    root = tmp_path_factory.mktemp("fresh-pydantic-ai") / "venv"
    return fresh_venv(dist_dir, root, "memquill-pydantic-ai")


@pytest.fixture(scope="module")
def openai_agents_venv(dist_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding ``memquill-openai-agents`` and what pip pulled in for it."""
    root = tmp_path_factory.mktemp("fresh-openai-agents") / "venv"
    return fresh_venv(dist_dir, root, "memquill-openai-agents")


def run(
    venv: Path, *argv: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("MEMQUILL_", "VIRTUAL_ENV"))}
    return subprocess.run(
        [str(venv / "bin" / argv[0]), *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env or {**kept, "HOME": str(cwd)},
        check=False,
    )


def installed_names(venv: Path, cwd: Path) -> set[str]:
    listed = run(venv, "python", "-m", "pip", "list", "--format", "json", cwd=cwd)
    return {entry["name"].lower() for entry in json.loads(listed.stdout)}


def installed_core(venv: Path, cwd: Path) -> bytes:
    found = run(venv, "python", "-c", "import memquill; print(memquill.__file__)", cwd=cwd)
    return Path(found.stdout.strip()).read_bytes()


def test_only_the_langchain_adapter_and_its_needs_are_installed(venv: Path, tmp_path: Path) -> None:
    names = installed_names(venv, tmp_path)
    assert {"memquill", "memquill-langchain", "langchain-core"} <= names
    assert not names & {
        "langchain",
        "memquill-mcp",
        "memquill-llamaindex",
        "memquill-anthropic",
        "mcp",
        "pytest",
    }
    # The installed core is the one just built from this tree, not a namesake from an index.
    core = (ROOT / "packages/core/src/memquill/__init__.py").read_bytes()
    assert installed_core(venv, tmp_path) == core


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


def test_only_the_anthropic_adapter_and_its_needs_are_installed(
    anthropic_venv: Path, tmp_path: Path
) -> None:
    names = installed_names(anthropic_venv, tmp_path)
    assert {"memquill", "memquill-anthropic", "anthropic"} <= names
    assert not names & {"langchain-core", "memquill-mcp", "memquill-langchain", "mcp", "pytest"}
    core = (ROOT / "packages/core/src/memquill/__init__.py").read_bytes()
    assert installed_core(anthropic_venv, tmp_path) == core


@pytest.mark.parametrize(("file", "heading"), EXAMPLES)
def test_the_memory_tool_example_runs_in_the_fresh_install(
    anthropic_venv: Path, tmp_path: Path, file: str, heading: str
) -> None:
    workspace = tmp_path / "notes"
    workspace.mkdir()
    code = example_code(ROOT, file, heading)
    script = tmp_path / "example.py"
    script.write_text(code.replace(EXAMPLE_PLACEHOLDER, str(workspace)), "utf-8")
    with ScriptedMessagesAPI(example_replies()) as api:
        done = run(
            anthropic_venv, "python", str(script), cwd=tmp_path, env=example_env(tmp_path, api.url)
        )
    assert done.returncode == 0, done.stderr
    check_example_run(api, done.stdout, workspace)


def test_the_demo_runs_the_installed_anthropic_adapter(
    anthropic_venv: Path, tmp_path: Path
) -> None:
    done = run(anthropic_venv, "memquill", "demo", "--adapter", "anthropic", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  anthropic  identical to the core" in done.stdout


def test_only_the_pydantic_ai_adapter_and_its_needs_are_installed(
    pydantic_ai_venv: Path, tmp_path: Path
) -> None:
    names = installed_names(pydantic_ai_venv, tmp_path)
    assert {"memquill", "memquill-pydantic-ai", "pydantic-ai-slim"} <= names
    assert not names & {"memquill-langchain", "memquill-llamaindex", "memquill-mcp", "openai"}


def test_the_pydantic_ai_readme_example_runs_in_the_fresh_venv(
    pydantic_ai_venv: Path, tmp_path: Path
) -> None:
    script = tmp_path / "example.py"
    script.write_text(
        langchain_example(ROOT / "packages" / "pydantic_ai_plugin" / "README.md", "## Install"),
        "utf-8",
    )
    done = run(pydantic_ai_venv, "python", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Noted: oat milk." in done.stdout and "key:prefs/coffee" in done.stdout


def test_the_demo_runs_the_installed_pydantic_ai_adapter(
    pydantic_ai_venv: Path, tmp_path: Path
) -> None:
    done = run(pydantic_ai_venv, "memquill", "demo", "--adapter", "pydantic-ai", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  pydantic-ai  identical to the core" in done.stdout


def test_only_the_openai_agents_adapter_and_its_needs_are_installed(
    openai_agents_venv: Path, tmp_path: Path
) -> None:
    names = installed_names(openai_agents_venv, tmp_path)
    assert {"memquill", "memquill-openai-agents", "openai-agents"} <= names
    assert not names & {"memquill-langchain", "memquill-llamaindex", "memquill-pydantic-ai"}


def test_the_openai_agents_readme_example_runs_in_the_fresh_venv(
    openai_agents_venv: Path, tmp_path: Path
) -> None:
    script = tmp_path / "example.py"
    readme = ROOT / "packages" / "openai_agents_plugin" / "README.md"
    script.write_text(langchain_example(readme, "## Install"), "utf-8")
    done = run(openai_agents_venv, "python", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Noted: oat milk." in done.stdout and "key:prefs/coffee" in done.stdout


def test_the_demo_runs_the_installed_openai_agents_adapter(
    openai_agents_venv: Path, tmp_path: Path
) -> None:
    done = run(openai_agents_venv, "memquill", "demo", "--adapter", "openai-agents", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  openai-agents  identical to the core" in done.stdout
