"""Failure classification: what a model call's exception means, from allow-listed fields only.

A provider error travels wrapped (a LangChain or LlamaIndex call re-raising an OpenAI, Anthropic
or httpx error, a retry helper keeping the last attempt, an ``ExceptionGroup``), so the whole
cause chain is read, breadth first over ``__cause__``, ``__context__``, ``cause``, ``error``,
``last_error``, ``original_exception``, ``reason``, a retry's last attempt and the first four
``exceptions``/``errors`` (at most 16 exceptions, 4 levels deep). From each exception only these
are read: its class names (with bases), an HTTP status (``status_code``, ``status``,
``http_status``, ``response.status_code``, a JSON-RPC error's ``data.status``), a code
(``code``, ``errno``, ``type``, a JSON-RPC ``error.code``). The message is matched against a
few fixed phrases ("missing API key", "cancelled", …) for errors that carry no HTTP status; it
is never kept, logged or reported.

Rules, first match wins (the outcome decides telemetry, the root cause decides what the runner
does; only ``credentials`` ever blocks):

1. an HTTP 4xx: 401/403 → ``credentials``; an unknown-model code → ``model_unsupported``;
   else ``http_4xx`` (429 included: a cooldown, never a block);
2. a cancellation or user abort (not a timeout) → ``cancelled``;
3. credential evidence (codes, class names, fixed phrases) → ``credentials``;
4. an unsupported model or capability → ``model_unsupported``;
5. 5xx → ``http_5xx``; name resolution → ``dns``; timeouts → ``timeout``; connection
   failures → ``transport`` (all ``transient_upstream``);
6. an answer that could not be read → ``no_output``;
7. anything else → ``other`` (outcome ``unknown``).
"""

from __future__ import annotations

import errno as errno_codes
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal, cast

# ----------------------------------------------------------------------------------------------
# The signals failure classification looks for: class names, codes, statuses, fixed phrases.
#
# Kept apart from the rules (:mod:`memquill.enhance._classify`) so the vocabulary of the provider
# stacks memquill knows (OpenAI, Anthropic, httpx and httpx2, LangChain, LlamaIndex, MCP, the
# standard library) can grow without touching the logic. Every name here is matched against an
# exception's class or one of its bases; every code against its ``code``, ``errno``, ``type`` or
# JSON-RPC ``error.code``; every phrase against at most the first 300 characters of its message,
# which is never kept.


MAX_NODES: Final = 16
MAX_DEPTH: Final = 4
MESSAGE_UNITS: Final = 300
CHILDREN: Final = ("cause", "error", "last_error", "original_exception", "reason")
# Provider error "type" strings (Anthropic's and OpenAI's bodies), as the status they stand for.
TYPE_STATUS: Final = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
CREDENTIAL_CODES: Final = frozenset(
    {
        "authentication_error",
        "invalid_api_key",
        "missing_api_key",
        "incorrect_api_key",
        "invalid_authentication",
        "permission_denied",
        "unauthenticated",
        "unauthorized",
        "provider_credentials_unavailable",
        "provider_oauth_expired",
        "native_credentials_required",
    }
)
CREDENTIAL_NAMES: Final = frozenset(
    {
        "AuthenticationError",
        "PermissionDeniedError",
        "CredentialsError",
        "NoCredentialsError",
        "UnauthenticatedError",
        "LoadAPIKeyError",
        "MissingAPIKeyError",
    }
)
CREDENTIAL_TEXT: Final = re.compile(
    r"\b(?:missing|invalid|no|incorrect|bad|expired)\b[^.]{0,20}\bapi[ _-]?key"
    r"|\bapi[ _-]?key\b[^.]{0,40}"
    r"\b(?:missing|invalid|not (?:set|found|provided)|required|must be set)"
    r"|\bunauthori[sz]ed\b|\bforbidden\b|\bauthentication (?:failed|required)"
    r"|could not resolve authentication",
    re.IGNORECASE,
)
UNSUPPORTED_CODES: Final = frozenset(
    {"model_not_found", "unsupported_model", "model_not_supported", "not_implemented"}
)
UNSUPPORTED_NAMES: Final = frozenset({"NotImplementedError"})
CANCEL_NAMES: Final = frozenset({"CancelledError", "APIUserAbortError", "UserAbortError"})
CANCEL_TEXT: Final = re.compile(r"\b(?:abort|cancel)", re.IGNORECASE)
TIMEOUT_TEXT: Final = re.compile(r"time(?:d)? ?out", re.IGNORECASE)
DNS_NAMES: Final = frozenset({"gaierror"})
DNS_CODES: Final = frozenset({"eai_again", "enotfound", "eai_noname", "eai_fail"})
DNS_TEXT: Final = re.compile(
    r"name or service not known|nodename nor servname|getaddrinfo|temporary failure in name",
    re.IGNORECASE,
)
TIMEOUT_NAMES: Final = frozenset(
    {
        "TimeoutError",
        "TimeoutException",
        "ReadTimeout",
        "ConnectTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "APITimeoutError",
        "DeadlineExceededError",
    }
)
TIMEOUT_CODES: Final = frozenset({"etimedout", "provider_request_timeout", "-32001"})
TRANSPORT_NAMES: Final = frozenset(
    {
        "ConnectError",
        "ConnectionError",
        "ReadError",
        "WriteError",
        "RemoteProtocolError",
        "NetworkError",
        "TransportError",
        "APIConnectionError",
        "ServerDisconnectedError",
        "ClientConnectorError",
        "ClosedResourceError",
        "BrokenResourceError",
    }
)
TRANSPORT_CODES: Final = frozenset(
    {"econnreset", "econnrefused", "epipe", "enetunreach", "ehostunreach", "econnaborted", "-32000"}
)
NO_OUTPUT_NAMES: Final = frozenset(
    {
        "APIResponseValidationError",
        "OutputParserException",
        "LengthFinishReasonError",
        "ContentFilterFinishReasonError",
        "JSONDecodeError",
    }
)
MCP_USER_REJECTED: Final = "-1"
MCP_UNSUPPORTED: Final = frozenset({"-32021", "-32601"})  # capability missing, method not found


