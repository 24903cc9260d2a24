"""``memquill search|get|recent``: the tool text verbatim, JSON on request, exit statuses."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.core.cli_helpers import cli_env
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


def test_failures_print_the_coded_error_on_stderr_and_exit_with_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = ("--workspace", str(tmp_path))

    def failing(*argv: str) -> tuple[int, str, str]:
        status = main([*ws, *argv])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    assert failing("get", "../x") == (
        20,
        "",
        "error[access_denied]: Access denied: path is outside workspace.\n",
    )
    assert failing("get", "missing.md") == (19, "", "error[source]: Memory source not found.\n")
    status, out, err = failing("search", "x", "--limit", "21")
    assert (status, out) == (11, "") and err.startswith("error[invalid]: limit")
    status, out, err = failing("get", "notes.md", "--lines", "0:2")
    assert (status, out) == (11, "") and err.startswith("error[invalid]: line_start")
    # Under --json the structured result comes first, with its code; the line still follows.
    status, out, err = failing("get", "missing.md", "--json")
    assert status == 19 and json.loads(out)["error_code"] == "source"
    assert err == "error[source]: Memory source not found.\n"
    with pytest.raises(SystemExit):
        main(["--workspace", str(tmp_path), "get", "x.md", "--lines", "a:b"])


_COLLECTING = """
import gc, sys
from memquill.cli import main
status = main()
print(f"collecting={gc.isenabled()}", file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.parametrize(
    ("argv", "collecting"),
    [
        (("search", "kayak"), False),
        (("get", "notes.md"), False),
        (("recent",), False),
        (("list",), True),
    ],
)
def test_a_one_answer_process_collects_no_cycles(
    tmp_path: Path, argv: tuple[str, ...], collecting: bool
) -> None:
    # The process's own command line only: a caller of ``main(argv)`` keeps its collector.
    workspace = tmp_path / "ws"
    write(workspace, "notes.md", "kayak trip")
    env = cli_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _COLLECTING, "--workspace", str(workspace), *argv],
        capture_output=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().endswith(f"collecting={collecting}\n")
    main(["--workspace", str(workspace), "search", "kayak"])
    assert gc.isenabled()
