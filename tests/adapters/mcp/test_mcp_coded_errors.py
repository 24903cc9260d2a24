"""``memquill-mcp`` fails as ``memquill`` does: ``error[<code>]: <message>`` on stderr, the
code's exit status, nothing changed (issue 21, Why 11; issue 23, item 3).

Real server processes, as a host starts them; the command's own half of each rule is
``tests/core/test_cli_coded_errors.py``.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from tests.core.cli_helpers import MEMQUILL_MCP, cli_env, coded_failure, run_cli, without_driver

from memquill.errors import Messages


def test_an_empty_workspace_option_is_invalid(tmp_path: Path) -> None:
    done = run_cli(cli_env(tmp_path), "--workspace", "", program=MEMQUILL_MCP)
    coded_failure(done, "invalid", Messages.WORKSPACE_EMPTY)
    assert not (tmp_path / "data").exists(), "the default workspace was not used"


def test_the_server_without_the_driver_names_its_postgres_extra(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    url = "postgresql://memquill:s3cret-pw@127.0.0.1:9/memquill"
    without = without_driver(cli_env(tmp_path), tmp_path)
    done = run_cli(without, "--workspace", str(workspace), "--store", url, program=MEMQUILL_MCP)
    err = coded_failure(
        done,
        "storage",
        "The PostgreSQL store needs the optional extra: install memquill-mcp[postgres].",
    )
    assert "s3cret-pw" not in err


def test_the_distribution_declares_the_postgres_extra() -> None:
    metadata = importlib.metadata.metadata("memquill-mcp")
    assert "postgres" in (metadata.get_all("Provides-Extra") or [])
    requires = metadata.get_all("Requires-Dist") or []
    assert any(r.startswith("memquill[postgres]") and "extra == 'postgres'" in r for r in requires)
