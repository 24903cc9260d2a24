"""The page over HTTP: who may talk to it, its API, the Starlette application, and serving it.

Every request passes the guard first (loopback ``Host``, same-site ``Origin`` and
``Sec-Fetch-Site``; for a change also a same-origin ``Origin`` and JSON), then the token check
(:class:`memquill.web.TokenGuard`: the page's cookie or a bearer token). Every answer, refused
or not, says ``Cache-Control: no-store`` (records must not linger in a disk cache) and carries a
content security policy that allows only this server's own script and style, no framing and no
form posts elsewhere.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Final
from urllib.parse import quote

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memquill.errors import ConflictError, MemoryRecordError, MemquillError, Messages, NotFoundError
from memquill.manage._actions import (
    Action,
    CorrectAction,
    ForgetAction,
    Outcome,
    parse_action,
    perform,
)
from memquill.manage._page import render_page
from memquill.manage._state import Backend, State, error_json, latest_version, record_json
from memquill.query import SearchArgs, SearchResult, parse_args
from memquill.web import LOGIN_PARAMETER, TokenGuard, bounded_protocol

# ----------------------------------------------------------------------------------------------
# Who may talk to the management page, checked before any handler runs.
#
# The page serves one workspace on a loopback address, and a browser will happily send requests
# there from any site it visits. So every request must name a loopback host in ``Host`` (a site
# that rebinds its DNS name to 127.0.0.1 still sends its own name), must not come from another
# site (``Origin`` and ``Sec-Fetch-Site``), and a change must carry a same-origin ``Origin`` and a
# JSON body: a cross-site form can send neither without the browser asking first, and this server
# never answers that question. Bodies are read with a hard limit, whatever ``Content-Length`` says.


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


# ----------------------------------------------------------------------------------------------
# The HTTP API: ``GET /api/memory`` (the state) and ``POST /api/memory`` (one action).
#
# Store errors keep their codes and messages and get clear HTTP statuses (spec 4.9: capacity 507,
# corrupt 422, conflict and busy 409, invalid and secret 400, not found 404, anything else 500).
# A conflict also carries what is there now (the store revision, and for an edit or a forget the
# current version of that fact), so the page can show both versions and retry on the latest; an
# edit of a version that was corrected meanwhile (``not_found`` naming the current one) is such a
# conflict too.


HTTP_STATUS: Final[dict[str, int]] = {
    "capacity": 507,
    "corrupt": 422,
    "conflict": 409,
    "busy": 409,
    "invalid": 400,
    "secret": 400,
    "not_found": 404,
}


def refusal_response(refusal: Refusal) -> JSONResponse:
    """The answer to a refused request: its status, code and words."""
    return JSONResponse({"error": refusal.code, "message": refusal.message}, refusal.status)


def _failure(error: MemoryRecordError, extra: dict[str, object] | None = None) -> JSONResponse:
    body: dict[str, object] = {"error": error.code, "message": error.message}
    if error.code == "corrupt":
        body["recordIndex"] = error_json(error)["recordIndex"]
    body.update(extra or {})
    return JSONResponse(body, HTTP_STATUS.get(error.code, 500))


def _backend(request: Request) -> Backend:
    backend: Backend = request.app.state.backend
    return backend


async def get_memory(request: Request) -> JSONResponse:
    """The revision, every record (all statuses), the doctor's report and the jobs status."""
    try:
        state = await run_in_threadpool(State.read, _backend(request))
    except MemoryRecordError as error:
        return _failure(error)
    return JSONResponse(state.to_json())


def _conflict_details(backend: Backend, action: Action) -> dict[str, object]:
    """What is there now, for a page whose view was stale."""
    try:
        snapshot = backend.session.store.snapshot()
    except MemoryRecordError:
        return {}
    details: dict[str, object] = {"revision": snapshot.revision}
    if isinstance(action, CorrectAction | ForgetAction):
        latest = latest_version(snapshot, action.id)
        details["latest"] = (
            record_json(snapshot, latest, backend.now()) if latest is not None else None
        )
    return details


def _run(backend: Backend, action: Action) -> Outcome | JSONResponse:
    try:
        return perform(backend, action, backend.now())
    except ConflictError as error:
        return _failure(error, _conflict_details(backend, action))
    except NotFoundError as error:
        if error.current_id is None:
            return _failure(error)
        # The page showed an older version of that fact: for the page that is a conflict, and
        # it shows the current version beside the edit.
        return _failure(ConflictError(Messages.STALE), _conflict_details(backend, action))
    except MemoryRecordError as error:
        return _failure(error)


async def post_memory(request: Request) -> JSONResponse:
    """Carry out one action (the guard has already checked host, origin and content type)."""
    body = await read_body(request)
    if isinstance(body, Refusal):
        return refusal_response(body)
    try:
        action = parse_action(body)
    except MemoryRecordError as error:
        return _failure(error)
    done = await run_in_threadpool(_run, _backend(request), action)
    if isinstance(done, JSONResponse):
        return done
    return JSONResponse(done.body, done.status)


