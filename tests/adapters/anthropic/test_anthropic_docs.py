"""The documented example runs as written: the docs page, the README and the package README.

Each copy runs in a subprocess of this environment with the workspace placeholder swapped for a
temporary folder, ``ANTHROPIC_BASE_URL`` pointing at a scripted Messages API on 127.0.0.1 and a
dummy key: the model views ``/memories``, creates ``/memories/preferences.md``, finds it with
``memory_search``, and replies. ``tests/packaging/test_fresh_install.py`` runs the same example
in a fresh virtualenv holding only ``memquill-anthropic``.
"""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[3]


def test_every_copy_of_the_example_is_the_same() -> None:
    copies = {example_code(ROOT, file, heading) for file, heading in EXAMPLES}
    assert len(copies) == 1


@pytest.mark.parametrize(("file", "heading"), EXAMPLES)
def test_the_example_runs_against_a_scripted_api(file: str, heading: str, tmp_path: Path) -> None:
    workspace = tmp_path / "notes"
    workspace.mkdir()
    code = example_code(ROOT, file, heading)
    assert EXAMPLE_PLACEHOLDER in code
    script = tmp_path / "example.py"
    script.write_text(code.replace(EXAMPLE_PLACEHOLDER, str(workspace)), "utf-8")
    with ScriptedMessagesAPI(example_replies()) as api:
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=example_env(tmp_path, api.url),
            check=False,
        )
    assert done.returncode == 0, done.stderr
    check_example_run(api, done.stdout, workspace)
