"""The no-tool memory examples run offline: the agents remember what the user said."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from tests.adapters.llamaindex.llamaindex_helpers import AGENT_WARNINGS

from memquill import MemorySession
from memquill.lifecycle import job_status

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "langchain": ROOT / "examples" / "langchain_memory_agent.py",
    "llamaindex": ROOT / "examples" / "llamaindex_memory_agent.py",
}
FACTS = [
    'The user said: "I moved to Lisbon in March."',
    'The user said: "I work as a marine biologist."',
    'The user said: "My daughter Ana starts school in September."',
    'The user said: "I prefer short answers, by the way."',
]


@pytest.mark.filterwarnings(AGENT_WARNINGS)
@pytest.mark.parametrize("framework", EXAMPLES)
def test_the_agent_remembers_what_the_user_said_without_a_memory_tool(
    framework: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMQUILL_DISABLE_PLUGIN_AUTOLOAD", "1")
    example = runpy.run_path(str(EXAMPLES[framework]), run_name=f"{framework}_memory_example")
    example["main"](["--workspace", str(tmp_path)])
    out = capsys.readouterr().out

    records = MemorySession(tmp_path).store.snapshot().records
    assert [record.content for record in records] == FACTS
    assert {str(record.source["kind"]) for record in records} == {"conversation"}
    assert [job.status for job in job_status(tmp_path).jobs] == ["completed"]
    answer = out.split("user: Where do I live, and what is my job?\nagent: ")[1]
    assert "I moved to Lisbon in March." in answer and "marine biologist" in answer
    assert "memory_remember" not in out
