"""The README's command-line block works when pasted in order, as it says.

The block is read from ``README.md`` (so the test follows the README, not a copy of it) and run
by ``bash -e`` in a fresh home whose ``~/notes`` holds a note, as a reader's shell after the
Quickstart: no ``memquill`` on ``PATH`` until the README's activation line (the clone's
``.venv``) runs. Every command must succeed, and the facts end as the block says.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memquill import RecordStore

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _path_without_memquill() -> str:
    """``PATH`` without the folders that hold a ``memquill`` command."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(f for f in folders if f and not (Path(f) / "memquill").exists())


def _section_blocks() -> list[str]:
    text = README.read_text("utf-8")
    section = text[text.index("\n## The command line\n") :]
    return re.findall(r"```sh\n(.*?)\n```", section, re.DOTALL)


def activation_block() -> str:
    """The first ``sh`` block under ``## The command line``: putting ``memquill`` on PATH."""
    return _section_blocks()[0]


def command_block() -> str:
    """The second ``sh`` block under ``## The command line``: the commands to paste."""
    return _section_blocks()[1]


def test_the_reader_is_told_to_activate_the_clone_s_environment() -> None:
    block = activation_block()
    assert block.startswith("source /path/to/memquill/.venv/bin/activate"), block
    assert len([line for line in block.splitlines() if line.strip()]) == 1


def test_the_block_is_the_one_people_paste() -> None:
    block = command_block()
    lines = [line for line in block.splitlines() if line.strip()]
    assert lines[0].startswith("export MEMQUILL_WORKSPACE=~/notes")
    assert all(line.startswith(("export ", "memquill ")) for line in lines)
    # Nothing to fill in: no placeholder ids or revisions.
    assert not re.search(r"--revision|\b[0-9a-f]{8}\b", block)
    assert "memquill update deploy/day" in block and "memquill forget deploy/day" in block


def test_the_readme_command_block_runs_in_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = home / "notes"
    notes.mkdir(parents=True)
    (notes / "memory.md").write_text("# Long-term memory\n\n- Deploys go out from main.\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMQUILL_", "XDG_"))}
    env.pop("VIRTUAL_ENV", None)
    # As a reader's shell after the Quickstart: no memquill on PATH until they activate.
    env.update(HOME=str(home), PATH=_path_without_memquill(), MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1")
    venv = ROOT / ".venv"
    if Path(sys.prefix).resolve() != venv.resolve():
        pytest.skip("the tests run outside the clone's .venv, which the README activates")
    activate = activation_block().replace("/path/to/memquill", str(ROOT))
    script = f"! command -v memquill\n{activate}\n{command_block()}"
    done = subprocess.run(
        ["bash", "-e", "-u", "-o", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert done.stderr == ""
    store = RecordStore(notes)
    snapshot = store.snapshot()
    # Remembered, corrected twice, forgotten: three versions, all tombstones, no key left.
    assert [record.status for record in snapshot.records] == ["revoked"] * 3
    assert snapshot.keyed() == ()
    assert b"deploy" not in (notes / "memory" / "records.md").read_bytes()
    assert (cwd / "records.md").read_bytes() == store.export()
    assert "Deploys happen on Tuesdays" in done.stdout  # search and get found it
    assert "healthy" in done.stdout
    assert "saved " in done.stdout and "plugins (" in done.stdout  # remember and plugins spoke
