"""Same workspace, same bytes: twice, across processes, cache warm or cold, any creation order."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.core.query_helpers import engine, remember, write

FILES = {
    "notes/alpha.md": "---\ntags: [project]\n---\n# Alpha launch\nThe launch of alpha is set.\n",
    "notes/beta.md": "# Beta\nlaunch plans for beta and the launch party\n",
    "memory/daily/2026-09-20.md": "launch review with the team\n",
    "memory/daily/2026-09-21.md": "launch checklist [[notes/alpha]]\n",
    "Memory.md": "We launch on Mondays.\n",
    "zh/会议.md": "# 会议\n发布 launch 计划\n",
}
QUERIES = ("launch", "launch plans", "发布", "alpha beta team")


def outputs(root: Path, *, cache: bool) -> list[str]:
    query = engine(root, cache=cache)
    texts = [query.search(q, limit=20).text for q in QUERIES]
    texts += [query.search("launch", tags=["project"]).text, query.recent().text]
    texts.append(query.get("notes/beta.md").text)
    return texts


def build(root: Path, order: list[str]) -> None:
    for relative in order:
        write(root, relative, FILES[relative])


def test_twice_and_warm_equals_cold(tmp_path: Path) -> None:
    build(tmp_path, list(FILES))
    remember(tmp_path, "launch fact from a record")
    warm = engine(tmp_path)
    first = [warm.search(q, limit=20).text for q in QUERIES]
    second = [warm.search(q, limit=20).text for q in QUERIES]
    cold = [engine(tmp_path, cache=False).search(q, limit=20).text for q in QUERIES]
    assert first == second == cold
    assert outputs(tmp_path, cache=True) == outputs(tmp_path, cache=False)


def test_creation_order_does_not_matter(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    build(a, list(FILES))
    build(b, list(reversed(FILES)))
    assert outputs(a, cache=False) == outputs(b, cache=False)


def test_two_processes_print_the_same_bytes(tmp_path: Path) -> None:
    build(tmp_path, list(FILES))
    remember(tmp_path, "launch fact from a record")
    script = (
        "import json, sys\n"
        "from datetime import UTC, datetime\n"
        "from memquill import MemorySession, MemoryToolset\n"
        "now = datetime(2026, 9, 22, 12, tzinfo=UTC)\n"
        "tools = MemoryToolset(MemorySession(sys.argv[1], access='read', now=lambda: now))\n"
        "call = lambda x: tools.call('memory_search', {'query': x, 'limit': 20}).text\n"
        f"print(json.dumps([call(x) for x in {list(QUERIES)!r}]))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)],
            check=True,
            capture_output=True,
            timeout=120,
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    in_process = [engine(tmp_path).search(q, limit=20).text for q in QUERIES]
    assert json.loads(runs[0]) == in_process
