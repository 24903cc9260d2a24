"""``memquill demo``: one scripted memory scenario through the core and every installed adapter.

The scenario remembers a fact, searches for it, reads it, corrects it with the revision it just
read, forgets it with the new revision, and reviews recent memory. Each adapter runs it in a
fresh workspace of its own, through its framework's real calling path (see
:class:`~memquill.plugins.AdapterHarness`); the outputs, normalised for ids and revisions, must
equal the core's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from memquill.plugins import AdapterHarness, AdapterSpec, HarnessResult
from memquill.testing._runner import CoreHarness, Normalizer
from memquill.tools import MemorySession

SESSION_ID: Final = "memquill-demo"
_FACT: Final = "The team deploys to production on Tuesdays after the 10:00 stand-up."
_CORRECTION: Final = "The team deploys to production on Wednesdays after the 10:00 stand-up."
_NOTES: Final = (
    "# Team notes\n\n- Stand-up is at 10:00 every weekday.\n- Releases are tagged from main.\n"
)

Results = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class DemoStep:
    """One call of the scenario; ``arguments`` may use what earlier steps returned."""

    name: str
    tool: str
    arguments: Callable[[Results], dict[str, Any]]


def _first_hit(results: Results) -> Mapping[str, Any]:
    hits: list[Mapping[str, Any]] = results["search"]["hits"]
    return hits[0]


SCENARIO: Final[tuple[DemoStep, ...]] = (
    DemoStep("remember", "memory_remember", lambda _: {"content": _FACT}),
    DemoStep("search", "memory_search", lambda _: {"query": "when does the team deploy"}),
    DemoStep("get", "memory_get", lambda r: {"file_path": _first_hit(r)["path"]}),
    DemoStep(
        "update",
        "memory_update",
        lambda r: {
            "id": r["get"]["record_id"],
            "content": _CORRECTION,
            "expected_revision": r["get"]["record_revision"],
        },
    ),
    DemoStep(
        "forget",
        "memory_forget",
        lambda r: {
            "id": r["update"]["recordId"],
            "expected_revision": r["update"]["recordRevision"],
        },
    ),
    DemoStep("recent", "memory_recent", lambda _: {"days": 3}),
)
"""remember → search → get → update (with the revision just read) → forget → recent."""


@dataclass(slots=True)
class AdapterRun:
    """What one adapter did: per step, the arguments sent and the result read back."""

    adapter: str
    calls: list[tuple[DemoStep, dict[str, Any], HarnessResult]] = field(
        default_factory=list[tuple[DemoStep, dict[str, Any], HarnessResult]]
    )
    error: str | None = None

    def normalised(self) -> list[tuple[str, bool]]:
        """The step texts and error flags with ids and revisions replaced, for comparison."""
        normalizer = Normalizer()
        return [(normalizer.text(result.text), result.is_error) for _, _, result in self.calls]


def run_adapter(
    name: str, open_harness: Callable[[MemorySession], AdapterHarness], workspace: Path
) -> AdapterRun:
    """Run :data:`SCENARIO` through one harness in ``workspace`` (created if missing).

    A failure to open or drive the adapter is recorded on the run, never raised: one broken
    adapter must not hide the others.
    """
    workspace.mkdir(parents=True, exist_ok=True)
    # A note of the user's own, so search and recent show notes beside remembered facts.
    (workspace / "memory.md").write_text(_NOTES, encoding="utf-8")
    run = AdapterRun(name)
    results: dict[str, Mapping[str, Any]] = {}
    try:
        harness = open_harness(MemorySession(workspace, SESSION_ID))
    except Exception as error:  # noqa: BLE001 - reported per adapter, see the docstring
        run.error = f"could not open: {type(error).__name__}: {error}"
        return run
    try:
        for step in SCENARIO:
            arguments = step.arguments(results)
            result = harness.call(step.tool, arguments)
            run.calls.append((step, arguments, result))
            results[step.name] = dict(result.structured or {})
    except Exception as error:  # noqa: BLE001 - reported per adapter, see the docstring
        run.error = f"{type(error).__name__}: {error}"
    finally:
        harness.close()
    return run


def core_spec() -> AdapterSpec:
    """The core itself, driven directly: the reference every adapter is compared with."""
    return AdapterSpec("core", "memquill core (direct)", "memquill", CoreHarness)
