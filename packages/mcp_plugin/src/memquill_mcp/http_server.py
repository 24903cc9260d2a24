"""Serving over streamable HTTP: loopback by default, Host/Origin checked, a bearer token required.

A memory server reads and writes a person's notes, so a web page must never reach it. Two
guards stand in the way:

- DNS-rebinding protection, always on: a request whose ``Host`` is not the server's own name is
  refused with 421, and one whose ``Origin`` is not an allowed origin with 403. On loopback the
  allowed names are ``127.0.0.1``, ``localhost`` and ``[::1]`` on any numeric port. memquill's
  own :class:`~memquill_mcp.host_guard.HostOriginGuard` checks first (the SDK's
  ``TransportSecuritySettings`` check, which takes ``localhost:evil.com`` for a port, stays
  behind it).
- A bearer token (:class:`memquill.web.TokenGuard`): required for every request, on loopback
  too (loopback is shared by every user and container of the host), compared in constant time.
  Only an explicit ``token=None`` on loopback serves without one. Any address other than
  loopback needs one of at least :data:`MIN_REMOTE_TOKEN` characters.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Final

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from memquill.web import TokenGuard
from memquill_mcp.host_guard import HostOriginGuard

__all__ = [
    "DEFAULT_PATH",
    "MIN_REMOTE_TOKEN",
    "http_app",
    "is_loopback",
    "transport_security",
]

DEFAULT_PATH: Final = "/mcp"
"""Where the MCP endpoint is served."""

MIN_REMOTE_TOKEN: Final = 32
"""The shortest bearer token a server on a non-loopback address accepts (characters)."""

_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS: Final = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - names we refuse to guess for


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or name) only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_security(
    host: str, allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = ()
) -> TransportSecuritySettings:
    """The Host/Origin checks for a server bound to ``host``.

    Args:
        host: the bind address.
        allowed_hosts: more ``Host`` values to accept (``name:port`` or ``name:*``); needed when
            clients reach the server under another name (a LAN name, a proxy).
        allowed_origins: more ``Origin`` values to accept (``scheme://name:port`` or ``…:*``).

    Raises:
        ValueError: ``host`` is a wildcard address and no ``allowed_hosts`` say which names
            clients use for it.
    """
    hosts = list(allowed_hosts)
    origins = list(allowed_origins)
    if is_loopback(host):
        hosts += [*_LOOPBACK_NAMES, *(f"{name}:*" for name in _LOOPBACK_NAMES)]
        origins += [f"http://{name}:*" for name in _LOOPBACK_NAMES]
    elif not hosts:
        if host in _WILDCARDS:
            raise ValueError(f"binding to {host!r} needs --allowed-host: the names clients use")
        bracketed = f"[{host}]" if ":" in host else host
        hosts += [bracketed, f"{bracketed}:*"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def http_app(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    path: str = DEFAULT_PATH,
    token: str | None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> ASGIApp:
    """``server`` as an ASGI application serving streamable HTTP at ``path``.

    Args:
        server: the server (from :func:`~memquill_mcp.build_server`).
        host: the address it will be bound to (decides the default Host/Origin checks).
        path: the endpoint path.
        token: the bearer token every request must carry (:func:`memquill.web.load_token`
            makes one); ``None`` serves without one, allowed on loopback only.
        allowed_hosts: see :func:`transport_security`.
        allowed_origins: see :func:`transport_security`.

    Raises:
        ValueError: see :func:`transport_security`; an empty ``token``, or a non-loopback
            ``host`` without a token of at least :data:`MIN_REMOTE_TOKEN` characters.
    """
    if not is_loopback(host) and (token is None or len(token) < MIN_REMOTE_TOKEN):
        raise ValueError(
            f"a server on {host} needs a bearer token of at least {MIN_REMOTE_TOKEN} characters"
        )
    security = transport_security(host, allowed_hosts, allowed_origins)
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=path, transport_security=security, host=host
    )
    app = HostOriginGuard(app, security.allowed_hosts, security.allowed_origins)
    return app if token is None else TokenGuard(app, token)
