"""``memquill demo``, the README's main job: every installed adapter, one verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
import textwrap
from pathlib import Path

MEMQUILL = str(Path(sysconfig.get_path("scripts")) / "memquill")
ADAPTERS = {
    "adk",
    "anthropic",
    "langchain",
    "llamaindex",
    "mcp",
    "mcp-stdio",
    "openai-agents",
    "pydantic-ai",
}

# A third-party adapter that drives the core's tools but changes one character of one answer.
OFF_BY_ONE = """
from dataclasses import replace

from memquill.plugins import AdapterSpec
from memquill import hookimpl
from memquill.testing._runner import CoreHarness


class OffByOne(CoreHarness):
    def call(self, name, arguments):
        result = super().call(name, arguments)
        if name == "memory_recent":
            result = replace(result, text=result.text.replace("Team", "Tean", 1))
        return result


@hookimpl
def memquill_register_adapters(register):
    register(AdapterSpec("off-by-one", "A test double", "memquill-off-by-one", OffByOne))
"""


def _demo(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMQUILL, "demo", *arguments],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_the_demo_runs_every_adapter_and_they_agree(tmp_path: Path) -> None:
    done = _demo("--json", "--workspace", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    names = {adapter["name"] for adapter in report["adapters"]}
    assert names == {"core", *ADAPTERS}
    for adapter in report["adapters"]:
        assert adapter["error"] is None and adapter["identical_to_core"] is True
        tools = [call["tool"] for call in adapter["calls"]]
        assert tools == [
            "memory_remember",
            "memory_search",
            "memory_get",
            "memory_update",
            "memory_forget",
            "memory_recent",
        ]
        receipts = [
            json.loads(call["text"])
            for call in adapter["calls"]
            if "remember" in call["tool"] or "update" in call["tool"] or "forget" in call["tool"]
        ]
        assert [receipt["status"] for receipt in receipts] == ["saved", "saved", "saved"]
        # Forgotten means gone from the file, in every adapter's own workspace.
        records = (tmp_path / adapter["name"] / "memory" / "records.md").read_text("utf-8")
        assert "deploys" not in records and records.count('"status":"revoked"') == 2


def test_the_text_report_ends_with_a_parity_verdict() -> None:
    done = _demo("--adapter", "langchain")
    assert done.returncode == 0, done.stderr
    assert "memory_update" in done.stdout
    assert "  langchain  identical to the core" in done.stdout
    assert done.stdout.startswith("memquill demo: one scenario, the core and 1 adapter, ")
    assert done.stdout.rstrip().endswith("Parity: the adapter returned exactly the core's results.")


def test_an_adapter_that_is_not_installed_fails_and_says_how_to_install_it() -> None:
    # With plugin loading off, memquill-langchain is as good as not installed.
    done = _demo("--adapter", "langchain", env={"MEMQUILL_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert (done.returncode, done.stdout) == (11, "")
    assert done.stderr.startswith(
        "error[invalid]: adapter 'langchain' is not installed (installed: none). "
        "Install with: pip install memquill-langchain "
    )
    unknown = _demo("--adapter", "mcp", "--adapter", "autogen", "--json")
    assert (unknown.returncode, unknown.stdout) == (11, "")
    assert unknown.stderr == (
        "error[invalid]: adapter 'autogen' is not installed (installed: adk, anthropic, langchain, "
        "llamaindex, mcp, mcp-stdio, openai-agents, pydantic-ai). memquill ships the adk, "
        "anthropic, langchain, llamaindex, mcp, mcp-stdio, openai-agents and pydantic-ai adapters; "
        "others "
        "come from third-party plugins (`memquill plugins` lists what is installed).\n"
    )


def test_with_no_adapter_installed_the_core_runs_alone() -> None:
    done = _demo(env={"MEMQUILL_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("memquill demo: one scenario, the core and no adapter, ")
    assert done.stdout.rstrip().endswith(
        "Parity: no adapter is installed; the core ran the scenario on its own."
    )


def test_an_adapter_that_differs_fails_the_demo(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "memquill_off_by_one.py").write_text(textwrap.dedent(OFF_BY_ONE), "utf-8")
    dist = site / "memquill_off_by_one-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: memquill-off-by-one\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text("[memquill]\noff-by-one = memquill_off_by_one\n")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    done = _demo("--adapter", "off-by-one", env={"PYTHONPATH": path})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "off-by-one  DIFFERS from the core: step 6 (memory_recent)" in done.stdout
    assert "Parity: FAILED" in done.stdout
