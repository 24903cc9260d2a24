"""The auxiliary runner (spec 12.12, translated): cooldowns, blocks, latches, status.

Every test uses a private state folder, a hand-moved clock and real files; the provider
failures are scripted exceptions shaped like SDK errors (status codes), plus real OpenAI,
Anthropic and httpx exceptions where the kind matters.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest
from mcp.shared.exceptions import MCPError
from tests.core.enhance_helpers import Clock, FailingModel, Signal, ask, make_runner

from memquill.enhance import ModelIdentity, Prompt
from memquill.enhance._model import Scene
from memquill.enhance._runner import AuxiliaryRunner
from memquill.testing._models import FAKE_SECRET, ScriptedProviderError, scripted_failure

YEAR = 365 * 24 * 3600.0


def _request() -> httpx2.Request:
    return httpx2.Request("POST", "https://api.example.test/v1/chat")


def _openai_401() -> openai.AuthenticationError:
    response = httpx2.Response(401, request=_request())
    return openai.AuthenticationError(
        f"Incorrect API key provided: {FAKE_SECRET}", response=response, body=None
    )


async def test_completes_and_reports_healthy(tmp_path: Path) -> None:
    runner, model = make_runner(tmp_path), FailingModel(None)
    result = await ask(runner, model)
    assert result.completed and result.text == "[1, 0]"
    assert runner.status("memory_rerank", model).state == "healthy"
    assert runner.status("memory_extract", model).state == "ready"
    assert runner.status("memory_rerank", None).state == "not_configured"


async def test_cools_repeated_failures_separates_scopes_and_recovers_on_key_change(
    tmp_path: Path,
) -> None:
    clock = Clock()
    runner = make_runner(tmp_path, clock)
    model = FailingModel(ConnectionResetError(104, "Connection reset by peer"))
    first = await ask(runner, model)
    assert (first.status, first.reason) == ("failed", "request_failed")
    assert first.retry_at == clock.now + 60
    again = await ask(runner, model)
    assert (again.status, again.reason, again.retry_at) == (
        "cooldown",
        "request_failed",
        first.retry_at,
    )
    assert model.calls == 1
    other_scope = await ask(runner, model, scope="scope-b")
    assert other_scope.status == "failed" and model.calls == 2
    status = runner.status("memory_rerank", model, "scope-a")
    assert status.state == "cooling_down" and status.retry_at == first.retry_at
    # A new key is a new configuration: no cooldown of the old one applies.
    model.key, model.error = "key-2", None
    assert (await ask(runner, model)).completed


async def test_cooldown_doubles_to_a_300_second_cap(tmp_path: Path) -> None:
    clock = Clock()
    runner = make_runner(tmp_path, clock)
    model = FailingModel(scripted_failure("http_500"))
    delays: list[float] = []
    for _ in range(6):
        result = await ask(runner, model)
        assert result.retry_at is not None
        delays.append(result.retry_at - clock.now)
        clock.advance(delays[-1] + 0.001)
    assert delays == [60, 120, 240, 300, 300, 300]
    model.error = None
    assert (await ask(runner, model)).completed
    model.error = scripted_failure("http_500")
    assert (await ask(runner, model)).retry_at == clock.now + 60  # success resets the count


async def test_does_not_coalesce_concurrent_requests(tmp_path: Path) -> None:
    runner = make_runner(tmp_path)
    release = Signal()

    class Slow(FailingModel):
        async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
            self.calls += 1
            await release.wait()
            return "first answer"

    model = Slow(None)
    first = asyncio.ensure_future(ask(runner, model))
    await asyncio.sleep(0)
    second = await ask(runner, model)
    assert (second.status, second.reason) == ("cooldown", "in_flight")
    assert runner.status("memory_rerank", model).state == "in_flight"
    release.set()
    assert (await first).text == "first answer"
    assert model.calls == 1


@pytest.mark.parametrize(
    "error",
    [
        _openai_401(),
        openai.PermissionDeniedError(
            "forbidden", response=httpx2.Response(403, request=_request()), body=None
        ),
        anthropic.AuthenticationError(
            "invalid x-api-key", response=httpx2.Response(401, request=_request()), body=None
        ),
        openai.OpenAIError(f"The api_key client option must be set ({FAKE_SECRET})"),
        ScriptedProviderError("denied", 403),
    ],
    ids=["openai-401", "openai-403", "anthropic-401", "openai-missing-key", "scripted-403"],
)
async def test_credential_failures_block_everywhere_until_the_key_changes(
    tmp_path: Path, error: Exception
) -> None:
    clock = Clock()
    runner = make_runner(tmp_path, clock)
    model = FailingModel(error)
    blocked = await ask(runner, model)
    assert (blocked.status, blocked.reason) == ("unavailable", "credentials_missing")
    assert blocked.requires_configuration_change
    clock.advance(YEAR)
    for result in (
        await ask(runner, model),
        await ask(runner, model, scope="another-scope"),
        await ask(runner, model, scene="memory_extract"),
        await ask(make_runner(tmp_path, clock), model),
    ):
        assert result.reason == "credentials_missing"
    assert model.calls == 1
    status = runner.status("memory_extract", model)
    assert status.state == "blocked" and "Change the key to unblock" in status.describe()
    model.key, model.error = "key-2", None
    assert (await ask(runner, model)).completed
    assert not list(tmp_path.glob("block-*.json")), "the stale receipt is tidied after success"


@pytest.mark.parametrize("kind", ["http_400", "http_429", "timeout", "network", "http_503"])
async def test_other_failures_cool_down_and_never_block(tmp_path: Path, kind: str) -> None:
    clock = Clock()
    runner = make_runner(tmp_path, clock)
    model = FailingModel(scripted_failure(kind))
    first = await ask(runner, model)
    assert (first.status, first.reason, first.retry_at) == (
        "failed",
        "request_failed",
        clock.now + 60,
    )
    clock.advance(30)
    assert (await ask(runner, model)).status == "cooldown"
    assert (await ask(runner, model, scene="memory_extract")).status == "failed"
    assert (await ask(make_runner(tmp_path, clock), model)).status == "failed"  # process-local
    clock.advance(30.001)
    assert (await ask(runner, model)).status == "failed"
    assert not list(tmp_path.glob("block-*.json"))


async def test_empty_answer_is_a_failure_with_a_cooldown(tmp_path: Path) -> None:
    clock = Clock()
    runner = make_runner(tmp_path, clock)
    model = FailingModel(None, answer="  \n")
    result = await ask(runner, model)
    assert (result.status, result.reason, result.retry_at) == (
        "failed",
        "empty_response",
        clock.now + 60,
    )


async def test_user_cancellation_is_not_a_cooldown(tmp_path: Path) -> None:
    runner = make_runner(tmp_path)
    model = FailingModel(MCPError(code=-1, message="User rejected sampling request"))
    result = await ask(runner, model)
    assert (result.status, result.reason, result.retry_at) == ("failed", "cancelled", None)
    model.error = None
    assert (await ask(runner, model)).completed


async def test_a_cancelled_caller_propagates_and_frees_the_scope(tmp_path: Path) -> None:
    runner = make_runner(tmp_path)
    release = Signal()

    class Hangs(FailingModel):
        async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
            await release.wait()
            return "late"

    model = Hangs(None)
    task = asyncio.ensure_future(ask(runner, model))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert runner.status("memory_rerank", model).state == "ready"


async def test_unsupported_model_is_unavailable(tmp_path: Path) -> None:
    runner = make_runner(tmp_path)
    result = await ask(runner, FailingModel(NotImplementedError("no async support")))
    assert (result.status, result.reason) == ("unavailable", "model_unsupported")


async def test_an_identity_that_raises_is_unavailable_without_a_call(tmp_path: Path) -> None:
    class Broken(FailingModel):
        @property
        def identity(self) -> ModelIdentity:
            raise RuntimeError("getter exploded")

    model = Broken(None)
    result = await ask(make_runner(tmp_path), model)
    assert (result.status, result.reason) == ("unavailable", "identity_unavailable")
    assert model.calls == 0


@pytest.mark.parametrize("damage", ["symlink", "public", "short"])
async def test_fails_closed_for_an_unsafe_install_key(tmp_path: Path, damage: str) -> None:
    runner, model = make_runner(tmp_path), FailingModel(None)
    assert (await ask(runner, model)).completed  # creates the key
    key = tmp_path / "install-key.v1"
    assert key.stat().st_size == 32 and key.stat().st_mode & 0o777 == 0o600
    target = tmp_path / "elsewhere"
    if damage == "symlink":
        target.write_bytes(key.read_bytes())
        target.chmod(0o600)
        key.unlink()
        key.symlink_to(target)
    elif damage == "public":
        key.chmod(0o644)
    else:
        key.write_bytes(b"x" * 31)
    result = await ask(make_runner(tmp_path), model, scope="other")
    assert (result.status, result.reason) == ("unavailable", "identity_unavailable")
    assert runner.status("memory_rerank", model).reason == "identity_unavailable"
    if damage == "symlink":
        assert target.stat().st_mode & 0o777 == 0o600 and len(target.read_bytes()) == 32
    key.unlink()
    assert (await ask(make_runner(tmp_path), model, scope="other")).completed  # repaired


async def test_failure_to_create_the_key_calls_no_model(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the state folder's parent should be")
    model = FailingModel(None)
    result = await ask(make_runner(blocker / "state"), model)
    assert result.reason == "identity_unavailable" and model.calls == 0
    blocker.unlink()
    assert (await ask(make_runner(blocker / "state"), model)).completed


async def test_a_broken_receipt_is_persistence_unavailable_until_repaired(tmp_path: Path) -> None:
    runner, model = make_runner(tmp_path), FailingModel(_openai_401())
    await ask(runner, model)
    (receipt,) = tmp_path.glob("block-*.json")
    receipt.write_text("{not json")
    model.error = None
    result = await ask(make_runner(tmp_path), model)
    assert (result.status, result.reason) == ("unavailable", "persistence_unavailable")
    assert model.calls == 1
    receipt.unlink()
    assert (await ask(make_runner(tmp_path), model)).completed


async def test_receipt_write_failure_keeps_the_latch_without_calling_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner, model = make_runner(tmp_path), FailingModel(_openai_401())
    real_replace = os.replace

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    first = await ask(runner, model)
    assert first.reason == "persistence_unavailable"
    scenes: tuple[tuple[str, Scene], ...] = (("b", "memory_rerank"), ("a", "memory_extract"))
    for scope, scene in scenes:
        assert (await ask(runner, model, scope=scope, scene=scene)).reason == (
            "persistence_unavailable"
        )
    assert model.calls == 1
    monkeypatch.setattr(os, "replace", real_replace)
    assert (await ask(runner, model)).reason == "credentials_missing"  # saved, still no call
    assert model.calls == 1
    assert (await ask(make_runner(tmp_path), model)).reason == "credentials_missing"


async def test_receipts_hold_no_secret_and_fingerprints_are_keyed(tmp_path: Path) -> None:
    runner, model = make_runner(tmp_path), FailingModel(_openai_401(), key=FAKE_SECRET)
    await ask(runner, model)
    (receipt,) = tmp_path.glob("block-*.json")
    assert receipt.stat().st_mode & 0o777 == 0o600
    text = receipt.read_text()
    document = json.loads(text)
    assert document["fingerprint"].startswith("hmac-v1:") and len(document["fingerprint"]) == 72
    assert document["label"] == "custom:failing"
    for secret in (FAKE_SECRET, "Incorrect API key", "sys", "user"):
        assert secret not in text.replace('"custom:failing"', "")


async def test_a_receipt_of_another_configuration_does_not_block(tmp_path: Path) -> None:
    runner, model = make_runner(tmp_path), FailingModel(_openai_401())
    await ask(runner, model)
    (receipt,) = tmp_path.glob("block-*.json")
    document = json.loads(receipt.read_text())
    document["fingerprint"] = "hmac-v1:" + "0" * 64  # an older configuration's
    receipt.write_text(json.dumps(document))
    model.error = None
    assert (await ask(make_runner(tmp_path), model)).completed


async def test_a_block_survives_a_process_restart_and_clears_on_key_change(tmp_path: Path) -> None:
    await ask(make_runner(tmp_path), FailingModel(_openai_401()))
    child = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from memquill.enhance import AuxiliaryRequest, ModelIdentity, Prompt
        from memquill.enhance._runner import AuxiliaryRunner

        class Model:
            calls = 0
            identity = ModelIdentity("custom", "failing", sys.argv[1].encode())
            async def generate(self, prompt, *, max_tokens):
                Model.calls += 1
                return "fine"

        async def main():
            runner = AuxiliaryRunner(state_dir=Path({str(tmp_path)!r}))
            model = Model()
            request = AuxiliaryRequest("memory_rerank", "s", model, Prompt("a", "b"))
            result = await runner.run(request)
            print(result.status, result.reason, Model.calls)

        asyncio.run(main())
        """
    )
    same = subprocess.run([sys.executable, "-c", child, "key-1"], capture_output=True, text=True)
    assert same.stdout.split() == ["unavailable", "credentials_missing", "0"], same.stderr
    changed = subprocess.run([sys.executable, "-c", child, "key-2"], capture_output=True, text=True)
    assert changed.stdout.split() == ["completed", "None", "1"], changed.stderr


