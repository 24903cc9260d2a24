"""Failure classification over real provider exceptions (spec 10.4 and 12.13, translated).

The OpenAI, Anthropic, httpx (and httpx2, which the MCP SDK uses) and MCP exceptions below are
the libraries' own classes, built the way their clients raise them; wrappers are what LangChain,
LlamaIndex and retry helpers do to them (``raise … from``, groups, a retry's last attempt).
"""

from __future__ import annotations

import socket
from concurrent.futures import Future

import anthropic
import httpx
import httpx2
import openai
import pytest
from langchain_core.exceptions import OutputParserException
from mcp.shared.exceptions import MCPError

from memquill.enhance._classify import Failure, classify
from memquill.testing._models import FAKE_SECRET, ScriptedProviderError


def _request() -> httpx.Request:
    return httpx.Request("POST", "https://api.example.test/v1/chat")


def _client_request() -> httpx2.Request:
    """A request as the OpenAI and Anthropic clients build it (on httpx2)."""
    return httpx2.Request("POST", "https://api.example.test/v1/chat")


def _openai(cls: type[openai.APIStatusError], status: int, code: str | None = None) -> Exception:
    # The client passes the response's "error" member as the body.
    body = {"message": f"no ({FAKE_SECRET})", "code": code} if code else None
    return cls(
        f"Error code: {status} {FAKE_SECRET}",
        response=httpx2.Response(status, request=_client_request()),
        body=body,
    )


def _anthropic(cls: type[anthropic.APIStatusError], status: int) -> Exception:
    return cls("no", response=httpx2.Response(status, request=_client_request()), body=None)


def _wrapped(error: BaseException) -> Exception:
    """What a framework does: re-raise its own error from the provider's."""
    try:
        try:
            raise error
        except BaseException as inner:
            raise RuntimeError("LLM call failed") from inner
    except RuntimeError as outer:
        return outer


