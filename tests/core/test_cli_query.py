"""``memquill search|get|recent``: the tool text verbatim, JSON on request, exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.core.query_helpers import ReadTools, write

from memquill.cli import main
from memquill.query import MemoryQuery


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


def test_plain_output_is_the_tool_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "notes.md", "# Meeting\n\nThe selected color is cerulean.\n[[Other]]")
    write(tmp_path, "memory.md", "long-term")
    query = ReadTools(MemoryQuery(tmp_path))
    ws = ("--workspace", str(tmp_path))
    assert run(capsys, *ws, "search", "cerulean") == (0, query.search("cerulean").text + "\n")
    assert run(capsys, *ws, "get", "notes.md", "--lines", "3:4") == (
        0,
        query.get("notes.md", line_start=3, line_end=4).text + "\n",
    )
    assert run(capsys, *ws, "recent", "--days", "1") == (0, query.recent(days=1).text + "\n")
    assert run(capsys, *ws, "get", "notes.md", "--lines", "3")[1].endswith("cerulean.\n")


def test_json_is_the_structured_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "notes.md", "kayak trip\n[[Lake]]")
    status, out = run(capsys, "--workspace", str(tmp_path), "search", "kayak", "--json")
    data = json.loads(out)
    assert status == 0 and data["hits"][0]["path"] == "notes.md" and data["error"] is None
    status, out = run(capsys, "get", "notes.md", "--json", "--workspace", str(tmp_path))
    assert json.loads(out)["links"] == ["Lake"]


def test_failures_print_the_failure_text_and_exit_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = ("--workspace", str(tmp_path))
    assert run(capsys, *ws, "get", "../x") == (
        20,
        "Memory read failed: Access denied: path is outside workspace.\n",
    )
    assert run(capsys, *ws, "get", "missing.md")[0] == 19
    status, out = run(capsys, *ws, "search", "x", "--limit", "21")
    assert status == 11 and out.startswith("Memory search failed: limit")
    status, out = run(capsys, *ws, "get", "notes.md", "--lines", "0:2")
    assert status == 11 and out.startswith("Memory read failed: line_start")
    with pytest.raises(SystemExit):
        main(["--workspace", str(tmp_path), "get", "x.md", "--lines", "a:b"])
    capsys.readouterr()
