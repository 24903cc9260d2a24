"""Who may talk to the management page, checked before any handler runs.

The page serves one workspace on a loopback address, and a browser will happily send requests
there from any site it visits. So every request must name a loopback host in ``Host`` (a site
that rebinds its DNS name to 127.0.0.1 still sends its own name), must not come from another
site (``Origin`` and ``Sec-Fetch-Site``), and a change must carry a same-origin ``Origin`` and a
JSON body: a cross-site form can send neither without the browser asking first, and this server
never answers that question. Bodies are read with a hard limit, whatever ``Content-Length`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from starlette.requests import Request

LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})

MAX_BODY_BYTES: Final = 64 * 1024
"""Room for the largest fact (16,000 UTF-16 units, at most 48,000 UTF-8 bytes) plus its JSON."""

_SITES: Final = frozenset({"same-origin", "none"})


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request was refused: its HTTP status, the error code and the words shown."""

    status: int
    code: str
    message: str


FOREIGN_HOST: Final = Refusal(
    403,
    "forbidden",
    "This page only answers at this computer's own address (127.0.0.1, localhost or [::1]).",
)
FOREIGN_SITE: Final = Refusal(
    403, "forbidden", "Requests from other sites are refused; use the page itself."
)
NO_ORIGIN: Final = Refusal(
    403, "forbidden", "Changes must come from the page itself (the request had no Origin)."
)
NOT_JSON: Final = Refusal(415, "invalid", "Changes must be sent as application/json.")
TOO_LARGE: Final = Refusal(413, "invalid", "Request is too large.")


def _host_name(host: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a ``Host`` value, or ``None`` when it cannot be parsed."""
    if host.startswith("["):  # an IPv6 literal: "[::1]" or "[::1]:8080"
        end = host.find("]") + 1
        name, rest = host[:end], host[end:]
        if not end or (rest and not rest.startswith(":")):
            return None
        sep, port = rest[:1], rest[1:]
    else:
        name, sep, port = host.partition(":")
    if sep and not (port.isascii() and port.isdigit()):
        return None
    return name.lower(), int(port) if port else None


def check_request(request: Request, *, write: bool, port: int | None = None) -> Refusal | None:
    """The refusal for ``request``, or ``None`` when it may proceed.

    Args:
        request: the incoming request.
        write: the request changes something (a ``POST``): it needs a same-origin ``Origin``
            and a JSON body.
        port: the port the server listens on, when known; another port in ``Host`` is refused.
    """
    hosts = request.headers.getlist("host")
    if len(hosts) != 1:
        return FOREIGN_HOST
    parsed = _host_name(hosts[0])
    if parsed is None or parsed[0] not in LOOPBACK_HOSTS:
        return FOREIGN_HOST
    if port is not None and parsed[1] != port:
        return FOREIGN_HOST
    origins = request.headers.getlist("origin")
    if len(origins) > 1:
        return FOREIGN_SITE
    if origins and origins[0].lower() != f"http://{hosts[0].lower()}":
        return FOREIGN_SITE
    sites = request.headers.getlist("sec-fetch-site")
    if len(sites) > 1 or (sites and sites[0].lower() not in _SITES):
        return FOREIGN_SITE
    if not write:
        return None
    if not origins:
        return NO_ORIGIN
    media = request.headers.get("content-type", "").split(";")
    charset = [part.strip().lower() for part in media[1:] if part.strip()]
    if media[0].strip().lower() != "application/json" or charset not in ([], ["charset=utf-8"]):
        return NOT_JSON
    return None


async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes | Refusal:
    """The body, read no further than ``limit`` bytes (``TOO_LARGE`` past it)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return TOO_LARGE
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return TOO_LARGE
        chunks.append(chunk)
    return b"".join(chunks)
