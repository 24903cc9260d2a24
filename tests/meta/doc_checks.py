"""Checks of the docs blocks that show data: each against what memquill really produces.

``…`` in a shown text stands for any text; in a JSON object, a ``"…"`` key for more keys and a
``"…"`` (or ``"<…>"``) value for any value, and a list shows one example item.
"""

from __future__ import annotations

import builtins
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from tests.doc_blocks import ROOT

import memquill.errors
from memquill import MemoryToolset, open_session
from memquill.plugins._manager import ENTRY_POINT_GROUP
from memquill.tools import CATALOGUE

READ_TOOLS = tuple(spec.name for spec in CATALOGUE if spec.access == "read")
WRITE_TOOLS = tuple(spec.name for spec in CATALOGUE if spec.access != "read")
ALL_TOOLS = tuple(spec.name for spec in CATALOGUE)


def _wildcard(shown: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(part) for part in shown.split("…")), re.DOTALL)


def same_shape(shown: Any, real: Any, where: str = "$") -> None:
    """``real`` has the shape ``shown`` documents (see the module docstring)."""
    if isinstance(shown, dict):
        assert isinstance(real, dict), f"{where}: {real!r} is not an object"
        keys = {key for key in shown if key != "…"}
        missing = keys - set(real)
        assert not missing, f"{where}: the doc shows keys memquill does not write: {missing}"
        if "…" not in shown:
            extra = set(real) - keys
            assert not extra, f"{where}: memquill writes keys the doc does not show: {extra}"
        for key in keys:
            same_shape(shown[key], real[key], f"{where}.{key}")
    elif isinstance(shown, list) and shown and isinstance(real, list) and real:
        for item in real:
            same_shape(shown[0], item, f"{where}[]")
    elif isinstance(shown, str) and ("…" in shown or shown.startswith("<")):
        return
    elif isinstance(shown, str) and "|" in shown and isinstance(real, str):
        assert real in shown.split("|"), f"{where}: {real!r} is none of {shown!r}"
    elif shown is not None and not isinstance(shown, list) and not isinstance(shown, bool):
        assert type(real) is type(shown), f"{where}: {real!r} is not like {shown!r}"


def _toolset(tmp: Path) -> MemoryToolset:
    workspace = tmp / "notes"
    workspace.mkdir(exist_ok=True)
    return MemoryToolset(open_session(workspace, session_id="chat-42"))


def write_results(text: str, tmp: Path) -> None:
    """tools.md: an ``update`` receipt and an ``update`` refused for a stale revision (by key:
    an old id with a stale revision is ``not_found`` naming the current version instead)."""
    tools = _toolset(tmp)
    fact = {"content": "The user takes coffee black.", "key": "prefs/coffee"}
    saved = json.loads(tools.call("memory_remember", fact).text)
    update = {"key": "prefs/coffee", "expected_revision": saved["recordRevision"]}
    receipt = tools.call("memory_update", {**update, "content": "The user takes oat milk."})
    stale = tools.call("memory_update", {**update, "content": "The user takes tea."})
    assert stale.is_error
    shown_receipt, shown_error = text.strip().splitlines()
    assert _wildcard(shown_receipt).fullmatch(receipt.text), receipt.text
    assert shown_error == stale.text


def conflict_error(text: str, tmp: Path) -> None:
    """errors.md: the exact text of a stale update."""
    write_results(
        '{"type":"memory_write_receipt",…}\n' + text.strip(),
        tmp,
    )


def read_permissions(text: str, tmp: Path) -> None:
    """mcp.md: Claude Code's allow list names exactly the read tools of the server ``memquill``."""
    allowed = json.loads(text)["permissions"]["allow"]
    assert allowed == [f"mcp__memquill__{name}" for name in READ_TOOLS]


