"""``examples/langchain_agent.py`` runs offline and leaves the corrected fact on disk."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "langchain_agent.py"


def test_the_offline_agent_example_remembers_searches_and_corrects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = runpy.run_path(str(EXAMPLE), run_name="langchain_agent_example")
    example["main"](["--workspace", str(tmp_path)])
    out = capsys.readouterr().out

    assert out.count("--- tool [success]") == 3
    assert "memory_update({'id': " in out
    assert out.rstrip().endswith("Deploys happen on Wednesdays.")
    assert "--- ai\nNoted: deploys now happen on Wednesdays." in out
    records = (tmp_path / "memory" / "records.md").read_text("utf-8")
    assert records.count('"status":"active"') == 1
    assert records.count('"status":"superseded"') == 1
