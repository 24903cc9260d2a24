"""What importing memquill loads: only what the caller uses (never a time: benchmarks/ has those).

``import memquill`` must not load model assistance, extraction, the management page or the
validation models, and a keyword search through a session must not load model assistance or
extraction either; ``memquill --version`` answers before any subcommand is imported; a search
of a current workspace from the shell loads none of the store's write side and builds only the
models it validates with. Each is checked in a fresh interpreter, by the modules it holds
afterwards (or the models it built).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

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
        "import memquill.plugins\nfrom memquill import hookimpl",
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


# What a search never needs: the plugin manager (it guards writes), the write path and its
# models, the item store, the bindings, an event loop, and any framework.
NOT_FOR_SEARCH = (
    *HEAVY,
    "pluggy",
    "memquill.plugins._manager",
    "memquill.plugins._adapters",
    "memquill.tools._writes",
    "memquill.tools._catalogue",
    "memquill.items._store",
    "memquill.tools._binding",
    "asyncio",
    "langchain_core",
    "llama_index",
    "mcp",
)
# What the import of a session and its tools never needs: no model, store or index either.
NOT_FOR_TOOLS_IMPORT = (
    *NOT_FOR_SEARCH,
    "pydantic",
    "portalocker",
    "sqlite3",
    "logging",  # only a session that loads plugins may have a failure to log
    "memquill.query",
    "memquill.store",
    "memquill.index",
)


def test_importing_a_session_and_its_tools_loads_no_model_store_or_plugin() -> None:
    modules = loaded_after("from memquill import open_session, MemoryToolset")
    assert under(modules, NOT_FOR_TOOLS_IMPORT) == []


def test_a_search_from_the_shell_loads_only_what_a_search_needs(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("pierogi with farmer cheese\n", encoding="utf-8")
    code = (
        "import os, sys\n"
        "from memquill.cli import main\n"
        f"os.environ['MEMQUILL_INDEX_DIR'] = {str(tmp_path / '.index')!r}\n"
        f"assert main(['--workspace', {str(tmp_path)!r}, 'search', 'pierogi']) == 0\n"
    )
    modules = loaded_after(code)
    assert "memquill.index" in modules  # the search did run through the index
    assert "memquill.cli.records" not in modules  # another subcommand's module
    assert under(modules, NOT_FOR_SEARCH) == []
    # One answer, then the process exits: it watches no folder for later changes.
    assert "memquill.index._watch" not in modules


def test_every_subcommand_is_found_in_the_module_that_registers_it() -> None:
    import argparse
    import importlib

    from memquill import cli

    registered: dict[str, str] = {}
    for name in cli._COMMAND_MODULES:  # pyright: ignore[reportPrivateUsage]
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"memquill.cli.{name}").register(subparsers)
        registered.update(dict.fromkeys(subparsers.choices, name))
    assert registered == cli._COMMANDS  # pyright: ignore[reportPrivateUsage]


# What reading a current index never needs: the build (analysis, batches, worker processes),
# the writer and its blocks, and the vectors file (for notes read or gone).
INDEX_WRITE_SIDE = (
    "memquill.index._build",
    "memquill.index._writer",
    "memquill.index._analysis",
    "memquill.index._vectors_file",
)


def _search_code(root: Path, query: str) -> str:
    """A fresh process's search through the index (no racy window: every note is settled)."""
    return (
        "from memquill.index._search_index import IndexSearcher\n"
        "from memquill.query import MemoryQuery, SearchArgs\n"
        f"searcher = IndexSearcher({str(root / '.index')!r}, notice=None, watch=False,"
        " racy_seconds=0)\n"
        f"engine = MemoryQuery({str(root)!r}, searcher=searcher)\n"
        f"hits = engine.search(SearchArgs(query={query!r})).hits\n"
        "assert hits and hits[0].path == 'a.md', hits\n"
    )