def remote_host_config(text: str, tmp: Path) -> None:
    """mcp.md: the URL config names the server as the remote example allows it, with the token
    as a bearer header (the server and a client with that header run in the block before)."""
    (server,) = json.loads(text)["mcpServers"].values()
    assert server["type"] == "http" and server["url"] == "http://memory.lan:8765/mcp"
    assert server["headers"] == {"Authorization": "Bearer <the token>"}
    page = (ROOT / "docs" / "adapters" / "mcp.md").read_text("utf-8")
    assert "--allowed-host memory.lan:8765" in page


def manage_state(text: str, tmp: Path) -> None:
    """manage.md: the shape of ``GET /api/memory``."""
    from starlette.testclient import TestClient

    from memquill.manage import Backend, JobsView, create_app

    class Jobs:
        def status(self) -> JobsView:
            return JobsView((), pending_turns=1)

        def resume(self) -> None:
            return None

    workspace = tmp / "notes"
    workspace.mkdir()
    backend = Backend.open(open_session(workspace), jobs=Jobs())
    app = create_app(backend, token="doc-token", port=8765)
    origin = "http://127.0.0.1:8765"
    bearer = {"Authorization": "Bearer doc-token"}
    with TestClient(app, base_url=origin, headers=bearer) as client:
        fact = {"action": "remember", "content": "Deploys are on Tuesdays.", "idempotencyKey": "k1"}
        fact["expectedRevision"] = client.get("/api/memory").json()["revision"]
        saved = client.post("/api/memory", json=fact, headers={"Origin": origin})
        assert saved.status_code == 200, saved.text  # added on the page: source "manual"
        state = client.get("/api/memory").json()
    shown = json.loads(text)
    shown["enhancement"]["jobs"] = []  # no job here; the jobs are the page's own table
    state["enhancement"]["jobs"] = []
    same_shape(shown, state)


def ledger(text: str, tmp: Path) -> None:
    """extraction.md: the shape of ``.assistant/memory-jobs.json`` after one batch."""
    from tests.meta.doc_fakes import QuotingModel

    from memquill.lifecycle import CommittedTurn, Extraction, RecordedMessages, SourceMessage

    workspace = tmp / "notes"
    workspace.mkdir()
    source = RecordedMessages()
    extraction = Extraction(open_session(workspace), source, model=QuotingModel())
    for n in range(4):
        source.record(
            "t1",
            [
                SourceMessage(f"u{n}", "user", f"I moved to town {n}."),
                SourceMessage(f"a{n}", "assistant", "Noted."),
            ],
        )
        extraction.record(CommittedTurn("t1", f"u{n}", f"a{n}", user_text=f"I moved to town {n}."))
    assert extraction.wait(60)
    real = json.loads((workspace / ".assistant" / "memory-jobs.json").read_text("utf-8"))
    shown = json.loads(text)
    real_job, shown_job = real["jobs"][0], shown["jobs"][0]
    assert set(shown) == set(real), (set(shown), set(real))
    assert set(shown_job) <= set(real_job), set(shown_job) - set(real_job)
    assert set(shown_job["sources"][0]) == set(real_job["sources"][0])


def record_layout(text: str, tmp: Path) -> None:
    """record-format.md: a ``records.md`` of two facts, ``⏎`` marking each line end."""
    workspace = tmp / "notes"
    workspace.mkdir()
    tools = MemoryToolset(open_session(workspace, session_id="chat-42"))
    for fact in ("I prefer dark roast coffee", "Deploys are on Tuesdays."):
        tools.call("memory_remember", {"content": fact})
    real = (workspace / "memory" / "records.md").read_text("utf-8")
    shown = text.rstrip("\n").replace("⏎\n", "\n").replace("⏎", "\n")
    assert _wildcard(shown).fullmatch(real), real