RootCause = Literal[
    "credentials",
    "http_4xx",
    "model_unsupported",
    "cancelled",
    "http_5xx",
    "dns",
    "timeout",
    "transport",
    "no_output",
    "other",
]
Outcome = Literal[
    "user_action_required", "cancelled", "transient_upstream", "provider_protocol_fault", "unknown"
]
StatusClass = Literal["4xx", "5xx", "none"]


@dataclass(frozen=True, slots=True)
class Failure:
    """A classified failure: enums only, nothing from the error's text.

    Attributes:
        root_cause: what went wrong.
        outcome: what it means for the operator (decides telemetry).
        status_class: ``4xx``/``5xx`` when an HTTP status was seen, else ``none``.
    """

    root_cause: RootCause
    outcome: Outcome
    status_class: StatusClass = "none"

    @property
    def should_report(self) -> bool:
        """Whether telemetry hears of it: credentials, 4xx, cancellations and unsupported
        models are the user's to fix (or nobody's) and never reported."""
        return self.outcome in ("transient_upstream", "provider_protocol_fault", "unknown")


@dataclass(slots=True)
class _Evidence:
    names: set[str]
    codes: set[str]
    statuses: list[int]
    texts: list[str]


def classify(error: BaseException) -> Failure:
    """Classify ``error`` (and its causes) by the rules in the module docstring."""
    seen = _gather(error)
    names, codes = seen.names, seen.codes
    # Phrases only speak for errors that carry no HTTP status: a 5xx stays a 5xx whatever
    # its message says.
    texts = " \n ".join(seen.texts) if not seen.statuses else ""
    status = seen.statuses[0] if seen.statuses else None
    if status is not None and 400 <= status < 500:
        if status in (401, 403):
            return Failure("credentials", "user_action_required", "4xx")
        if codes & UNSUPPORTED_CODES:
            return Failure("model_unsupported", "user_action_required", "4xx")
        return Failure("http_4xx", "user_action_required", "4xx")
    status_class: StatusClass = "5xx" if status is not None and status >= 500 else "none"
    timed_out = bool(names & TIMEOUT_NAMES or codes & TIMEOUT_CODES or TIMEOUT_TEXT.search(texts))
    if (
        names & CANCEL_NAMES
        or MCP_USER_REJECTED in codes
        or (not timed_out and CANCEL_TEXT.search(texts))
    ):
        return Failure("cancelled", "cancelled", status_class)
    if codes & CREDENTIAL_CODES or names & CREDENTIAL_NAMES or CREDENTIAL_TEXT.search(texts):
        return Failure("credentials", "user_action_required", status_class)
    if codes & (UNSUPPORTED_CODES | MCP_UNSUPPORTED) or names & UNSUPPORTED_NAMES:
        return Failure("model_unsupported", "user_action_required", status_class)
    if status_class == "5xx":
        return Failure("http_5xx", "transient_upstream", "5xx")
    if names & DNS_NAMES or codes & DNS_CODES or DNS_TEXT.search(texts):
        return Failure("dns", "transient_upstream")
    if timed_out:
        return Failure("timeout", "transient_upstream")
    if names & TRANSPORT_NAMES or codes & TRANSPORT_CODES:
        return Failure("transport", "transient_upstream")
    if names & NO_OUTPUT_NAMES:
        return Failure("no_output", "provider_protocol_fault")
    return Failure("other", "unknown")


