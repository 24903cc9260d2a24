"""Telemetry noise control (spec 10.6 and 12.13, translated): budgets, enums, no private text."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.enhance_helpers import Clock, FailingModel, ask, make_runner

from memquill.enhance._classify import Failure
from memquill.enhance._telemetry import NoiseBudget, ProviderEvent, Telemetry, provider_class
from memquill.testing._models import FAKE_SECRET, scripted_failure

TRANSIENT = Failure("transport", "transient_upstream")


def test_budget_allows_limit_then_counts_and_carries_into_the_next_window() -> None:
    clock = Clock(0.0)
    budget = NoiseBudget(limit=2, window=100.0, groups=2, clock=clock)
    group = ("transport", "memory_rerank", "langchain")
    assert budget.admit(group) == (True, 0)
    assert budget.admit(group) == (True, 0)
    assert budget.admit(group) == (False, 0)
    assert budget.snapshot() == {"groups": 1, "suppressed": 1}
    assert budget.admit(group) == (False, 0)
    assert budget.snapshot() == {"groups": 1, "suppressed": 2}
    assert budget.admit(("transport", "memory_extract", "langchain")) == (True, 0)
    clock.advance(100.0)
    assert budget.admit(group) == (True, 2)
    assert budget.admit(group) == (True, 0)


def test_a_full_budget_drops_expired_groups_and_never_suppresses_an_unseen_one() -> None:
    clock = Clock(0.0)
    budget = NoiseBudget(limit=1, window=100.0, groups=2, clock=clock)
    budget.admit(("a",))
    budget.admit(("b",))
    assert budget.admit(("c",)) == (True, 0)  # full of live groups: let through, untracked
    assert budget.snapshot()["groups"] == 2
    clock.advance(100.0)
    assert budget.admit(("c",)) == (True, 0)
    assert budget.snapshot()["groups"] == 1


def test_snapshot_leaks_no_group_names() -> None:
    budget = NoiseBudget()
    budget.admit(("transport", "memory_rerank", "custom"))
    assert set(budget.snapshot()) == {"groups", "suppressed"}
    assert "memory_rerank" not in repr(budget.snapshot())


def test_unknown_faults_are_never_budgeted() -> None:
    telemetry = Telemetry(budget=NoiseBudget(limit=1))
    events: list[ProviderEvent] = []
    telemetry.connect("test", events.append)
    for _ in range(5):
        telemetry.report("memory_rerank", Failure("other", "unknown"), "custom")
    assert len(events) == 5


@pytest.mark.parametrize(
    "failure",
    [
        Failure("credentials", "user_action_required", "4xx"),
        Failure("http_4xx", "user_action_required", "4xx"),
        Failure("cancelled", "cancelled"),
        Failure("model_unsupported", "user_action_required"),
    ],
)
def test_user_side_failures_produce_no_event(failure: Failure) -> None:
    telemetry = Telemetry()
    events: list[ProviderEvent] = []
    telemetry.connect("test", events.append)
    assert telemetry.report("memory_rerank", failure, "langchain") is None
    assert events == []


def test_events_are_enums_only_and_unknown_families_become_custom() -> None:
    telemetry = Telemetry()
    event = telemetry.report("memory_rerank", TRANSIENT, "my-secret-provider-name")
    assert event is not None and event.provider == "custom"
    assert provider_class("mcp_sampling") == "mcp_sampling"
    assert event.attributes() == {
        "memquill.scene": "memory_rerank",
        "memquill.failure.root_cause": "transport",
        "memquill.failure.outcome": "transient_upstream",
        "memquill.provider": "custom",
        "memquill.status_class": "none",
        "memquill.suppressed": 0,
    }


def test_a_failing_sink_is_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    telemetry = Telemetry()
    received: list[ProviderEvent] = []

    def broken(event: ProviderEvent) -> None:
        raise RuntimeError(f"sink down {FAKE_SECRET}")

    telemetry.connect("broken", broken)
    telemetry.connect("good", received.append)
    telemetry.report("memory_rerank", TRANSIENT, "custom")
    assert len(received) == 1
    assert "telemetry sink failed: RuntimeError" in caplog.text and FAKE_SECRET not in caplog.text
    telemetry.disconnect("good")
    telemetry.report("memory_rerank", Failure("other", "unknown"), "custom")
    assert len(received) == 1


async def test_runner_failures_reach_sinks_budgeted_and_without_private_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    clock = Clock()
    telemetry = Telemetry(budget=NoiseBudget(limit=3, window=900.0, clock=clock))
    events: list[ProviderEvent] = []
    telemetry.connect("test", events.append)
    runner = make_runner(tmp_path, clock, telemetry)
    await ask(runner, FailingModel(scripted_failure("http_401"), key="refused"), scope="blocked")
    assert events == [], "credential failures produce no event"
    for scope in range(5):  # five scopes, so no cooldown stands in the way
        await ask(runner, FailingModel(scripted_failure("http_503")), scope=str(scope))
    assert [e.root_cause for e in events] == ["http_5xx"] * 3
    assert events[0].scene == "memory_rerank" and events[0].status_class == "5xx"
    clock.advance(900.0)
    await ask(runner, FailingModel(scripted_failure("http_503")), scope="later")
    assert events[-1].suppressed == 2
    assert FAKE_SECRET not in caplog.text and "user" not in caplog.text.split()
    assert FAKE_SECRET not in repr(events)


def test_scenes_survive_and_free_text_becomes_unknown() -> None:
    telemetry = Telemetry()
    for scene in ("memory_rerank", "memory_extract"):
        event = telemetry.report(scene, Failure("other", "unknown"), "langchain")
        assert event is not None and event.scene == scene
    event = telemetry.report(f"/home/me/{FAKE_SECRET}", Failure("other", "unknown"), "x")
    assert event is not None and (event.scene, event.provider) == ("unknown", "custom")