def test_a_search_on_a_current_index_loads_no_index_write_side(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("pierogi with farmer cheese\n", encoding="utf-8")
    building = loaded_after(_search_code(tmp_path, "pierogi"))
    assert "memquill.index._writer" in building  # the first search built the index
    modules = loaded_after(_search_code(tmp_path, "cheese"))
    assert "memquill.index._search_index" in modules
    assert under(modules, INDEX_WRITE_SIDE) == []


# What reading a current workspace never needs: the store's write side (appends, corrections,
# imports, compaction's room, merges), its doctor and what only the doctor uses (diagnosis,
# repair, families, history), and the credential scanner that only writes run.
STORE_WRITE_SIDE = (
    "memquill.store._append",
    "memquill.store._edits",
    "memquill.store._hand_edits",
    "memquill.store._room",
    "memquill.store._merge",
    "memquill.store._doctor",
    "memquill.store._diagnose",
    "memquill.store._families",
    "memquill.store._secrets",
)


def _shell_search_code(root: Path, query: str) -> str:
    """``memquill search`` in a fresh process, as the command line runs it; its output must
    show the remembered fact (the store was read)."""
    return (
        "import contextlib, io, os\n"
        "from memquill.cli import main\n"
        f"os.environ['MEMQUILL_INDEX_DIR'] = {str(root / '.index')!r}\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    status = main(['--workspace', {str(root)!r}, 'search', {query!r}])\n"
        "assert status == 0 and 'source: memory-record' in out.getvalue(), out.getvalue()\n"
    )


def test_reading_a_current_workspace_from_the_shell_loads_no_store_write_side(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.md").write_text("pierogi with farmer cheese\n", encoding="utf-8")
    remember = (
        "from memquill.cli import main\n"
        f"assert main(['--workspace', {str(tmp_path)!r}, 'remember', 'pierogi are best fried',"
        " '--key', 'food/pierogi']) == 0\n"
    )
    assert "memquill.store._append" in loaded_after(remember)  # records.md is written
    # A note read within the index's racy window (2 s) of its last change is read again by
    # the next search; past it, the index built next is current for every later search.
    time.sleep(2.1)
    assert "memquill.index._writer" in loaded_after(_shell_search_code(tmp_path, "pierogi"))
    modules = loaded_after(_shell_search_code(tmp_path, "pierogi"))
    assert "memquill.store._store" in modules  # the search did read the store
    assert under(modules, INDEX_WRITE_SIDE) == []  # and the index was current
    assert under(modules, STORE_WRITE_SIDE) == []


# What a search from the shell never loads: it checks its arguments and shapes its answer
# without the validation models, and a read takes no lock (the lock library loads where one
# is taken).
NOT_FOR_SHELL_SEARCH = (
    "pydantic",
    "pydantic_core",
    "memquill.query._models",
    "portalocker",  # and with it ``importlib.metadata``
    "importlib.metadata",
    "logging",  # only a failure is logged
    "socket",  # the lock names its host when one is taken
    "tempfile",  # only a default workspace not created yet needs a stand-in
)


def test_a_search_from_the_shell_loads_no_validation_model(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("pierogi with farmer cheese\n", encoding="utf-8")
    code = (
        "import contextlib, io, os\n"
        "from memquill.cli import main\n"
        f"os.environ['MEMQUILL_INDEX_DIR'] = {str(tmp_path / '.index')!r}\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    status = main(['--workspace', {str(tmp_path)!r}, 'search', 'pierogi', '--json'])\n"
        'assert status == 0 and \'"path": "a.md"\' in out.getvalue(), out.getvalue()\n'
    )
    building = loaded_after(code)  # the first search builds the index, the second reads it
    assert "memquill.index._writer" in building
    reading = loaded_after(code)
    assert "memquill.index._search_index" in reading  # the search did run through the index
    assert under(building, NOT_FOR_SHELL_SEARCH) == []
    assert under(reading, NOT_FOR_SHELL_SEARCH) == []


def test_a_refused_search_from_the_shell_is_worded_by_the_tools_model(tmp_path: Path) -> None:
    # Only a refusal loads the argument model: its message is the tool's, word for word.
    code = (
        "import contextlib, io\n"
        "from memquill.cli import main\n"
        "err = io.StringIO()\n"
        "with contextlib.redirect_stderr(err):\n"
        f"    status = main(['--workspace', {str(tmp_path)!r}, 'search', 'x', '--limit', '21'])\n"
        "assert status == 11, status\n"
        "assert err.getvalue() == 'error[invalid]: limit: Input should be less than or equal to"
        " 20\\n', err.getvalue()\n"
    )
    assert "pydantic" in loaded_after(code)


def test_an_mcp_server_without_an_embedder_loads_no_semantic_recall(tmp_path: Path) -> None:
    # memquill-mcp's start-up is what a host waits for (benchmarks/mcp_ready.py): semantic
    # recall is opt-in (--embed), so a server without it never imports it.
    code = (
        "from memquill_mcp import cli\n"
        "from memquill_mcp.server import build_server\n"
        f"args = cli._parser().parse_args(['--workspace', {str(tmp_path)!r}])\n"
        "build_server(cli._session(args), write_only=False, derive_session_ids=True,\n"
        "             client_model=False, rerank_timeout=None)\n"
    )
    assert under(loaded_after(code), ("memquill.semantic",)) == []
