"""The runner's rules (spec 9.4–9.7, 12.6): what costs an attempt, what waits, what is skipped.

Credentials block without charge until the key changes; 429 cools down; Plan mode and the
binding are checked before and after the model answers; broken storage stops calls until it
changes; no model, no identity and unknown sessions cost nothing; one pass makes at most three
calls, oldest jobs first.
"""

from __future__ import annotations

import asyncio
import os

from tests.core.enhance_helpers import Signal
from tests.core.lifecycle_helpers import GOOD, ExtractModel, new_setup, write_transcript

from memquill.enhance import Prompt
from memquill.enhance._receipts import KEY_FILE
from memquill.lifecycle import RecordedMessages
from memquill.lifecycle._host import SessionState, binding_gate
from memquill.store._lock import WriterLock
from memquill.testing._models import ScriptedProviderError
from memquill.tools import BindingStore


async def test_refused_credentials_block_without_charge_until_the_key_changes(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([ScriptedProviderError("bad key", 401), GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)

    await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("unavailable", "credentials_missing", 0)
    assert job.requires_configuration_change and job.route_fingerprint

    for _ in range(3):  # no timer lifts it, in this process or a fresh runner
        setup.clock.advance(3600)
        await extraction.aresume()
        await setup.extraction(model).aresume()
    assert model.calls == 1

    model.key = "a-new-key"
    await extraction.aresume()
    assert model.calls == 2
    assert (setup.job().status, setup.job().attempts) == ("completed", 1)
    assert "a-new-key" not in setup.ledger().path.read_text()


async def test_a_rate_limit_cools_the_job_down_until_its_retry_time(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([ScriptedProviderError("slow down", 429), GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)

    await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("failed", "request_failed", 1)
    assert job.retry_at == int((setup.clock.now + 60) * 1000)
    assert not job.requires_configuration_change

    setup.clock.advance(30)
    await extraction.aresume()
    assert model.calls == 1
    setup.clock.advance(31)
    await extraction.aresume()
    assert (model.calls, setup.job().status, setup.job().attempts) == (2, "completed", 2)


async def test_a_runner_cooldown_is_free_and_a_new_configuration_goes_at_once(tmp_path) -> None:
    setup = new_setup(tmp_path)
    write_transcript(setup.transcript, ["I like tea."] * 6, ["ok"] * 6)
    model = ExtractModel([ScriptedProviderError("overloaded", 503), "[]"])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    first, second = setup.jobs()
    assert (first.status, first.reason, first.attempts) == ("failed", "request_failed", 1)
    # The workspace's scope cools down: the second job is turned away before any call.
    assert (second.status, second.reason, second.attempts) == ("cooldown", "request_failed", 0)
    assert model.calls == 1

    model.key = "rotated"  # a changed configuration is not held by the old retry time
    await extraction.aresume()
    assert [job.status for job in setup.jobs()] == ["nothing", "nothing"]


async def test_plan_mode_never_queues_or_saves_and_work_resumes_after_it(tmp_path) -> None:
    setup = new_setup(tmp_path)
    modes: dict[str, SessionState] = {"s1": "read_only"}

    def gate(session_id: str) -> SessionState:
        return modes.get(session_id, "unbound")

    def flip_to_plan(prompt: Prompt) -> str:
        modes["s1"] = "read_only"
        return GOOD

    model = ExtractModel([flip_to_plan, GOOD])
    extraction = setup.extraction(model, gate=gate)
    assert setup.record_all(extraction) == 0
    assert not (setup.workspace / ".assistant").exists()

    modes["s1"] = "ready"
    assert setup.record_all(extraction) == 1
    modes["s1"] = "read_only"
    await extraction.aresume()
    assert (setup.job().status, setup.job().reason, model.calls) == (
        "unavailable",
        "policy_blocked",
        0,
    )

    modes["s1"] = "ready"
    await extraction.aresume()  # the model answers, but Plan mode began meanwhile
    assert (setup.job().status, setup.job().reason, setup.job().attempts) == (
        "unavailable",
        "policy_blocked",
        1,
    )
    assert setup.records(active=False) == []

    modes["s1"] = "ready"
    await extraction.aresume()
    assert (setup.job().status, len(setup.records())) == ("completed", 3)


async def test_an_unbound_session_is_skipped(tmp_path) -> None:
    setup = new_setup(tmp_path)
    bound = {"s1"}

    def gate(session_id: str) -> SessionState:
        return "ready" if session_id in bound else "unbound"

    model = ExtractModel([GOOD])
    extraction = setup.extraction(model, gate=gate)
    setup.record_all(extraction)
    bound.clear()
    await extraction.aresume()
    assert (setup.job().status, setup.job().reason, model.calls) == (
        "skipped",
        "binding_unavailable",
        0,
    )


async def test_a_session_the_source_does_not_know_is_left_alone(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([GOOD])
    setup.record_all(setup.extraction(model))
    other = setup.extraction(model, source=RecordedMessages())
    report = await other.aresume()
    assert (report.untouched, setup.job().status, model.calls) == (1, "pending", 0)


async def test_without_a_model_batches_wait_for_free(tmp_path) -> None:
    setup = new_setup(tmp_path)
    waiting = setup.extraction(None)
    setup.record_all(waiting)
    await waiting.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("unavailable", "provider_missing", 0)

    model = ExtractModel([GOOD])
    await setup.extraction(model).aresume()
    assert (setup.job().status, model.calls) == ("completed", 1)


async def test_a_pass_that_changes_no_job_leaves_the_ledger_file_alone(tmp_path) -> None:
    setup = new_setup(tmp_path)
    waiting = setup.extraction(None)
    setup.record_all(waiting)
    await waiting.aresume()
    job, before = setup.job(), os.stat(setup.ledger().path)
    setup.clock.advance(3600)  # a later pass: a rewrite would carry a new updatedAt
    report = await waiting.aresume()
    after = os.stat(setup.ledger().path)
    assert report.settled == ((job.id, "unavailable", "provider_missing"),)
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_size,
    )
    assert setup.job() == job


async def test_an_unusable_identity_is_unavailable_with_zero_attempts(tmp_path) -> None:
    setup = new_setup(tmp_path)
    setup.state.mkdir()
    key = setup.state / KEY_FILE
    key.write_bytes(b"k" * 32)
    key.chmod(0o644)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts, model.calls) == (
        "unavailable",
        "identity_unavailable",
        0,
        0,
    )
    key.chmod(0o600)
    await extraction.aresume()
    assert (setup.job().status, model.calls) == ("completed", 1)


async def test_corrupt_storage_stops_calls_until_it_changes(tmp_path) -> None:
    setup = new_setup(tmp_path)
    records = setup.workspace / "memory" / "records.md"
    records.parent.mkdir()
    records.write_text("my own notes\n")
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    for _ in range(3):
        await extraction.aresume()
        setup.clock.advance(3600)
    job = setup.job()
    assert (job.status, job.reason, job.attempts, model.calls) == (
        "unavailable",
        "storage_corrupt",
        0,
        0,
    )
    assert job.storage_blocked_revision
    records.unlink()
    await extraction.aresume()
    assert (setup.job().status, model.calls) == ("completed", 1)


async def test_full_storage_stops_calls_until_it_changes(tmp_path) -> None:
    setup = new_setup(tmp_path)
    records = setup.workspace / "memory" / "records.md"
    records.parent.mkdir()
    records.write_bytes(b"x" * (2 * 1024 * 1024 + 1))
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    await extraction.aresume()
    assert (setup.job().reason, model.calls) == ("storage_capacity", 0)
    records.unlink()
    await extraction.aresume()
    assert (setup.job().status, model.calls) == ("completed", 1)


async def test_a_held_writer_lock_fails_the_batch_for_free(tmp_path) -> None:
    setup = new_setup(tmp_path)
    (setup.workspace / "memory").mkdir()
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    with WriterLock(setup.workspace / "memory" / ".records-lock", 1.0):
        await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts, model.calls) == ("failed", "storage_busy", 0, 0)
    await extraction.aresume()  # a preflight failure is retried at the next pass
    assert (setup.job().status, model.calls) == ("completed", 1)


async def test_a_crash_reservation_counts_against_the_budget(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    with setup.ledger().change() as ledger:
        ledger.replace_job(setup.job().evolve(status="running", attempts=3))
    await extraction.aresume()
    assert (setup.job().reason, model.calls) == ("retry_exhausted", 0)


async def test_a_pass_makes_three_calls_at_most_and_rotates_old_failures(tmp_path) -> None:
    setup = new_setup(tmp_path)
    users = [f"Fact number {i} about me." for i in range(1, 13)]
    write_transcript(setup.transcript, users, ["ok"] * 12)
    model = ExtractModel(["not JSON"])
    extraction = setup.extraction(model)
    assert setup.record_all(extraction) == 4
    setup.clock.advance(1)

    first = await extraction.aresume()
    assert first.calls == 3 and model.calls == 3
    statuses = [job.status for job in setup.jobs()]
    assert statuses == ["failed", "failed", "failed", "pending"]

    setup.clock.advance(61)
    second = await extraction.aresume()
    assert second.calls == 3
    # The untried job goes first: settling moved the failed ones behind it.
    assert [turn["messageId"] for turn in model.turns_seen(3)] == ["u10", "u11", "u12"]


async def test_a_request_during_a_pass_reruns_it_and_shares_its_future(tmp_path) -> None:
    setup = new_setup(tmp_path)
    started = Signal()

    async def slow(prompt: Prompt) -> str:
        started.set()
        await asyncio.sleep(0.3)
        return "[]"

    extraction = setup.extraction(ExtractModel([slow]))
    setup.record_all(extraction)
    first = extraction._schedule_here()  # pyright: ignore[reportPrivateUsage]
    await started.wait()
    write_transcript(setup.transcript, ["More.", "Even more.", "Last."], ["ok"] * 3, start=4,
                     append=True)  # fmt: skip
    setup.record_all(extraction)
    second = extraction._schedule_here()  # pyright: ignore[reportPrivateUsage]
    assert second is first
    report = await asyncio.wrap_future(first)
    assert report.calls == 2
    assert [job.status for job in setup.jobs()] == ["nothing", "nothing"]


def test_a_pass_cut_short_by_the_loop_ending_refunds_the_attempt(tmp_path) -> None:
    setup = new_setup(tmp_path)

    async def forever(prompt: Prompt) -> str:
        await asyncio.Event().wait()
        return "[]"

    model = ExtractModel([forever])
    extraction = setup.extraction(model)
    setup.record_all(extraction)

    async def host() -> None:
        extraction._schedule_here()  # pyright: ignore[reportPrivateUsage]
        while not model.calls:
            await asyncio.sleep(0.01)

    asyncio.run(host())  # returns while the pass waits for the model: the loop cancels it
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("failed", "cancelled", 0)


async def test_background_resume_runs_on_the_model_call_thread(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(ExtractModel([GOOD]))
    setup.record_all(extraction)
    future = extraction.resume()
    report = await asyncio.wrap_future(future)
    assert report.ran and setup.job().status == "completed"
    assert extraction.wait(5)


async def test_a_retry_time_survives_a_lost_runner_and_a_new_key_goes_at_once(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([ScriptedProviderError("slow down", 429), GOOD])
    setup.record_all(setup.extraction(model))
    await setup.extraction(model).aresume()
    assert setup.job().reason == "request_failed"

    restarted = setup.extraction(model)  # a new process: a new runner, no cooldown in memory
    await restarted.aresume()
    assert model.calls == 1  # the persisted retry time still holds for this configuration
    model.key = "rotated"
    await restarted.aresume()
    assert (model.calls, setup.job().status) == (2, "completed")
    assert "rotated" not in setup.ledger().path.read_text()


async def test_a_legacy_configuration_latch_is_not_honoured(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    fingerprint = extraction.runner.fingerprint(model)
    with setup.ledger().change() as ledger:
        latched = setup.job().evolve(
            status="unavailable",
            reason="configuration_required",
            requires_configuration_change=True,
            route_fingerprint=fingerprint,
        )
        ledger.replace_job(latched)
    await extraction.aresume()
    assert (model.calls, setup.job().status) == (1, "completed")


async def test_a_user_message_after_its_reply_is_no_source(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    lines = setup.transcript.read_text().splitlines()
    reordered = [lines[1], lines[0], lines[3], lines[2], lines[5], lines[4]]  # replies first
    setup.transcript.write_text("\n".join(reordered) + "\n")
    await extraction.aresume()
    assert (setup.job().reason, model.calls) == ("source_unavailable", 0)


async def test_resuming_an_unused_workspace_creates_nothing(tmp_path) -> None:
    setup = new_setup(tmp_path)
    report = await setup.extraction(ExtractModel([GOOD])).aresume()
    assert not report.ran
    assert list(setup.workspace.iterdir()) == []


async def test_a_binding_gate_follows_the_session_bindings(tmp_path) -> None:
    setup = new_setup(tmp_path)
    bindings = BindingStore(tmp_path / "bindings.json")
    plan: set[str] = set()
    gate = binding_gate(bindings, setup.workspace, lambda session_id: session_id in plan)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model, gate=gate)
    assert setup.record_all(extraction) == 0  # unbound: nothing counted
    assert not (setup.workspace / ".assistant").exists()

    bindings.bind("s1", setup.workspace)
    assert setup.record_all(extraction) == 1
    plan.add("s1")
    await extraction.aresume()
    assert setup.job().reason == "policy_blocked"
    plan.clear()
    bindings.unbind("s1")
    await extraction.aresume()
    assert (setup.job().status, setup.job().reason, model.calls) == (
        "skipped",
        "binding_unavailable",
        0,
    )


async def test_a_records_file_that_is_a_symlink_is_unavailable_storage(tmp_path) -> None:
    setup = new_setup(tmp_path)
    (setup.workspace / "memory").mkdir()
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("")
    (setup.workspace / "memory" / "records.md").symlink_to(elsewhere)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    assert (setup.job().status, setup.job().reason, model.calls) == (
        "unavailable",
        "storage_unavailable",
        0,
    )
    (setup.workspace / "memory" / "records.md").unlink()
    await extraction.aresume()
    assert (setup.job().status, model.calls) == ("completed", 1)


async def test_an_empty_answer_is_charged_and_cooled_down(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel(["   ", GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("failed", "empty_response", 1)
    assert job.retry_at == int((setup.clock.now + 60) * 1000)
    setup.clock.advance(61)
    await extraction.aresume()
    assert (setup.job().status, model.calls) == ("completed", 2)
