"""How a docs snippet is run, checked, or excused: one kind per way.

Every fenced block of the README and ``docs/`` has exactly one entry in
``tests/meta/doc_snippets.py`` saying which. Placeholders in a snippet are swapped for the
test's own values only where the doc marks them as the reader's (``/home/me/notes``, an id, a
revision), never to change what a command does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


@dataclass(frozen=True, slots=True)
class Python:
    """Run the block's code, as it is, in a subprocess with this repository's ``.venv``.

    Attributes:
        prelude: code run first, giving the names the snippet assumes its reader has (a chat
            model, an LLM, the host's write switch): ``tests/meta/doc_fakes.py``.
        after: checks run after it, in its namespace.
        expect: text its output must contain.
        continues: run in the namespace of the doc's previous Python snippet that runs (the
            page builds on it, as a reader's session would).
        serves: it ends by serving HTTP until stopped: it passes when the URL it printed
            answers.
    """

    prelude: str = ""
    after: str = ""
    expect: tuple[str, ...] = ()
    continues: bool = False
    serves: bool = False


Probe = Literal["manage", "mcp-stdio", "mcp-http", "plan-mode"]


@dataclass(frozen=True, slots=True)
class Shell:
    """Run the block's commands one by one in ``bash`` (exported variables carry over), with
    ``HOME`` a temporary folder holding ``~/notes``, a transcript and a model module.

    Attributes:
        cwd: ``home`` (the temporary home) or ``repo`` (this checkout, for ``uv run``).
        env: variables set first (``{home}`` is the temporary home).
        swaps: the reader's placeholders → what runs instead (a shell expression that looks the
            value up, such as ``$(_mq id "text")``; ``{port}`` is a free port).
        skip: the start of a command → why it is not run here.
        servers: the start of a command that serves until stopped → how it is probed
            (``manage``: its URL answers; ``mcp-stdio`` / ``mcp-http``: a real MCP client lists
            the six tools; ``plan-mode``: the block's later commands switch writes off and on).
        expect: text the block's output must contain.
    """

    cwd: Literal["home", "repo"] = "home"
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    swaps: Mapping[str, str] = field(default_factory=dict[str, str])
    skip: Mapping[str, str] = field(default_factory=dict[str, str])
    servers: Mapping[str, Probe] = field(default_factory=dict[str, Probe])
    expect: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class McpConfig:
    """Start every server of an MCP host configuration as a host would, with a real client.

    Attributes:
        tools: server name → the tools it must list.
        http_args: for a ``"type": "http"`` server, the ``memquill-mcp`` arguments that start
            what the URL names (on a free port instead of the default one).
    """

    tools: Mapping[str, tuple[str, ...]]
    http_args: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Signature:
    """The block lists call signatures: each must be the real one (names, kinds, defaults).

    Attributes:
        module: where the named callables are imported from.
    """

    module: str


@dataclass(frozen=True, slots=True)
class Check:
    """The block shows data (a JSON answer, a file layout, a class tree): ``check(text, tmp)``
    compares it with what memquill really produces."""

    check: Callable[[str, Path], None]


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """Another test runs the block verbatim (from the doc's own text): ``path::test`` each."""

    tests: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NotRun:
    """Reviewed: the block cannot run here, for ``reason``."""

    reason: str


Spec = Python | Shell | McpConfig | Signature | Check | Elsewhere | NotRun