def error_tree(text: str, tmp: Path) -> None:
    """errors.md: each class's parent is the one it hangs under, and its code is the one shown."""
    parents: list[tuple[int, type]] = []
    for line in text.splitlines():
        found = re.match(r"^([│├└─ ]*)(\w+)\s*(.*)$", line)
        assert found, line
        depth = len(found.group(1)) // 4
        cls = getattr(memquill.errors, found.group(2))
        parents = [(d, c) for d, c in parents if d < depth]
        if parents:
            assert cls.__bases__[0] is parents[-1][1], f"{cls.__name__} is not under it"
        words = found.group(3).split()
        if "code" in vars(cls) and words and re.fullmatch(r"[a-z_]+", words[0]):
            assert cls.code == words[0], f"{cls.__name__}.code is {cls.code!r}"
        for builtin in re.findall(r"also an? (\w+)", found.group(3)):
            assert issubclass(cls, getattr(builtins, builtin)), f"{cls.__name__}: {builtin}"
        parents.append((depth, cls))


def entry_point(text: str, tmp: Path) -> None:
    """plugins.md: the group the adapters use and memquill loads."""
    groups = tomllib.loads(text)["project"]["entry-points"]
    assert list(groups) == [ENTRY_POINT_GROUP]
    adapter = tomllib.loads((ROOT / "packages" / "mcp_plugin" / "pyproject.toml").read_text())
    assert ENTRY_POINT_GROUP in adapter["project"]["entry-points"]


def recency_formula(text: str, tmp: Path) -> None:
    """ranking.md: the weight and half-life shown are the ranking's defaults."""
    from memquill.query._rank import RankParams

    params = RankParams()
    assert f"w = {params.recency_weight:g}, h = {params.half_life_days:g} days" in text


def partial_search(text: str, tmp: Path) -> None:
    """search-index.md: the warning a search starts with when its budgets skip files."""
    tools = _toolset(tmp)
    notes = tmp / "notes"
    for name in ("huge.md", "also-huge.md"):
        (notes / name).write_text("deploy " * 80_000, "utf-8")  # over 512 KiB
    deep = notes.joinpath(*(f"d{n}" for n in range(1, 10)))
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("deploy checklist", "utf-8")
    (notes / "memory.md").write_text("Deploys are on Tuesdays.\n", "utf-8")
    result = tools.call("memory_search", {"query": "deploy"})
    assert result.text.startswith(text.strip() + "\n"), result.text[:300]


def index_on_a_full_disk(text: str, tmp: Path) -> None:
    """search-index.md: a search's first line when the index folder's disk is full (SQLite's
    own "database or disk is full", made as tests/core/test_cli_index_faults.py makes it)."""
    import pytest

    from memquill.index import _db

    prepare = _db.IndexDatabase._prepare  # pyright: ignore[reportPrivateUsage]

    def full_disk(self: _db.IndexDatabase) -> None:
        prepare(self)
        if self.path is not None:
            pages = self.connection.execute("PRAGMA page_count").fetchone()[0]
            self.connection.execute(f"PRAGMA max_page_count = {int(pages) + 1}")

    notes = tmp / "notes"
    notes.mkdir()
    for number in range(40):
        # Words of its own in each note: the index must outgrow the pages SQLite starts with.
        own = " ".join(f"w{number}x{word}" for word in range(200))
        (notes / f"n{number}.md").write_text(f"note {number} about tides " * 200 + own)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMQUILL_INDEX_DIR", str(tmp / "index"))
        patch.setattr(_db.IndexDatabase, "_prepare", full_disk)
        result = _toolset(tmp).call("memory_search", {"query": "tides"})
    assert result.text.startswith(text.strip() + "\n"), result.text[:300]


def recent_facts(text: str, tmp: Path) -> None:
    """tools.md: the ``## Active Memory`` part of ``memory_recent``, a fact from a tool and an
    older one from the command line (``<id>`` and ``<16 hex>`` stand for the ids and revisions)."""
    from memquill.cli import main

    tools = _toolset(tmp)
    assert main(["--workspace", str(tmp / "notes"), "remember", "Deploys happen on Tuesdays."]) == 0
    tools.call("memory_remember", {"content": "The user prefers tea over coffee."})
    real = tools.call("memory_recent", {}).text
    real = re.sub(r"memory/records/[0-9a-f-]{36}\.md", "memory/records/<id>.md", real)
    real = re.sub(r"revision:[0-9a-f]{16}\)", "revision:<16 hex>)", real)
    assert real == text.rstrip("\n"), real
