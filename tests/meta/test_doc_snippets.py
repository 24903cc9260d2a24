"""Every snippet of the README and ``docs/`` runs as it is written, or says why it cannot.

The blocks are read from the Markdown itself (``tests/doc_blocks.py``), so a doc edit is a test
edit. ``tests/meta/doc_snippets.py`` is the reviewed table of how each block is run; a block
missing from it, or an entry whose block is gone, fails the first test with the keys to add or
drop. Each doc's snippets share one reader's home (``~/notes`` and the rest, see
``tests/meta/snippet_shell.py``): its Python snippets run in one subprocess, its shell
snippets one after another, as a reader working down the page would.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from tests.doc_blocks import ROOT, Block, blocks, documentation
from tests.meta.doc_snippets import SPECS
from tests.meta.snippet_kinds import (
    Check,
    Elsewhere,
    McpConfig,
    NotRun,
    Python,
    Shell,
    Signature,
    Spec,
)
from tests.meta.snippet_shell import (
    CEILING,
    VENV_BIN,
    accepting,
    environment,
    free_port,
    make_home,
    printed_token,
    run_block,
    wait_for_log,
)

BLOCKS: dict[str, Block] = {b.key: b for doc in documentation() for b in blocks(doc)}
# The reader's placeholders in Python code and host configurations, and what runs instead.
NOTES = ("/home/me/notes", "/path/to/workspace", "/Users/me/notes")


def _keys(kind: type[Spec]) -> list[str]:
    return [key for key, spec in SPECS.items() if isinstance(spec, kind) and key in BLOCKS]


def _where(key: str) -> str:
    """A test id: where the block is (its key is in the failure message)."""
    return f"{BLOCKS[key].path}:{BLOCKS[key].line}"


def test_every_block_is_run_or_listed() -> None:
    new = sorted(set(BLOCKS) - set(SPECS))
    gone = sorted(set(SPECS) - set(BLOCKS))
    listed = {
        name: json.dumps(keys, indent=1, ensure_ascii=False)
        for name, keys in (("new", new), ("gone", gone))
    }
    assert not new and not gone, (
        "tests/meta/doc_snippets.py must name every block of the README and docs/ "
        f"(run it, or NotRun with the reason).\nNew blocks: {listed['new']}\n"
        f"Entries whose block is gone (edited or removed): {listed['gone']}"
    )


@pytest.mark.parametrize("key", _keys(Elsewhere) + _keys(NotRun), ids=_where)
def test_every_excuse_names_its_test_or_reason(key: str) -> None:
    spec = SPECS[key]
    if isinstance(spec, NotRun):
        assert len(spec.reason) > 20, "say why it cannot run here"
        return
    assert isinstance(spec, Elsewhere) and spec.tests
    for test in spec.tests:
        path, _, name = test.partition("::")
        source = (ROOT / path).read_text("utf-8")
        assert re.search(rf"^(async )?def {name}\(", source, re.MULTILINE), test


class Reader:
    """The readers of the docs, one per doc and kind of snippet, each with their own home.

    A doc's Python snippets share a home, and so do its shell snippets (never both: they would
    write into one workspace at the same time). Everything starts at once: the Python snippets
    of every doc in one subprocess (the frameworks load once), and each doc's shell snippets,
    in order, on a small pool beside it; the tests then collect the results.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.homes: dict[str, Path] = {}
        self.python: dict[str, dict[str, Any]] = {}
        self.shell: dict[str, Future[None]] = {}
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.runner: subprocess.Popen[str] | None = None

    def home(self, doc: str, kind: str) -> Path:
        name = re.sub(r"\W", "-", doc) + f"-{kind}"
        if name not in self.homes:
            self.homes[name] = make_home(self.root / name)
        return self.homes[name]

    def swap(self, text: str, home: Path) -> str:
        for placeholder in NOTES:
            text = text.replace(placeholder, str(home / "notes"))
        return text.replace("/srv/memory/", f"{home}/srv/memory/")

    def start(self) -> None:
        self._start_python()
        by_doc: dict[str, list[str]] = {}
        for key in _keys(Shell):
            by_doc.setdefault(BLOCKS[key].path, []).append(key)
        for doc, keys in by_doc.items():
            home = self.home(doc, "sh")
            previous: Future[None] | None = None
            for key in keys:  # in the doc's order, one after another
                previous = self.pool.submit(self._shell, key, home, previous)
                self.shell[key] = previous

    def stop(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        if self.runner is not None and self.runner.poll() is None:
            self.runner.kill()
            self.runner.communicate()

    @staticmethod
    def _shell(key: str, home: Path, previous: Future[None] | None) -> None:
        if previous is not None:
            with contextlib.suppress(BaseException):  # its own test reports it
                previous.result()
        spec = SPECS[key]
        assert isinstance(spec, Shell)
        run_block(BLOCKS[key], spec, home)

    def _start_python(self) -> None:
        jobs: list[dict[str, Any]] = []
        for key in _keys(Python):
            block, spec = BLOCKS[key], SPECS[key]
            assert isinstance(spec, Python)
            home = self.home(block.path, "py")
            (home / "srv" / "memory" / "ana").mkdir(parents=True, exist_ok=True)
            jobs.append(
                {
                    "key": key,
                    "home": str(home),
                    "prelude": self.swap(spec.prelude, home),
                    "code": self.swap(block.text, home),
                    "after": self.swap(spec.after, home),
                    "continues": spec.continues,
                    "serves": spec.serves,
                }
            )
        jobs_file = self.root / "jobs.json"
        jobs_file.write_text(json.dumps(jobs), "utf-8")
        self.runner = subprocess.Popen(
            [sys.executable, "-m", "tests.meta.snippet_runner", str(jobs_file), str(self.results)],
            cwd=self.root,
            env={**environment(self.root, {}), "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )

    @property
    def results(self) -> Path:
        return self.root / "results.json"

    def python_result(self, key: str) -> dict[str, Any]:
        if not self.python:
            assert self.runner is not None
            output, _ = self.runner.communicate(timeout=CEILING * 5)
            failed = {"ok": False, "stdout": "", "error": f"the runner failed:\n{output}"}
            self.python = {k: {"key": k, **failed} for k in _keys(Python)}
            if self.runner.returncode == 0:
                for result in json.loads(self.results.read_text("utf-8")):
                    self.python[result["key"]] = result
        return self.python[key]


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    running = Reader(tmp_path_factory.mktemp("readers"))
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.parametrize("key", _keys(Python), ids=_where)
def test_python_snippet(reader: Reader, key: str) -> None:
    result = reader.python_result(key)
    assert result["ok"], f"{key}\n{result['error']}\nprinted:\n{result['stdout']}"
    spec = SPECS[key]
    assert isinstance(spec, Python)
    for text in spec.expect:
        assert text in result["stdout"], f"{text!r} not printed:\n{result['stdout']}"


@pytest.mark.parametrize("key", _keys(Shell), ids=_where)
def test_shell_snippet(reader: Reader, key: str) -> None:
    reader.shell[key].result(timeout=CEILING * 10)


@pytest.mark.parametrize("key", _keys(McpConfig), ids=_where)
def test_mcp_host_configuration(reader: Reader, key: str, tmp_path: Path) -> None:
    block, spec = BLOCKS[key], SPECS[key]
    assert isinstance(spec, McpConfig)
    home = reader.home(block.path, "mcp")
    text = reader.swap(block.text, home)
    text = text.replace("/Users/me/.local/bin/memquill-mcp", str(VENV_BIN / "memquill-mcp"))
    servers: dict[str, dict[str, Any]] = json.loads(text)["mcpServers"]
    assert set(servers) == set(spec.tools)
    env = environment(home, {})
    for name, server in servers.items():
        if "command" in server:
            assert Path(server["command"]).is_file(), server["command"]
            parameters = StdioServerParameters(
                command=server["command"], args=server["args"], env=env, cwd=tmp_path
            )
            listed = asyncio.run(_stdio_tools(parameters))
        else:
            listed = _http_tools(server["url"], spec.http_args, home, env, tmp_path)
        assert listed == list(spec.tools[name]), name


async def _stdio_tools(parameters: StdioServerParameters) -> list[str]:
    async with Client(stdio_client(parameters), mode="legacy") as client:
        return [tool.name for tool in (await client.list_tools()).tools]


def _http_tools(
    url: str, args: tuple[str, ...], home: Path, env: dict[str, str], tmp_path: Path
) -> list[str]:
    port = free_port()  # the machine is shared: a free port instead of the URL's default one
    command = [str(VENV_BIN / "memquill-mcp"), "--workspace", str(home / "notes"), *args]
    log = tmp_path / "server.log"
    with log.open("wb") as stderr:
        server = subprocess.Popen(
            [*command, "--port", str(port)], env=env, stderr=stderr, stdout=subprocess.DEVNULL
        )
    try:
        wait_for_log(server, log, "Bearer")
        accepting(port, server)
        token = printed_token(log.read_text("utf-8"))  # generated: none is configured
        assert token is not None
        return asyncio.run(_list_http(url.replace(":8765/", f":{port}/"), token))
    finally:
        server.terminate()
        server.wait(timeout=CEILING)


async def _list_http(url: str, token: str) -> list[str]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as web,
        Client(streamable_http_client(url, http_client=web), mode="legacy") as client,
    ):
        return [tool.name for tool in (await client.list_tools()).tools]


@pytest.mark.parametrize("key", _keys(Check), ids=_where)
def test_shown_data_is_what_memquill_produces(key: str, tmp_path: Path) -> None:
    spec = SPECS[key]
    assert isinstance(spec, Check)
    spec.check(BLOCKS[key].text, tmp_path)


_CALL = re.compile(r"^(?P<name>[\w.]+)\((?P<params>.*?)\)(?:\s*->\s*(?P<ret>.+?))?$", re.M | re.S)


@pytest.mark.parametrize("key", _keys(Signature), ids=_where)
def test_signatures_are_the_real_ones(key: str) -> None:
    spec = SPECS[key]
    assert isinstance(spec, Signature)
    module = importlib.import_module(spec.module)
    shown = list(_CALL.finditer(BLOCKS[key].text))
    assert shown, "no signature found"
    for match in shown:
        target: Any = module
        for part in match.group("name").split("."):
            target = getattr(target, part)
        real = inspect.signature(target)
        tree = ast.parse(f"def _({match.group('params')}): pass").body[0]
        assert isinstance(tree, ast.FunctionDef)
        documented = _parameters(tree.args)
        actual = [
            (p.name, p.kind.name, None if p.default is p.empty else repr(p.default))
            for p in real.parameters.values()
        ]
        assert documented == actual, f"{match.group('name')}: the doc says {documented}"
        if match.group("ret"):
            assert match.group("ret").strip() == str(real.return_annotation).strip("'")


def _parameters(args: ast.arguments) -> list[tuple[str, str, str | None]]:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += args.defaults
    shown: list[tuple[str, str, str | None]] = []
    for n, arg in enumerate(positional):
        kind = "POSITIONAL_ONLY" if n < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        default = defaults[n]
        shown.append((arg.arg, kind, None if default is None else repr(ast.literal_eval(default))))
    if args.vararg:
        shown.append((args.vararg.arg, "VAR_POSITIONAL", None))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        value = None if default is None else repr(ast.literal_eval(default))
        shown.append((arg.arg, "KEYWORD_ONLY", value))
    if args.kwarg:
        shown.append((args.kwarg.arg, "VAR_KEYWORD", None))
    return shown


def test_placeholders_are_only_the_reader_s_own() -> None:
    """A swapped placeholder must appear in its block: a swap never adds a command."""
    for key, spec in SPECS.items():
        if isinstance(spec, Shell) and key in BLOCKS:
            for shown in spec.swaps:
                assert shown in BLOCKS[key].text, f"{key}: {shown!r} is not in the block"
            for prefix in [*spec.skip, *spec.servers]:
                assert prefix in BLOCKS[key].text, f"{key}: no command starts {prefix!r}"
    assert os.environ.get("MEMQUILL_INDEX_DIR"), "the suite keeps indexes in a temporary folder"