async def test_entries_are_lru_bounded(tmp_path: Path) -> None:
    clock = Clock()
    runner = AuxiliaryRunner(state_dir=tmp_path, clock=clock, max_entries=2)
    model = FailingModel(scripted_failure("http_500"))
    for scope in ("a", "b", "c"):
        await ask(runner, model, scope=scope)
    assert (await ask(runner, model, scope="c")).status == "cooldown"
    assert (await ask(runner, model, scope="a")).status == "failed"  # evicted: forgotten


async def test_a_scripted_secret_never_reaches_results_or_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    runner = make_runner(tmp_path)
    for kind in ("http_401", "http_429", "http_500", "timeout", "network"):
        result = await ask(runner, FailingModel(scripted_failure(kind), key=kind), scope=kind)
        assert FAKE_SECRET not in repr(result)
    assert FAKE_SECRET not in caplog.text
    for path in tmp_path.iterdir():
        if path.name.startswith("block-"):
            assert FAKE_SECRET not in path.read_text()


def test_fingerprints_are_keyed_and_distinct(tmp_path: Path) -> None:
    import hashlib

    from memquill.enhance._receipts import InstallKey, fingerprint

    key = InstallKey(tmp_path).load()
    other_key = InstallKey(tmp_path / "elsewhere").load()
    identities = [
        ModelIdentity("custom", "m", b"k1"),
        ModelIdentity("custom", "m", b"k2"),
        ModelIdentity("custom", "n", b"k1"),
        ModelIdentity("langchain", "m", b"k1"),
        ModelIdentity("custom", "mk", b"1"),  # framing: not the same as ("m", "k1")
    ]
    prints = [fingerprint(key, identity) for identity in identities]
    assert len(set(prints)) == len(prints)
    assert all(p.startswith("hmac-v1:") and len(p) == 72 for p in prints)
    assert fingerprint(other_key, identities[0]) != prints[0]
    assert prints[0][8:] != hashlib.sha256(b"k1").hexdigest()
