"""The signals failure classification looks for: class names, codes, statuses, fixed phrases.

Kept apart from the rules (:mod:`memquill.enhance._classify`) so the vocabulary of the provider
stacks memquill knows (OpenAI, Anthropic, httpx and httpx2, LangChain, LlamaIndex, MCP, the
standard library) can grow without touching the logic. Every name here is matched against an
exception's class or one of its bases; every code against its ``code``, ``errno``, ``type`` or
JSON-RPC ``error.code``; every phrase against at most the first 300 characters of its message,
which is never kept.
"""

from __future__ import annotations

import re
from typing import Final

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
