"""Run a parity case through a harness and compare the outcome with what the case states.

:class:`CoreHarness` is the core's own tools behind the adapter harness protocol, with no
framework in between: the reference the parity suite and ``memquill demo`` compare every
adapter with.

Outputs are compared once made comparable (:class:`Normalizer`): record ids, revisions and
timestamps differ between two workspaces built the same way, so each distinct value is replaced
by a numbered placeholder (``<id:1>``, ``<rev:2>``, ``<time>``), numbered in order of first
appearance within the case; a revision shown by its first 16 hex digits becomes ``<rev16:N>``,
with the number of the revision it starts (``<rev16:2>`` is the short form of ``<rev:2>``).
Schemas are compared after inlining references and dropping the parts frameworks legitimately
rewrite (:func:`canonical_schema`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

from memquill.enhance import AuxiliaryRunner, ModelRanker
from memquill.jsondoc import parse_json
from memquill.plugins import AdapterHarness, HarnessResult, ToolDescriptor
from memquill.semantic import SemanticRanker, load_embedder
from memquill.store import FILE as FILE_STORE, RecordStore, is_database
from memquill.testing._cases import Case, Step, load_fixtures
from memquill.testing._models import PARITY_EMBEDDERS, ScriptedTextModel
from memquill.tools import MemorySession, MemoryToolset

HarnessFactory = Callable[[MemorySession], AdapterHarness]
UNAVAILABLE: Final = "<tool not offered>"
RECORDS_FILE: Final = "memory/records.md"
"""The file store's records, relative to the workspace (a fixture may ship one)."""
_REFERENCE: Final = re.compile(r"\$\{([A-Za-z0-9_-]+)((?:\.[A-Za-z0-9_]+)*)(?::([0-9]+))?\}")
"""``${step.path.to.value}``, or ``${step.path:N}`` for the first N characters of a string."""


_ID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_REVISION: Final = re.compile(r"(?<![0-9a-f])(?:[0-9a-f]{64}|[0-9a-f]{16})(?![0-9a-f])")
_SHORT: Final = 16
_TIMESTAMP: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})"
)


