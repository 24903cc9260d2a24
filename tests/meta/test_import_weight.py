"""What importing memquill loads: only what the caller uses (never a time: benchmarks/ has those).

``import memquill`` must not load model assistance, extraction, the management page or the
validation models, and a keyword search through a session must not load model assistance or
extraction either; ``memquill --version`` answers before any subcommand is imported. Each is
checked in a fresh interpreter, by the modules it holds afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("memquill.enhance", "memquill.lifecycle", "memquill.manage", "memquill.cli.demo")
NOT_FOR_IMPORT = (*HEAVY, "memquill.query", "memquill.store", "memquill.tools", "pydantic")


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def under(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_import_memquill_loads_no_layer() -> None:
    modules = loaded_after("import memquill")
    assert under(modules, NOT_FOR_IMPORT) == []
    assert "memquill" in modules


@pytest.mark.parametrize(
    "code",
    [
        "import memquill_langchain",
        "import memquill_llamaindex",
        "import memquill_mcp",
        "from memquill.plugins import hookimpl, lazy_exports",
    ],
)
def test_an_adapter_package_loads_no_layer_until_used(code: str) -> None:
    assert under(loaded_after(code), NOT_FOR_IMPORT) == []


def test_a_keyword_search_loads_no_model_assistance(tmp_path: object) -> None:
    code = (
        "import os, tempfile, memquill\n"
        "root = tempfile.mkdtemp()\n"
        "open(os.path.join(root, 'a.md'), 'w').write('pierogi with farmer cheese')\n"
        "os.environ['MEMQUILL_INDEX_DIR'] = os.path.join(root, '.index')\n"
        "session = memquill.open_session(root, 'chat-1', access='read')\n"
        "text = memquill.MemoryToolset(session).call('memory_search', {'query': 'pierogi'}).text\n"
        "assert 'a.md' in text, text\n"
    )
    modules = loaded_after(code)
    assert "memquill.index" in modules  # the search did run through the index
    assert under(modules, HEAVY) == []


def test_the_version_loads_no_subcommand() -> None:
    code = "from memquill.cli import main\nassert main(['--version']) == 0\n"
    modules = loaded_after(code)
    assert under(modules, (*NOT_FOR_IMPORT, "memquill.cli.context", "memquill.cli.query")) == []


def test_an_index_worker_loads_only_what_analysis_needs() -> None:
    # A build's worker runs ``python -m memquill.index._worker``; the lazy facades of
    # ``memquill``, ``store``, ``query`` and ``index`` keep it from loading the rest.
    modules = loaded_after("import memquill.index._worker")
    answering = ("memquill.index._search_index", "memquill.query._engine", "memquill.store._store")
    assert under(modules, (*HEAVY, *answering, "memquill.tools", "pydantic")) == []
