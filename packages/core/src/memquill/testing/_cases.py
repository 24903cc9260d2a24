"""Parity cases as data: workspace fixtures, sessions, and steps with expected results.

Cases live in ``memquill/testing/cases/*.toml`` (fixtures in ``fixtures.toml``), so every
adapter, ours or a third party's, runs exactly the same calls. A step calls one tool with
arguments and states what must come back (exact normalised text, an error code, or substrings),
or it changes the world between calls (switches Plan mode, writes a file). Arguments may refer to
earlier results with ``${step-name.path.to.value}`` (``${step-name.path:8}``: its first 8
characters).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from memquill.testing._models import PARITY_EMBEDDERS, ModelScript, parse_script

Action = Literal["plan_mode_on", "plan_mode_off", "write_file"]


@dataclass(frozen=True, slots=True)
class Fixture:
    """A workspace to build before a case: files by relative path, and the clock.

    A file's value is its text, or ``{repeat = "…", times = N}`` for long generated content.
    """

    name: str
    now: datetime
    files: Mapping[str, str]

    def build(self, root: Path) -> None:
        """Write the fixture's files under ``root`` (created if missing)."""
        root.mkdir(parents=True, exist_ok=True)
        for relative, content in sorted(self.files.items()):
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Step:
    """One call (or one change of the world) and what it must produce.

    Attributes:
        name: lets later steps refer to this step's structured result.
        tool: the tool to call (absent for an action).
        args: the raw arguments, possibly with ``${…}`` references.
        text: the exact expected text after normalisation.
        error_code: for a write failure, the expected ``memory_write_error`` code.
        contains: substrings the normalised text must contain.
        absent: substrings the normalised text must not contain.
        is_error: the expected error flag (default: true when ``error_code`` is given).
        unavailable: the tool must not be offered at all (the harness raises ``LookupError``).
        action: ``plan_mode_on``, ``plan_mode_off`` or ``write_file``.
        path, content: the file an action writes.
    """

    name: str | None = None
    tool: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict[str, Any])
    text: str | None = None
    error_code: str | None = None
    contains: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    is_error: bool | None = None
    unavailable: bool = False
    action: Action | None = None
    path: str | None = None
    content: str | None = None

    @property
    def expects_error(self) -> bool:
        """The error flag the call must carry."""
        if self.is_error is not None:
            return self.is_error
        return self.error_code is not None or self.unavailable


@dataclass(frozen=True, slots=True)
class Case:
    """A named scenario: fixture, session, and steps.

    A case may give the session a scripted model (``model = ["[1, 0]", { raise = "http_429" },
    { hang = true }]``, one reply per model call; see :mod:`memquill.testing._models`): every
    adapter then plays the same replies through its own framework's fake model, and
    ``model_timeout`` replaces the 3-second ranking timeout so a hanging model is cheap to test.

    A case may instead give the session a deterministic embedder (``embedder = "parity"``, the
    trigram embedder with the parity synonyms, or ``"failing"``, one whose every call fails; see
    :data:`memquill.testing.PARITY_EMBEDDERS`): search is then semantic recall's bounded hybrid,
    and every adapter runs it (the MCP server with ``--embed``).
    """

    id: str
    description: str
    fixture: str
    steps: tuple[Step, ...]
    session_id: str | None = "parity-session"
    access: Literal["read", "read_write"] = "read_write"
    model: ModelScript | None = None
    model_timeout: float = 3.0
    embedder: str | None = None


def _step(raw: Mapping[str, Any]) -> Step:
    return Step(
        name=raw.get("name"),
        tool=raw.get("tool"),
        args=dict(raw.get("args", {})),
        text=raw.get("text"),
        error_code=raw.get("error_code"),
        contains=tuple(raw.get("contains", ())),
        absent=tuple(raw.get("absent", ())),
        is_error=raw.get("is_error"),
        unavailable=raw.get("unavailable", False),
        action=raw.get("action"),
        path=raw.get("path"),
        content=raw.get("content"),
    )


@cache
def load_fixtures() -> dict[str, Fixture]:
    """Every fixture in ``cases/fixtures.toml``, by name."""
    data = tomllib.loads(_read("fixtures.toml"))
    return {
        name: Fixture(
            name=name,
            now=datetime.fromisoformat(spec["now"]),
            files={path: _content(value) for path, value in spec.get("files", {}).items()},
        )
        for name, spec in data.items()
    }


@cache
def load_cases() -> tuple[Case, ...]:
    """Every case in ``cases/*.toml`` (fixtures excepted), in file then document order."""
    cases: list[Case] = []
    folder = resources.files("memquill.testing").joinpath("cases")
    names = sorted(e.name for e in folder.iterdir() if e.name.endswith(".toml"))
    for file_name in names:
        if file_name == "fixtures.toml":
            continue
        for raw in tomllib.loads(_read(file_name)).get("case", []):
            session = raw.get("session", {})
            cases.append(
                Case(
                    id=raw["id"],
                    description=raw.get("description", ""),
                    fixture=raw.get("fixture", "notes"),
                    steps=tuple(_step(step) for step in raw["step"]),
                    session_id=session.get("id", "parity-session") or None,
                    access=session.get("access", "read_write"),
                    model=parse_script(raw["model"]) if "model" in raw else None,
                    model_timeout=float(raw.get("model_timeout", 3.0)),
                    embedder=_embedder(raw),
                )
            )
    ids = [case.id for case in cases]
    duplicates = sorted({case_id for case_id in ids if ids.count(case_id) > 1})
    if duplicates:
        raise ValueError(f"duplicate parity case ids: {duplicates}")
    return tuple(cases)


def _embedder(raw: Mapping[str, Any]) -> str | None:
    name = raw.get("embedder")
    if name is None:
        return None
    if name not in PARITY_EMBEDDERS or "model" in raw:
        raise ValueError(
            f"parity case {raw.get('id')!r}: embedder is one of {sorted(PARITY_EMBEDDERS)}, "
            "and not with a model"
        )
    return str(name)


def _content(value: str | Mapping[str, Any]) -> str:
    if isinstance(value, str):
        return value
    return str(value["repeat"]) * int(value["times"])


def _read(name: str) -> str:
    return resources.files("memquill.testing").joinpath("cases", name).read_text("utf-8")
