"""The agent example and the example in ``docs/adapters/llamaindex.md`` run offline."""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from tests.adapters.llamaindex.llamaindex_helpers import AGENT_WARNINGS, NO_NETWORK

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "llamaindex_agent.py"
DOC = ROOT / "docs" / "adapters" / "llamaindex.md"


@pytest.mark.filterwarnings(AGENT_WARNINGS)
def test_the_agent_example_remembers_searches_and_corrects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = runpy.run_path(str(EXAMPLE), run_name="llamaindex_agent_example")
    example["main"](["--workspace", str(tmp_path)])
    out = capsys.readouterr().out

    assert out.count(") [ok]\n") == 3
    assert "--- memory_update({'id': " in out
    assert "--- answer\nNoted: deploys now happen on Wednesdays." in out
    records = (tmp_path / "memory" / "records.md").read_text("utf-8")
    assert records.count('"status":"active"') == 1
    assert records.count('"status":"superseded"') == 1
    system = out.split("--- the next conversation's system message\n", 1)[1]
    assert system.startswith("<memory>\n<memquill>\n## Active Memory\n")
    assert "Deploys happen on Wednesdays." in system
    assert "Deploys happen on Tuesdays." not in system


def test_the_documented_example_runs(tmp_path: Path) -> None:
    # The first Python block of the page is complete and offline; it writes where it runs. It
    # runs as a reader would run it: in its own interpreter with default warning filters (its
    # Memory leaves LlamaIndex's in-memory SQLite connection to the garbage collector).
    code = re.search(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.DOTALL)
    assert code is not None
    done = subprocess.run(
        [sys.executable, "-c", NO_NETWORK + code.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert '"status":"saved"' in done.stdout
    assert "The user drinks oolong tea every morning." in done.stdout
    assert "<memory>\n<memquill>\n## Long-term Memory\n" in done.stdout
    assert (tmp_path / "notes" / "memory" / "records.md").exists()