class RetryError(Exception):
    """Shaped like tenacity's: the last attempt is a finished future."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("RetryError[<Future state=finished raised>]")
        self.last_attempt: Future[None] = Future()
        self.last_attempt.set_exception(error)


CASES: list[tuple[str, BaseException, str, str]] = [
    (
        "openai-401",
        _openai(openai.AuthenticationError, 401, "invalid_api_key"),
        "credentials",
        "user_action_required",
    ),
    (
        "openai-403",
        _openai(openai.PermissionDeniedError, 403),
        "credentials",
        "user_action_required",
    ),
    (
        "openai-429",
        _openai(openai.RateLimitError, 429, "rate_limit_exceeded"),
        "http_4xx",
        "user_action_required",
    ),
    ("openai-400", _openai(openai.BadRequestError, 400), "http_4xx", "user_action_required"),
    (
        "openai-404-model",
        _openai(openai.NotFoundError, 404, "model_not_found"),
        "model_unsupported",
        "user_action_required",
    ),
    ("openai-500", _openai(openai.InternalServerError, 500), "http_5xx", "transient_upstream"),
    (
        "openai-timeout",
        openai.APITimeoutError(request=_client_request()),
        "timeout",
        "transient_upstream",
    ),
    (
        "openai-connection",
        openai.APIConnectionError(request=_client_request()),
        "transport",
        "transient_upstream",
    ),
    (
        "openai-missing-key",
        openai.OpenAIError("The api_key client option must be set"),
        "credentials",
        "user_action_required",
    ),
    (
        "anthropic-401",
        _anthropic(anthropic.AuthenticationError, 401),
        "credentials",
        "user_action_required",
    ),
    (
        "anthropic-429",
        _anthropic(anthropic.RateLimitError, 429),
        "http_4xx",
        "user_action_required",
    ),
    ("anthropic-529", _anthropic(anthropic.OverloadedError, 529), "http_5xx", "transient_upstream"),
    (
        "anthropic-credentials",
        anthropic.CredentialsError("no credentials found"),
        "credentials",
        "user_action_required",
    ),
    (
        "httpx-status-503",
        httpx.HTTPStatusError(
            "503", request=_request(), response=httpx.Response(503, request=_request())
        ),
        "http_5xx",
        "transient_upstream",
    ),
    (
        "httpx-read-timeout",
        httpx.ReadTimeout("timed out", request=_request()),
        "timeout",
        "transient_upstream",
    ),
    (
        "httpx-connect",
        httpx.ConnectError("connection refused", request=_request()),
        "transport",
        "transient_upstream",
    ),
    (
        "httpx2-connect",
        httpx2.ConnectError("connection refused"),
        "transport",
        "transient_upstream",
    ),
    (
        "dns",
        socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
        "dns",
        "transient_upstream",
    ),
    (
        "reset",
        ConnectionResetError(104, "Connection reset by peer"),
        "transport",
        "transient_upstream",
    ),
    ("builtin-timeout", TimeoutError(), "timeout", "transient_upstream"),
    ("mcp-user-rejected", MCPError(-1, "User rejected sampling request"), "cancelled", "cancelled"),
    (
        "mcp-timeout",
        MCPError(-32001, "Timed out while waiting for response"),
        "timeout",
        "transient_upstream",
    ),
    (
        "mcp-no-capability",
        MCPError(-32021, "Client did not declare the sampling capability"),
        "model_unsupported",
        "user_action_required",
    ),
    ("mcp-closed", MCPError(-32000, "Connection closed"), "transport", "transient_upstream"),
    (
        "langchain-parse",
        OutputParserException("could not parse"),
        "no_output",
        "provider_protocol_fault",
    ),
    ("not-implemented", NotImplementedError(), "model_unsupported", "user_action_required"),
    ("aborted", RuntimeError("Request was aborted."), "cancelled", "cancelled"),
    (
        "structured-code",
        type("ProviderError", (Exception,), {"code": "PROVIDER_OAUTH_EXPIRED"})(),
        "credentials",
        "user_action_required",
    ),
    (
        "timeout-code",
        type("ProviderError", (Exception,), {"code": "PROVIDER_REQUEST_TIMEOUT"})(),
        "timeout",
        "transient_upstream",
    ),
    ("unexpected", KeyError("boom"), "other", "unknown"),
]


@pytest.mark.parametrize(
    ("error", "root", "outcome"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_real_exceptions(error: Exception, root: str, outcome: str) -> None:
    failure = classify(error)
    assert (failure.root_cause, failure.outcome) == (root, outcome)
    # Wrapped by a framework, inside a group, or kept by a retry helper: the same answer.
    for wrapper in (
        _wrapped(error),
        ExceptionGroup("calls", [KeyError("x"), error]),
        RetryError(error),
    ):
        assert classify(wrapper).root_cause == root


def test_only_transient_protocol_and_unknown_failures_are_reportable() -> None:
    reportable = {c[0] for c in CASES if classify(c[1]).should_report}
    assert reportable == {
        c[0] for c in CASES if c[3] in ("transient_upstream", "provider_protocol_fault", "unknown")
    }
    assert not classify(_openai(openai.RateLimitError, 429)).should_report


def test_status_class_is_recorded() -> None:
    assert classify(ScriptedProviderError("x", 503)) == Failure(
        "http_5xx", "transient_upstream", "5xx"
    )
    assert classify(ScriptedProviderError("x", 429)).status_class == "4xx"
    assert classify(TimeoutError()).status_class == "none"


def test_a_timeout_that_mentions_cancel_is_still_a_timeout() -> None:
    assert classify(RuntimeError("request cancelled: timed out after 30s")).root_cause == "timeout"


def test_the_walk_is_bounded_and_survives_cycles() -> None:
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__cause__, second.__cause__ = second, first
    assert classify(first).root_cause == "other"
    deep: BaseException = ScriptedProviderError("deep", 401)
    for level in range(6):
        outer = RuntimeError(f"level {level}")
        outer.__cause__ = deep
        deep = outer
    assert classify(deep).root_cause == "other", "evidence deeper than 4 levels is not read"


def test_a_broken_str_does_not_break_classification() -> None:
    class Weird(Exception):
        def __str__(self) -> str:
            raise ValueError("no text")

    assert classify(Weird()).root_cause == "other"
