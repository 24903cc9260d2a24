"""Re-ranking with the MCP client's own model (sampling), over both protocol eras.

Real clients (the SDK's ``Client``) with a sampling callback, against a real ``MCPServer``
built by ``build_server``: legacy mode sends the sampling request in the middle of the tool
call; auto mode (2026-07-28) answers the call with ``input_required`` and calls again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client
from mcp.types import CreateMessageRequestParams, CreateMessageResult, TextContent
from tests.adapters.mcp.mcp_helpers import text_of

from memquill import open_session
from memquill.enhance import ModelRanker
from memquill.enhance._runner import AuxiliaryRunner
from memquill.testing._cases import load_fixtures
from memquill.testing._models import FAKE_SECRET, ScriptedTextModel, parse_script
from memquill_mcp import build_server
from memquill_mcp.scripted import ScriptedSampler

FIXTURE = load_fixtures()["rerank"]
QUERY = {"query": "paella saffron"}


def _session(root: Path, state: Path, *, timeout: float = 3.0) -> Any:
    FIXTURE.build(root)
    # The ranker only lends the server its runner (a private state folder) and timeout.
    ranker = ModelRanker(
        ScriptedTextModel(()), runner=AuxiliaryRunner(state_dir=state), timeout=timeout
    )
    return open_session(root, "mcp-s", "read", now=lambda: FIXTURE.now).with_ranker(ranker)


def _first_paths(text: str) -> list[str]:
    return [line.split("[")[1].split(":")[0] for line in text.splitlines() if "] (score:" in line]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_clients_model_reorders_search_results(
    tmp_path: Path, mode: Literal["legacy", "auto"]
) -> None:
    session = _session(tmp_path / "ws", tmp_path / "state")
    sampler = ScriptedSampler(parse_script(["[2, 0, 1]"]))
    server = build_server(session, client_model=True)
    async with Client(server, mode=mode, sampling_callback=sampler) as client:
        result = await client.call_tool("memory_search", QUERY)
    assert _first_paths(text_of(result)) == ["b.md", "c.md", "a.md"]
    assert result.structured_content is not None and result.structured_content["reranked"]
    (request,) = sampler.requests
    assert request.max_tokens == 300 and "untrusted" in (request.system_prompt or "")
    sent = request.messages[0].content
    assert isinstance(sent, TextContent) and json.loads(sent.text)["query"] == "paella saffron"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_without_the_capability_search_is_plain(
    tmp_path: Path, mode: Literal["legacy", "auto"]
) -> None:
    session = _session(tmp_path / "ws", tmp_path / "state").with_ranker(None)
    async with Client(build_server(session, client_model=True), mode=mode) as client:
        ranked = await client.call_tool("memory_search", QUERY)
    async with Client(build_server(session.with_ranker(None)), mode=mode) as client:
        plain = await client.call_tool("memory_search", QUERY)
    assert text_of(ranked) == text_of(plain) and not text_of(plain).startswith("Memory ranking")


async def test_sampling_is_off_unless_the_server_opts_in(tmp_path: Path) -> None:
    session = _session(tmp_path / "ws", tmp_path / "state")
    sampler = ScriptedSampler(parse_script(["[2, 0, 1]"]))
    async with Client(build_server(session), mode="legacy", sampling_callback=sampler) as client:
        result = await client.call_tool("memory_search", QUERY)
    assert sampler.requests == [] and _first_paths(text_of(result))[0] == "c.md"


@pytest.mark.parametrize("kind", ["http_401", "http_429", "http_503"])
async def test_a_client_error_never_leaks_and_keeps_keyword_order(
    tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    session = _session(tmp_path / "ws", tmp_path / "state")
    sampler = ScriptedSampler(parse_script([{"raise": kind}]))
    async with Client(
        build_server(session, client_model=True), mode="legacy", sampling_callback=sampler
    ) as client:
        result = await client.call_tool("memory_search", QUERY)
    text = text_of(result)
    assert text.startswith("Memory ranking ") and "Using keyword order.\n\n1. [c.md:3]" in text
    assert FAKE_SECRET not in text and FAKE_SECRET not in caplog.text
    assert FAKE_SECRET not in json.dumps(result.structured_content)


async def test_a_client_that_hangs_past_three_seconds_loses_the_race(tmp_path: Path) -> None:
    session = _session(tmp_path / "ws", tmp_path / "state")  # the real 3-second timeout
    hangs = ScriptedSampler(parse_script([{"hang": True}]))
    async with Client(
        build_server(session, client_model=True), mode="legacy", sampling_callback=hangs
    ) as client:
        result = await client.call_tool("memory_search", QUERY)
    assert text_of(result).startswith("Memory ranking failed: timeout. Using keyword order.\n\n")


async def test_a_declined_sampling_request_is_cancelled_not_a_cooldown(tmp_path: Path) -> None:
    from mcp.types import ErrorData

    session = _session(tmp_path / "ws", tmp_path / "state")
    answers = iter(
        [
            ErrorData(code=-1, message="User rejected sampling request"),
            CreateMessageResult(
                role="assistant", content=TextContent(type="text", text="[1, 0, 2]"), model="m"
            ),
        ]
    )

    async def decline_then_answer(
        context: Any, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        return next(answers)

    async with Client(
        build_server(session, client_model=True),
        mode="legacy",
        sampling_callback=decline_then_answer,
    ) as client:
        declined = await client.call_tool("memory_search", QUERY)
        answered = await client.call_tool("memory_search", QUERY)
    assert text_of(declined).startswith("Memory ranking failed: cancelled. Using keyword order.")
    assert _first_paths(text_of(answered))[0] == "a.md"
