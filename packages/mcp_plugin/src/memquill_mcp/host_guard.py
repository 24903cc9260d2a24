"""memquill's own ``Host``/``Origin`` check, in front of the MCP SDK's.

The SDK matches an allowed ``name:*`` by prefix, so ``Host: localhost:evil.com`` passes it; a
DNS-rebinding page can send such a header. :class:`HostOriginGuard` parses both headers strictly
(a host name or bracketed IPv6 address, and a port that is a number from 1 to 65535; an origin
``scheme://host[:port]`` and nothing more) and compares them with the allowed lists, where
``:*`` stands for any numeric port. What fails is refused exactly as the SDK would: 421 for the
host, 403 for the origin.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["HostOriginGuard", "parse_host", "parse_origin"]

_NAME: Final = r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)"
_PORT: Final = r"(?::(?P<port>[0-9]{1,5}))?"
_HOST: Final = re.compile(rf"{_NAME}{_PORT}")
_ORIGIN: Final = re.compile(rf"(?P<scheme>https?)://{_NAME}{_PORT}")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A parsed ``Host`` or ``Origin``: lowercase scheme (empty for a host), name and port."""

    scheme: str
    name: str
    port: int | None


def _endpoint(match: re.Match[str] | None, scheme: str = "") -> Endpoint | None:
    if match is None:
        return None
    port = match.group("port")
    if port is not None and not 0 < int(port) <= 65535:
        return None
    return Endpoint(scheme, match.group("name").lower(), None if port is None else int(port))


def parse_host(value: str) -> Endpoint | None:
    """``name[:port]`` with a numeric port, or ``None`` when it is anything else."""
    return _endpoint(_HOST.fullmatch(value))


def parse_origin(value: str) -> Endpoint | None:
    """``http(s)://name[:port]`` with a numeric port, or ``None`` when it is anything else."""
    match = _ORIGIN.fullmatch(value)
    return _endpoint(match, match.group("scheme").lower()) if match else None


@dataclass(frozen=True, slots=True)
class _Allowed:
    scheme: str
    name: str
    port: int | None
    any_port: bool

    def admits(self, endpoint: Endpoint) -> bool:
        if (endpoint.scheme, endpoint.name) != (self.scheme, self.name):
            return False
        return self.any_port or endpoint.port == self.port


def _allowed(values: Sequence[str], origin: bool) -> tuple[_Allowed, ...]:
    rules: list[_Allowed] = []
    for value in values:
        any_port = value.endswith(":*")
        parsed = (parse_origin if origin else parse_host)(value[:-2] if any_port else value)
        if parsed is None:
            raise ValueError(f"not a valid allowed {'origin' if origin else 'host'}: {value!r}")
        rules.append(_Allowed(parsed.scheme, parsed.name, parsed.port, any_port))
    return tuple(rules)


class HostOriginGuard:
    """Refuses HTTP requests whose ``Host`` (421) or ``Origin`` (403) is not allowed.

    Args:
        app: the application to protect.
        allowed_hosts: ``name``, ``name:port`` or ``name:*`` (any numeric port).
        allowed_origins: ``scheme://name[:port]`` or ``scheme://name:*``; a request without an
            ``Origin`` (not from a browser) is not checked for one.

    Raises:
        ValueError: an allowed entry that is not a valid host or origin.
    """

    def __init__(
        self, app: ASGIApp, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]
    ) -> None:
        self._app = app
        self._hosts = _allowed(allowed_hosts, origin=False)
        self._origins = _allowed(allowed_origins, origin=True)

    def host_allowed(self, value: str | None) -> bool:
        """Whether a ``Host`` header value is allowed."""
        endpoint = parse_host(value) if value else None
        return endpoint is not None and any(rule.admits(endpoint) for rule in self._hosts)

    def origin_allowed(self, value: str | None) -> bool:
        """Whether an ``Origin`` header value (``None``: absent) is allowed."""
        if value is None:
            return True
        endpoint = parse_origin(value)
        return endpoint is not None and any(rule.admits(endpoint) for rule in self._origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check HTTP requests; pass lifespan events through."""
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            refusal: Response | None = None
            if not self.host_allowed(headers.get("host")):
                refusal = Response("Invalid Host header", status_code=421)
            elif not self.origin_allowed(headers.get("origin")):
                refusal = Response("Invalid Origin header", status_code=403)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)
