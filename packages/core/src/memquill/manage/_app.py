"""The Starlette application: routes, the request guard, and the headers every answer carries.

Every request passes the guard first (loopback ``Host``, same-site ``Origin`` and
``Sec-Fetch-Site``; for a change also a same-origin ``Origin`` and JSON), then the token check
(:class:`memquill.web.TokenGuard`: the page's cookie or a bearer token). Every answer, refused
or not, says ``Cache-Control: no-store`` (records must not linger in a disk cache) and carries a
content security policy that allows only this server's own script and style, no framing and no
form posts elsewhere.
"""

from __future__ import annotations

from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Final

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memquill.errors import MemoryRecordError, MemquillError
from memquill.manage._api import get_memory, post_memory, refusal_response
from memquill.manage._guard import check_request
from memquill.manage._page import render_page
from memquill.manage._state import Backend, State
from memquill.query import SearchArgs, SearchResult, parse_args
from memquill.web import TokenGuard

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
