"""The HTTP API: ``GET /api/memory`` (the state) and ``POST /api/memory`` (one action).

Store errors keep their codes and messages and get clear HTTP statuses (spec 4.9: capacity 507,
corrupt 422, conflict and busy 409, invalid and secret 400, not found 404, anything else 500).
A conflict also carries what is there now (the store revision, and for an edit or a forget the
current version of that fact), so the page can show both versions and retry on the latest; an
edit of a version that was corrected meanwhile (``not_found`` naming the current one) is such a
conflict too.
"""

from __future__ import annotations

from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from memquill.errors import ConflictError, MemoryRecordError, Messages, NotFoundError
from memquill.manage._actions import (
    Action,
    CorrectAction,
    ForgetAction,
    Outcome,
    parse_action,
    perform,
)
from memquill.manage._guard import Refusal, read_body
from memquill.manage._state import Backend, State, error_json, latest_version, record_json

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