SECURITY_HEADERS: Final[tuple[tuple[bytes, bytes], ...]] = (
    (b"cache-control", b"no-store"),
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        b"img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
_GUARDED: Final = frozenset(name for name, _ in SECURITY_HEADERS)
_ASSETS: Final = {"page.js": "text/javascript", "page.css": "text/css"}
_SEARCH_LIMIT: Final = 20


class _Guard:
    """ASGI middleware: refuse what :func:`check_request` refuses; add the security headers."""

    def __init__(self, app: ASGIApp, port: int | None) -> None:
        self._app = app
        self._port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[tuple[bytes, bytes]] = message.get("headers", [])
                kept = [(k, v) for k, v in headers if k.lower() not in _GUARDED]
                message["headers"] = [*kept, *SECURITY_HEADERS]
            await send(message)

        request = Request(scope)
        write = request.method not in ("GET", "HEAD")
        refusal = check_request(request, write=write, port=self._port)
        if refusal is not None:
            await refusal_response(refusal)(scope, receive, send_with_headers)
            return
        await self._app(scope, receive, send_with_headers)


def _page_data(backend: Backend, query: str) -> tuple[State, SearchResult | None]:
    state = State.read(backend)
    if not query:
        return state, None
    try:
        args = parse_args(SearchArgs, {"query": query, "limit": _SEARCH_LIMIT})
        return state, backend.session.query.search(args)
    except MemquillError as error:  # shown on the page as the search's own failure
        return state, SearchResult(error=error.message, error_code=error.code)


def _shown(workspace: Path) -> str:
    """The workspace as a person writes it: ``~/notes`` for a folder in the home directory."""
    try:
        return "~/" + workspace.relative_to(Path.home()).as_posix()
    except (ValueError, RuntimeError):  # outside the home folder, or no home to speak of
        return str(workspace)


async def _page(request: Request) -> Response:
    backend: Backend = request.app.state.backend
    query = request.query_params.get("q", "").strip()
    try:
        state, search = await run_in_threadpool(_page_data, backend, query)
    except MemoryRecordError as error:
        text = f"<!doctype html><title>Memory</title><p>{escape(error.message)}</p>"
        return HTMLResponse(text, 500)
    html = render_page(
        _shown(backend.session.workspace), state.to_json(), query=query, search=search
    )
    return HTMLResponse(html)


async def _asset(request: Request) -> Response:
    name = request.path_params["name"]
    media = _ASSETS.get(name)
    if media is None:
        return Response("Not found", 404, media_type="text/plain")
    data = files("memquill.manage").joinpath("assets", name).read_bytes()
    return Response(data, media_type=media)


async def _no_icon(request: Request) -> Response:
    del request  # browsers ask for an icon; the page has none
    return Response(status_code=204)


def cookie_name(port: int | None) -> str:
    """The page's cookie: one per port, as a browser keeps cookies per host, not per port."""
    return f"memquill-manage-{port or 0}"


def create_app(backend: Backend, *, token: str | None, port: int | None = None) -> ASGIApp:
    """The management app for ``backend``'s workspace.

    Args:
        backend: the workspace session, jobs source and clock the page works with.
        token: the secret every request must carry (:func:`memquill.web.load_token`); ``None``
            opens the page to every local user (the documented opt-out for one-person
            machines).
        port: the port the server listens on, when known; requests naming another are refused.
    """
    app = Starlette(
        routes=[
            Route("/", _page, methods=["GET"]),
            Route("/api/memory", get_memory, methods=["GET"]),
            Route("/api/memory", post_memory, methods=["POST"]),
            Route("/assets/{name}", _asset, methods=["GET"]),
            Route("/favicon.ico", _no_icon, methods=["GET"]),
        ]
    )
    app.state.backend = backend
    if token is None:
        return _Guard(app, port)
    return _Guard(TokenGuard(app, token, cookie=cookie_name(port), cookie_path="/"), port)


# ----------------------------------------------------------------------------------------------
# Serving the page: a socket bound to 127.0.0.1 (a free port unless one is asked for), uvicorn.
#
# The socket is bound before the server starts, so the URL (with the real port) is known and
# printed before the first request, and the app pins ``Host`` to that port.


LOOPBACK: Final = "127.0.0.1"
_STARTUP_TIMEOUT: Final = 30.0
"""Only stops a server that never comes up from hanging its caller; never a speed target."""


class ManageServer:
    """One workspace's management page on a loopback port.

    Args:
        backend: the workspace session, jobs source and clock.
        token: the secret every request must carry (:func:`memquill.web.load_token`); a
            browser brings it once in :attr:`login_url` and keeps it in a cookie. ``None``
            opens the page to every local user.
        port: the port to listen on; 0 (the default) picks a free one.

    Raises:
        OSError: the port cannot be bound (in use, or not allowed).
    """

    def __init__(self, backend: Backend, *, token: str | None, port: int = 0) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.bind((LOOPBACK, port))
        except OSError:
            self._socket.close()
            raise
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://{LOOPBACK}:{self.port}/"
        self.login_url = self.url
        """The address to open: :attr:`url` with the token, which the page trades for a cookie."""
        if token is not None:
            self.login_url += f"?{LOGIN_PARAMETER}={quote(token, safe='')}"
        config = uvicorn.Config(
            create_app(backend, token=token, port=self.port),
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            http=bounded_protocol(),  # idle and slow connections are dropped, their number capped
            ws="none",
        )
        self._server = uvicorn.Server(config)

    def serve(self, on_started: Callable[[], None] | None = None) -> None:
        """Serve until interrupted (Ctrl+C); ``on_started`` runs once requests are answered."""
        if on_started is not None:
            threading.Thread(target=self._after_start, args=(on_started,), daemon=True).start()
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._socket.close()

    def _after_start(self, callback: Callable[[], None]) -> None:
        if self._wait_started():
            callback()

    def _wait_started(self) -> bool:
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        while not self._server.started:
            if time.monotonic() > deadline or self._server.should_exit:
                return False
            time.sleep(0.02)
        return True

    @contextmanager
    def running(self) -> Generator[str]:
        """Serve in a background thread for the ``with`` block; yields :attr:`login_url`."""
        thread = threading.Thread(target=self.serve, daemon=True)
        thread.start()
        try:
            if not self._wait_started():
                raise TimeoutError("the management page did not start")
            yield self.login_url
        finally:
            self._server.should_exit = True
            thread.join(_STARTUP_TIMEOUT)