def _gather(error: BaseException) -> _Evidence:
    evidence = _Evidence(set(), set(), [], [])
    queue: deque[tuple[BaseException, int]] = deque([(error, 0)])
    visited: list[BaseException] = []
    while queue and len(visited) < MAX_NODES:
        node, depth = queue.popleft()
        if any(node is other for other in visited):
            continue
        visited.append(node)
        _read(node, evidence)
        if depth < MAX_DEPTH:
            queue.extend((child, depth + 1) for child in _children(node))
    return evidence


def _read(node: BaseException, evidence: _Evidence) -> None:
    evidence.names.update(cls.__name__ for cls in type(node).__mro__)
    status = _status(node)
    if status is not None:
        evidence.statuses.append(status)
    for value in (getattr(node, "code", None), getattr(node, "type", None)):
        if isinstance(value, str) and value:
            evidence.codes.add(value.lower())
            mapped = TYPE_STATUS.get(value.lower())
            if mapped is not None and status is None:
                evidence.statuses.append(mapped)
        elif isinstance(value, int) and not isinstance(value, bool):
            evidence.codes.add(str(value))
    number = getattr(node, "errno", None)
    if isinstance(number, int) and not isinstance(number, bool):
        evidence.codes.add(errno_codes.errorcode.get(number, str(number)).lower())
    detail = getattr(node, "error", None)  # a JSON-RPC error object (MCP): its numeric code
    if detail is not None and not isinstance(detail, BaseException):
        code = getattr(detail, "code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            evidence.codes.add(str(code))
    try:
        text = str(node)
    except Exception:  # noqa: BLE001 - a broken __str__ just gives no text
        text = ""
    evidence.texts.append(text[:MESSAGE_UNITS])


def _status(node: BaseException) -> int | None:
    candidates: list[object] = [
        getattr(node, "status_code", None),
        getattr(node, "status", None),
        getattr(node, "http_status", None),
    ]
    response = getattr(node, "response", None)
    if response is not None:
        candidates += [getattr(response, "status_code", None), getattr(response, "status", None)]
    detail = getattr(node, "error", None)  # a JSON-RPC error (MCP): a client may pass the status
    data = getattr(detail, "data", None) if not isinstance(detail, BaseException) else None
    if isinstance(data, dict):
        fields = cast("dict[str, object]", data)
        candidates += [fields.get("status"), fields.get("statusCode")]
    for value in candidates:
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def _children(node: BaseException) -> Iterator[BaseException]:
    yield from (child for child in (node.__cause__, node.__context__) if child is not None)
    for name in CHILDREN:
        value = getattr(node, name, None)
        if isinstance(value, BaseException):
            yield value
    attempt = getattr(node, "last_attempt", None)  # a retry helper's last attempt (a future)
    if attempt is not None and callable(getattr(attempt, "exception", None)):
        try:
            failed = attempt.exception(timeout=0)
        except Exception:  # noqa: BLE001 - an unfinished or odd attempt holds no evidence
            failed = None
        if isinstance(failed, BaseException):
            yield failed
    for name in ("exceptions", "errors"):
        group = getattr(node, name, None)
        if isinstance(group, list | tuple):
            items: list[object] = list(group[:4])  # pyright: ignore[reportUnknownArgumentType]
            yield from (item for item in items if isinstance(item, BaseException))
