"""The HTTP secret (one owner-only file) and the guard: a request carries it or is refused.

A request is let through when it has ``Authorization: Bearer <token>``, or (for a page, which a
browser opens) the page's cookie. A browser gets that cookie once: it opens the printed address
with ``?token=<token>`` and is sent back to the same path without it (303), the cookie set
``HttpOnly`` (no script reads it), ``SameSite=Strict`` (no other site's request carries it) and
``Path`` the page's path. Everything else gets 401 and reaches no handler: nothing is read or
written. Tokens are compared in constant time (:func:`hmac.compare_digest`), and the guard
never logs them.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

from memquill.errors import SourceError, UnsafePathError
from memquill.foundation.atomic import atomic_write
from memquill.foundation.safe_read import open_regular
from memquill.owner_only import private_folder
from memquill.paths import user_data_dir

# ----------------------------------------------------------------------------------------------
# The HTTP secret: one owner-only file in memquill's user data folder, made once, reused.
#
# Loopback is shared by every user and container of a host, so memquill's HTTP servers (the MCP
# server, the management page) answer only requests that carry a secret. When a person configures
# none, :func:`load_token` makes one: 32 random bytes as URL-safe text in ``http-token`` (mode
# ``0600``, folder ``0700``), written whole and published with a hard link, so two servers
# starting together agree on one token. An existing file is used only if it is a regular file
# (never a symlink or FIFO) that only its owner can read or write; anything else is refused, never
# quietly replaced.


TOKEN_FILE: Final = "http-token"  # noqa: S105 - the file's name, not a secret
"""The generated token's file name, in ``memquill`` under the user data folder."""

_MAX_TOKEN_BYTES: Final = 4096


def default_token_path() -> Path:
    """Where the generated token lives (nothing is created)."""
    return user_data_dir() / "memquill" / TOKEN_FILE


def load_token(path: Path | None = None) -> str:
    """The token in ``path`` (default :func:`default_token_path`), generated when missing.

    Raises:
        UnsafePathError: it cannot be made or read, or it is not a regular file only its owner
            can use, or it holds no token. The message names the file, never its content.
    """
    where = default_token_path() if path is None else path
    try:
        return read_token_file(where)
    except FileNotFoundError:
        pass
    try:
        private_folder(where.parent)
        with contextlib.suppress(FileExistsError):  # a racing start published first: use it
            atomic_write(where, secrets.token_urlsafe(32).encode("ascii"), exclusive=True)
    except OSError as error:
        raise UnsafePathError(f"cannot create the HTTP token {where}: {error.strerror}") from None
    return read_token_file(where)


def read_token_file(path: Path) -> str:
    """The token in ``path``: a regular file (never waited on) only its owner can use.

    Raises:
        FileNotFoundError: there is no such file.
        UnsafePathError: it is not a regular file, others may read or write it, it cannot be
            read, it is not UTF-8 text, or it is empty.
    """
    try:
        descriptor = open_regular(path)
    except FileNotFoundError:
        raise
    except (OSError, SourceError):
        raise UnsafePathError(f"the HTTP token {path} must be a regular file") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if os.name == "posix" and mode & 0o077:
            raise UnsafePathError(
                f"the HTTP token {path} is readable or writable by group or others (mode "
                f"{stat.S_IMODE(mode):03o}): run chmod 600 on it"
            )
        data = os.read(descriptor, _MAX_TOKEN_BYTES)
    except OSError as error:
        raise UnsafePathError(f"cannot read the HTTP token {path}: {error.strerror}") from None
    finally:
        os.close(descriptor)
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise UnsafePathError(f"the HTTP token {path} is not UTF-8 text") from None
    if not token:
        raise UnsafePathError(f"the HTTP token {path} is empty")
    return token


LOGIN_PARAMETER: Final = "token"
"""The query parameter a page's address carries the token in."""

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_App = Callable[[_Scope, _Receive, _Send], Awaitable[None]]

_REFUSED: Final = json.dumps(
    {
        "error": "unauthorized",
        "message": "A valid token is required: send Authorization: Bearer <token>, or open "
        "the address memquill printed (it carries the token).",
    }
).encode()


class TokenGuard:
    """ASGI middleware: 401 for every HTTP request without the token.

    Args:
        app: the application to protect.
        token: the secret; must not be empty.
        cookie: the cookie name a page keeps the token in (``None``: bearer tokens only, and
            ``?token=`` is not a login).
        cookie_path: the path the cookie is scoped to (the page's path).

    Raises:
        ValueError: an empty ``token``.
    """

    def __init__(
        self, app: _App, token: str, *, cookie: str | None = None, cookie_path: str = "/"
    ) -> None:
        if not token:
            raise ValueError("the token must not be empty")
        self._app = app
        self._token = token.encode()
        self._cookie = cookie
        self._cookie_path = cookie_path

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        """Check HTTP and WebSocket requests; pass lifespan events through."""
        if scope["type"] not in ("http", "websocket") or self._authorised(scope):
            await self._app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        login = self._login(scope)
        if login is not None:
            await _respond(send, 303, b"", login)
            return
        challenge = [(b"www-authenticate", b'Bearer realm="memquill"')]
        await _respond(send, 401, _REFUSED, [(b"content-type", b"application/json"), *challenge])

    def _matches(self, value: str) -> bool:
        # Constant-time, so response timing does not reveal how much of a guess was right.
        return hmac.compare_digest(value.strip().encode(), self._token)

    def _authorised(self, scope: _Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, credentials = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and self._matches(credentials):
                    return True
            elif name == b"cookie" and self._cookie is not None:
                held = _cookie(value.decode("latin-1"), self._cookie)
                if held is not None and self._matches(held):
                    return True
        return False

    def _login(self, scope: _Scope) -> list[tuple[bytes, bytes]] | None:
        """The redirect headers for a page opened with the right ``?token=`` (else ``None``)."""
        if self._cookie is None or scope.get("method") not in ("GET", "HEAD"):
            return None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [value for key, value in query if key == LOGIN_PARAMETER]
        if len(given) != 1 or not self._matches(given[0]):
            return None
        rest = urlencode([(key, value) for key, value in query if key != LOGIN_PARAMETER])
        location = scope.get("root_path", "") + scope["path"] + (f"?{rest}" if rest else "")
        cookie = (
            f"{self._cookie}={self._token.decode()}; Path={self._cookie_path}; HttpOnly; "
            "SameSite=Strict"
        )
        return [(b"location", location.encode()), (b"set-cookie", cookie.encode())]


def _cookie(header: str, name: str) -> str | None:
    try:
        jar = SimpleCookie(header)
    except CookieError:
        return None
    morsel = jar.get(name)
    return None if morsel is None else morsel.value


async def _respond(
    send: _Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})