class Normalizer:
    """Replaces volatile values with stable placeholders; one instance per case run."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._revisions: dict[str, int] = {}
        """By full revision and by short form; both forms of one revision share a number."""

    def text(self, value: str) -> str:
        """``value`` with ids, revisions and timestamps replaced."""
        ids = self._ids
        value = _ID.sub(lambda match: f"<id:{ids.setdefault(match.group(0), len(ids) + 1)}>", value)
        value = _REVISION.sub(self._revision, value)
        return _TIMESTAMP.sub("<time>", value)

    def _revision(self, match: re.Match[str]) -> str:
        found = match.group(0)
        short = found[:_SHORT]
        seen = self._revisions
        number = seen.get(found) or seen.get(short)
        if number is None and len(found) == _SHORT:
            number = next((n for rev, n in seen.items() if rev.startswith(found)), None)
        if number is None:
            number = 1 + len(set(seen.values()))
        seen[found] = seen[short] = number
        return f"<rev:{number}>" if len(found) > _SHORT else f"<rev16:{number}>"

    def data(self, value: Any) -> Any:
        """A JSON value with every string normalised (keys kept)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self.data(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
        return value


def canonical_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an input schema every framework must preserve exactly.

    References are inlined; the top-level ``title``, ``description`` and
    ``additionalProperties`` (which some frameworks drop or rewrite) are removed, as are
    per-property ``title`` keys. What remains — property names, types, bounds, enums, defaults,
    descriptions and ``required`` — must be identical on every adapter.
    """
    definitions: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    resolved = _inline(dict(schema), definitions)
    top = {
        key: value
        for key, value in resolved.items()
        if key not in {"title", "description", "additionalProperties", "$defs", "definitions"}
    }
    properties = top.get("properties", {})
    top["properties"] = {
        name: {key: value for key, value in spec.items() if key != "title"}
        for name, spec in properties.items()
    }
    top["required"] = sorted(top.get("required", []))
    return top


def _inline(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, Mapping):
        mapping = cast(Mapping[str, Any], node)
        reference = mapping.get("$ref")
        if isinstance(reference, str):
            return _inline(definitions[reference.rsplit("/", 1)[-1]], definitions)
        return {key: _inline(value, definitions) for key, value in mapping.items()}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in cast(list[Any], node)]
    return node


class CoreHarness:
    """Calls the core's tool handlers directly, with no framework in between."""

    def __init__(self, session: MemorySession) -> None:
        self._toolset = MemoryToolset(session)

    def catalogue(self) -> list[ToolDescriptor]:
        """The mounted tools as the core defines them."""
        return [
            ToolDescriptor(tool.name, tool.description, tool.spec.input_schema())
            for tool in self._toolset.tools
        ]

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call a mounted tool; ``LookupError`` when it is not mounted."""
        result = self._toolset.call(name, arguments)
        return HarnessResult(result.text, result.is_error, result.structured)

    def close(self) -> None:
        """Nothing to release."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A step's result as seen through one harness, raw and normalised."""

    step: Step
    raw: HarnessResult
    text: str
    structured: Any


class _Mode:
    """The host's Plan-mode switch, read by ``authorize_write`` at every write."""

    def __init__(self) -> None:
        self.plan = False

    def authorize(self) -> bool:
        return not self.plan


def run_case(
    case: Case, factory: HarnessFactory, root: Path, *, store: str | None = None
) -> list[Outcome]:
    """Build the case's workspace under ``root``, run every step, and return the outcomes.

    ``store`` is where the session keeps its records (``MemorySession``'s ``store``: ``None``
    is ``$MEMQUILL_STORE``, else the workspace's file). On a database store the notes stay in
    ``root`` and a ``memory/records.md`` the fixture ships goes into the database as a person
    puts a copy there (``memquill import``), so the case starts from the same records; the
    location must name a workspace row of the case's own, still empty.
    """
    fixture = load_fixtures()[case.fixture]
    fixture.build(root)
    mode = _Mode()
    session = MemorySession(
        root,
        case.session_id,
        case.access,
        mode.authorize,
        now=lambda: fixture.now,
        store=store,
        ranker=_scripted_ranker(case, root),
    )
    if is_database(session.store_location):
        _import_records(session)
    if case.embedder is not None:
        session = session.with_ranker(_semantic_ranker(case.embedder, session, root))
    normalizer = Normalizer()
    named: dict[str, Mapping[str, Any]] = {}
    outcomes: list[Outcome] = []
    harness = factory(session)
    try:
        for step in case.steps:
            if step.action is not None:
                _act(step, root, mode)
                continue
            assert step.tool is not None, f"{case.id}: a step needs a tool or an action"
            try:
                result = harness.call(step.tool, _resolve(step.args, named))
            except LookupError:
                if not step.unavailable:
                    raise
                result = HarnessResult(UNAVAILABLE, True, None)
            if step.name is not None:
                named[step.name] = _structured_of(result)
            outcomes.append(
                Outcome(
                    step, result, normalizer.text(result.text), normalizer.data(result.structured)
                )
            )
    finally:
        harness.close()
    return outcomes


def _import_records(session: MemorySession) -> None:
    """Move the fixture's ``memory/records.md`` into the session's (empty) database store.

    The store gets the same records (metadata and text); its header stays the store's own, as
    after any import into an empty store, so the exported bytes may name an older format.
    """
    copy = session.workspace / RECORDS_FILE
    if not copy.is_file():
        return
    shipped = RecordStore(session.workspace, location=FILE_STORE).snapshot().records
    store = session.store
    store.replace(copy.read_bytes(), store.snapshot().revision)  # an empty store's revision
    if store.snapshot().records != shipped:
        raise AssertionError(f"{RECORDS_FILE} did not import record for record")
    copy.unlink()  # the truth is the database's now: no stale copy beside the notes


def assert_outcomes(case: Case, ours: list[Outcome], core: list[Outcome] | None) -> None:
    """Assert each outcome matches its step and (when given) the core-direct outcome."""
    for index, outcome in enumerate(ours):
        step = outcome.step
        where = f"case {case.id!r}, step {index + 1} ({step.tool})"
        if step.unavailable:
            assert outcome.raw.text == UNAVAILABLE, f"{where}: the tool is offered but must not be"
        if step.text is not None:
            assert outcome.text == step.text, (
                f"{where}: text differs\n{_diff(step.text, outcome.text)}"
            )
        for needle in step.contains:
            assert needle in outcome.text, f"{where}: missing {needle!r} in\n{outcome.text}"
        for needle in step.absent:
            assert needle not in outcome.text, f"{where}: unexpected {needle!r} in\n{outcome.text}"
        if step.error_code is not None:
            assert _error_code(outcome.raw.text) == step.error_code, (
                f"{where}: expected error code {step.error_code!r}, got\n{outcome.raw.text}"
            )
        assert outcome.raw.is_error is step.expects_error, (
            f"{where}: is_error is {outcome.raw.is_error}, expected {step.expects_error}\n"
            f"{outcome.raw.text}"
        )
        if core is None:
            continue
        reference = core[index]
        assert outcome.text == reference.text, (
            f"{where}: differs from the core\n{_diff(reference.text, outcome.text)}"
        )
        if outcome.structured is not None:
            assert outcome.structured == reference.structured, (
                f"{where}: structured result differs from the core\n"
                f"{_diff(_pretty(reference.structured), _pretty(outcome.structured))}"
            )


def _act(step: Step, root: Path, mode: _Mode) -> None:
    if step.action == "plan_mode_on":
        mode.plan = True
    elif step.action == "plan_mode_off":
        mode.plan = False
    elif step.action == "write_file":
        assert step.path is not None and step.content is not None
        target = root / step.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(step.content, "utf-8")


def _structured_of(result: HarnessResult) -> Mapping[str, Any]:
    if result.structured is not None:
        return result.structured
    try:
        parsed = parse_json(result.text)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _resolve(value: Any, named: Mapping[str, Mapping[str, Any]]) -> Any:
    if isinstance(value, str):
        whole = _REFERENCE.fullmatch(value)
        if whole is not None:
            return _lookup(named, whole)  # keeps the referenced value's type (an int stays one)
        return _REFERENCE.sub(lambda match: str(_lookup(named, match)), value)
    if isinstance(value, Mapping):
        return {key: _resolve(item, named) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_resolve(item, named) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _lookup(named: Mapping[str, Mapping[str, Any]], match: re.Match[str]) -> Any:
    value: Any = named[match.group(1)]
    for part in filter(None, match.group(2).split(".")):
        if isinstance(value, list):
            value = cast(list[Any], value)[int(part)]
        else:
            value = cast(Mapping[str, Any], value)[part]
    if match.group(3) is not None:
        return str(value)[: int(match.group(3))]
    return value


def _error_code(text: str) -> str | None:
    try:
        parsed = parse_json(text)
    except ValueError:
        return None
    return parsed.get("code") if isinstance(parsed, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _diff(expected: str, actual: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(), actual.splitlines(), "expected", "actual", lineterm=""
    )
    return "\n".join(lines)


def _semantic_ranker(name: str, session: MemorySession, root: Path) -> SemanticRanker:
    """The case's deterministic embedder, on a runner of its own."""
    runner = AuxiliaryRunner(state_dir=root.with_name(root.name + "-model-state"))
    return SemanticRanker(load_embedder(PARITY_EMBEDDERS[name]), session.query, runner=runner)


def _scripted_ranker(case: Case, root: Path) -> ModelRanker | None:
    """The case's scripted model, on a runner of its own (a private key and receipt folder)."""
    if case.model is None:
        return None
    runner = AuxiliaryRunner(state_dir=root.with_name(root.name + "-model-state"))
    return ModelRanker(ScriptedTextModel(case.model), runner=runner, timeout=case.model_timeout)
