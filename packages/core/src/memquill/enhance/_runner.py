"""The auxiliary runner: every model call memquill makes, failing honestly and quietly.

Per request (:meth:`AuxiliaryRunner.run`), before any model call:

1. the model's identity and the install key give the configuration's fingerprint (a failure
   there is ``unavailable: identity_unavailable``);
2. a credential failure that could not yet be persisted holds this configuration in memory:
   persisting is retried, and nothing is sent (``persistence_unavailable`` until it works);
3. a persistent block receipt for this fingerprint answers ``unavailable:
   credentials_missing`` (in every scene, scope and process, until the key changes);
4. the (scene, scope) entry of the same configuration answers ``cooldown: in_flight`` while a
   call is out (no coalescing: another prompt never receives this one's answer) and ``cooldown:
   request_failed`` until its retry time.

Then the model is called (120 s limit by default) on a call loop of its own
(:mod:`memquill.enhance._runner`), so the limit holds even for a model that blocks its thread:
past it the caller stops waiting, the late answer is dropped, and the call is ``failed:
timeout`` with a cooldown (reported as a ``timeout``); the scope stays ``in_flight`` until the
abandoned call has really ended. An empty answer is ``failed: empty_response`` with a
cooldown; an exception is classified
(:func:`~memquill.enhance._classify.classify`): credentials → a persistent block; a cancellation →
``failed: cancelled`` without cooldown; an unsupported model → ``unavailable:
model_unsupported``; anything else → ``failed: request_failed`` with a cooldown of 60 s doubling
to a 300 s cap. Cooldowns are process-local and per (scene, scope); entries are LRU-bounded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Sized
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar

from memquill.enhance._classify import Failure, classify
from memquill.enhance._model import (
    CREDENTIAL_BLOCK,
    IDENTITY_UNAVAILABLE,
    PERSISTENCE_UNAVAILABLE,
    AuxiliaryRequest,
    AuxiliaryResult,
    ModelDeferred,
    ModelIdentity,
    Reason,
    Scene,
    SceneStatus,
    Status,
)
from memquill.enhance._receipts import (
    BlockReceipt,
    BlockReceipts,
    IdentityUnavailable,
    InstallKey,
    PersistenceUnavailable,
    fingerprint,
    label_digest,
)
from memquill.enhance._telemetry import Telemetry
from memquill.paths import user_data_dir

# ----------------------------------------------------------------------------------------------
# Where model calls run, so that a budget holds even against a model that blocks its thread.
#
# A host's model may block the thread it runs on: an ``async def generate`` that calls
# ``time.sleep``, or a synchronous client inside one. On the caller's event loop such a call
# holds everything on that loop, the search waiting for it and the very timer that should cut it.
# So a model call runs on a **call loop**, an event loop on a daemon thread of its own, while the
# caller waits on its own loop for at most the call's budget. When the budget is spent the caller
# stops waiting at once (:class:`CallOverdue`), the call is cancelled on its loop, and its
# answer, if it ever comes, is dropped.
#
# - One call loop serves every call, so a model's async client keeps seeing the same loop, until
#   it is **stuck**: while it has calls it beats every :data:`BEAT` seconds, and it has not beaten
#   for :data:`GRACE` seconds (a model blocks it). New calls then go to a new call loop, and the
#   stuck one's thread ends as soon as its last call does. A call that ignores cancellation but
#   awaits leaves its loop free, and is simply kept until it ends.
# - At most :data:`MAX_STUCK` stuck loops are kept waiting for their calls; past that, new calls
#   go to the newest loop even when it is stuck (their callers still stop waiting at their
#   budgets). A model that never returns therefore costs at most ``MAX_STUCK + 1`` threads.
# - A model whose calls belong to the caller's loop says so with a class attribute
#   ``loop_bound = True`` (an MCP client's sampling requests travel on the server's session; a
#   framework's async client belongs to the application's loop). It runs on the caller's loop,
#   where its budget holds as far as it awaits.
#
# Every call runs in a copy of the caller's context (``contextvars``), as a task would.


BEAT: Final = 0.1
"""Seconds between a busy call loop's beats."""
GRACE: Final = 1.0
"""Seconds a busy call loop may go without beating before it counts as stuck."""
MAX_STUCK: Final = 4
"""Stuck call loops kept waiting for their calls to end (each holds one thread)."""

T = TypeVar("T")
Work = Callable[[], Coroutine[Any, Any, Any]]


class CallOverdue(Exception):
    """The call's budget was spent: the caller stopped waiting, the call was cancelled."""


def is_loop_bound(model: object) -> bool:
    """Whether ``model`` must run on its caller's event loop (``loop_bound = True``)."""
    return getattr(model, "loop_bound", False) is True


async def run_call(
    work: Callable[[], Coroutine[Any, Any, T]],
    timeout: float | None,
    *,
    here: bool,
    ended: Callable[[], None],
) -> T:
    """The answer of ``work()`` (a text, an embedder's vectors), awaited for at most
    ``timeout`` seconds (``None``: no limit).

    Args:
        work: makes the model call's coroutine.
        timeout: the budget.
        here: run on the caller's loop (a loop-bound model) instead of a call loop.
        ended: called once the call has really ended (before its answer is handed over, or
            long after an overdue or cancelled caller stopped waiting).

    Raises:
        CallOverdue: the budget was spent.
        asyncio.CancelledError: the caller was cancelled (the call is cancelled too).
        whatever the model raised.
    """
    if here:
        return await _run_here(work, timeout, ended)
    call = _POOL.start(work, contextvars.copy_context(), ended)
    waiting = asyncio.wrap_future(call.answer)
    try:
        done, _ = await asyncio.wait({waiting}, timeout=timeout)
    except asyncio.CancelledError:
        _POOL.abandon(call)
        raise
    if not done:
        _POOL.abandon(call)
        raise CallOverdue
    return waiting.result()


_KEPT: Final[set[asyncio.Task[Any]]] = set()


async def _run_here(
    work: Callable[[], Coroutine[Any, Any, T]], timeout: float | None, ended: Callable[[], None]
) -> T:
    task = asyncio.ensure_future(work())
    task.add_done_callback(lambda _: ended())
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        _abandon_here(task)
        raise
    if not done:
        _abandon_here(task)
        raise CallOverdue
    return task.result()


def _abandon_here(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and hold it until it ends (a model may ignore cancellation)."""
    task.cancel()
    _KEPT.add(task)
    task.add_done_callback(_collect)


def _collect(task: asyncio.Task[Any]) -> None:
    _KEPT.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: nobody waits for an abandoned call's outcome


class _Call:
    """One model call on a call loop."""

    def __init__(self, worker: _Worker, ended: Callable[[], None]) -> None:
        self.worker = worker
        self.answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.ended = ended
        self.task: asyncio.Task[Any] | None = None


class _Worker:
    """A call loop: an event loop running on a daemon thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pid = os.getpid()
        self.calls: set[_Call] = set()
        self.retired = False
        self.beating = False
        self.beaten_at = time.monotonic()
        self.thread = threading.Thread(target=self._run, name="memquill-model-call", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def stuck(self, now: float) -> bool:
        return bool(self.calls) and now - self.beaten_at > GRACE


class _Pool:
    """The process's call loops (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: _Worker | None = None
        self._stuck: set[_Worker] = set()

    def start(self, work: Work, context: contextvars.Context, ended: Callable[[], None]) -> _Call:
        with self._lock:
            worker = self._worker()
            call = _Call(worker, ended)
            worker.calls.add(call)
            beat = not worker.beating
            if beat:
                worker.beating, worker.beaten_at = True, time.monotonic()
        worker.loop.call_soon_threadsafe(self._begin, call, work, context)
        if beat:
            worker.loop.call_soon_threadsafe(self._beat, worker)
        return call

    def abandon(self, call: _Call) -> None:
        """The caller stopped waiting: cancel the call and drop whatever it answers."""
        call.answer.cancel()
        with suppress(RuntimeError):  # a closed loop: the call has ended already
            call.worker.loop.call_soon_threadsafe(self._cancel, call)

    def stuck_loops(self) -> int:
        """Stuck call loops still waiting for a call to end."""
        with self._lock:
            return len(self._stuck)

    def _worker(self) -> _Worker:
        current = self._current
        if current is not None and current.pid != os.getpid():
            current = None  # a forked child: the parent's threads are not here
        elif (
            current is not None and len(self._stuck) < MAX_STUCK and current.stuck(time.monotonic())
        ):
            current.retired = True
            self._stuck.add(current)
            current = None
        if current is None:
            current = self._current = _Worker()
        return current

    # -- on the call loop ------------------------------------------------------------------

    def _begin(self, call: _Call, work: Work, context: contextvars.Context) -> None:
        if call.answer.cancelled():  # abandoned before it began: never started
            self._end(call)
            return
        try:
            coroutine = context.run(work)
        except Exception as error:  # noqa: BLE001 - handed to the caller like any failure
            self._end(call)
            with suppress(concurrent.futures.InvalidStateError):
                call.answer.set_exception(error)
            return
        task = call.worker.loop.create_task(coroutine, context=context)
        call.task = task
        task.add_done_callback(lambda finished: self._finish(call, finished))

    def _beat(self, worker: _Worker) -> None:
        with self._lock:
            worker.beaten_at = time.monotonic()
            worker.beating = bool(worker.calls)  # an idle loop rests; the next call wakes it
        if worker.beating:
            worker.loop.call_later(BEAT, self._beat, worker)

    def _cancel(self, call: _Call) -> None:
        if call.task is not None:
            call.task.cancel()

    def _finish(self, call: _Call, task: asyncio.Task[Any]) -> None:
        self._end(call)
        answer = call.answer
        if answer.done():
            if not task.cancelled():
                task.exception()  # retrieved: an abandoned call's outcome is dropped
            return
        try:
            if task.cancelled():
                answer.cancel()
            elif (error := task.exception()) is not None:
                answer.set_exception(error)
            else:
                answer.set_result(task.result())
        except concurrent.futures.InvalidStateError:
            pass  # abandoned meanwhile: dropped

    def _end(self, call: _Call) -> None:
        try:
            call.ended()
        finally:
            with self._lock:
                worker = call.worker
                worker.calls.discard(call)
                if worker.retired and not worker.calls:
                    self._stuck.discard(worker)
                    worker.loop.stop()


_POOL: Final = _Pool()


def stuck_loops() -> int:
    """How many stuck call loops are waiting for their calls to end (for tests and status)."""
    return _POOL.stuck_loops()


# ----------------------------------------------------------------------------------------------
# The runner's process-local memory: one entry per (scene, scope), least recently used first.
#
# An entry belongs to one model configuration (its fingerprint): it says whether a call is out
# (``in_flight``), until when the scope cools down after a failure, how many failures in a row
# led there, and how the last call ended. Entries of another configuration are ignored, so a key
# change starts afresh. Nothing here touches disk or the network: cooldowns end with the process.


@dataclass(slots=True)
class Entry:
    """One (scene, scope)'s state for one configuration."""

    scene: Scene
    fingerprint: str
    digest: str
    failures: int = 0
    pending: bool = False
    retry_at: float | None = None
    last: AuxiliaryResult | None = None


class Entries:
    """The (scene, scope) table, bounded to ``capacity`` entries (LRU).

    Thread-safe: a runner may serve several event loops (the blocking bridge's and a host's).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._table: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def admit(
        self, scene: Scene, scope: str, fingerprint: str, digest: str, now: float
    ) -> Entry | AuxiliaryResult:
        """A fresh pending entry for a call, or why no call may go out now.

        ``cooldown: in_flight`` while this scope's call is out (no coalescing), ``cooldown:
        request_failed`` until its retry time; failures in a row carry over.
        """
        key = _key(scene, scope)
        with self._lock:
            previous = self._table.get(key)
            same = previous is not None and previous.fingerprint == fingerprint
            if previous is not None and same:
                if previous.pending:
                    return AuxiliaryResult("cooldown", "in_flight")
                if previous.retry_at is not None and previous.retry_at > now:
                    return AuxiliaryResult("cooldown", "request_failed", retry_at=previous.retry_at)
            carried = previous.failures if previous is not None and same else 0
            entry = Entry(scene, fingerprint, digest, failures=carried, pending=True)
            self._table[key] = entry
            self._table.move_to_end(key)
            while len(self._table) > self.capacity:
                self._table.popitem(last=False)
        return entry

    def status(
        self, scene: Scene, scope: str | None, fingerprint: str, label: str, now: float
    ) -> SceneStatus:
        """How ``scene`` stands for one configuration, in one scope or across all of them."""
        wanted = None if scope is None else _key(scene, scope)
        with self._lock:
            entries = [
                entry
                for key, entry in self._table.items()
                if entry.scene == scene
                and entry.fingerprint == fingerprint
                and (wanted is None or key == wanted)
            ]
        if any(entry.pending for entry in entries):
            return SceneStatus(scene, "in_flight", model=label)
        cooling = [e for e in entries if e.retry_at is not None and e.retry_at > now]
        if cooling:
            latest = max(cooling, key=lambda e: e.retry_at or 0.0)
            reason = latest.last.reason if latest.last is not None else "request_failed"
            return SceneStatus(scene, "cooling_down", reason, latest.retry_at, label)
        if any(e.last is not None and e.last.completed for e in entries):
            return SceneStatus(scene, "healthy", model=label)
        return SceneStatus(scene, "ready", model=label)


def _key(scene: str, scope: str) -> str:
    # Hashed: a scope may be a workspace path, which need not sit in memory as a dict key.
    return hashlib.sha256(f"{scene}\0{scope}".encode()).hexdigest()


MAX_COOLDOWN: Final = 300.0
_TIMEOUT: Final = Failure("timeout", "transient_upstream")
_LOG: Final = logging.getLogger("memquill.enhance")


class Identified(Protocol):
    """Anything the runner calls: a :class:`~memquill.enhance.TextModel`, an embedder."""

    @property
    def identity(self) -> ModelIdentity:
        """Who it is (cheap, never failing)."""
        ...


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One host call the runner makes (:meth:`AuxiliaryRunner.execute`).

    Attributes:
        scene: which feature asks.
        scope: whose request it is (cooldowns are per scene and scope).
        owner: the model or embedder called (its identity routes the call; a class attribute
            ``loop_bound = True`` keeps the call on the caller's loop).
        work: makes the call's coroutine.
        timeout: seconds before the call counts as a ``timeout`` failure (``None``: no limit).
    """

    scene: Scene
    scope: str
    owner: Identified
    work: Callable[[], Coroutine[Any, Any, T]]
    timeout: float | None = 120.0


def _empty(value: object) -> bool:
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, Sized) and len(value) == 0


def default_state_dir() -> Path:
    """``memquill/model-assistance`` in the user's data folder (install key and receipts)."""
    return user_data_dir() / "memquill" / "model-assistance"


@dataclass(frozen=True, slots=True)
class _Route:
    identity: ModelIdentity
    fingerprint: str
    digest: str


class AuxiliaryRunner:
    """Runs model calls for every scene, with cooldowns, blocks and telemetry.

    One runner per process is the intent (:func:`memquill.enhance.default_runner`): cooldowns
    are shared by everything in the process that calls the same model for the same scope.

    Args:
        state_dir: where the install key and block receipts live (default: the user's data
            folder; see :func:`default_state_dir`).
        cooldown: the first cooldown, in seconds (clamped to 0.001–300); it doubles per
            consecutive failure up to 300 s.
        max_entries: (scene, scope) entries kept (clamped to 1–512), least recently used first.
        clock: seconds since the epoch (injectable for tests).
        telemetry: where failures are reported (a quiet default: logging only).
    """

    def __init__(
        self,
        *,
        state_dir: Path | None = None,
        cooldown: float = 60.0,
        max_entries: int = 128,
        clock: Callable[[], float] = time.time,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.state_dir = state_dir or default_state_dir()
        self.telemetry = telemetry or Telemetry()
        self._key = InstallKey(self.state_dir)
        self._receipts = BlockReceipts(self.state_dir)
        self._cooldown = min(max(cooldown, 0.001), MAX_COOLDOWN)
        self._clock = clock
        self._entries = Entries(min(max(max_entries, 1), 512))
        self._latches: dict[str, str] = {}  # model label -> fingerprint of an unsaved block
        self._stale: set[str] = set()  # receipts of an older configuration, removed on success
        self._lock = threading.Lock()

    async def run(self, request: AuxiliaryRequest) -> AuxiliaryResult:
        """Call the model for ``request`` if nothing stands in the way (see the module doc).

        Never raises for a model failure. ``asyncio.CancelledError`` (the caller gave up) and
        :class:`~memquill.enhance.ModelDeferred` (the host answers later) pass through.
        """
        model, prompt, budget = request.model, request.prompt, request.max_tokens
        result, text = await self.execute(
            Call(
                request.scene,
                request.scope,
                model,
                lambda: model.generate(prompt, max_tokens=budget),
                request.timeout,
            )
        )
        return result if text is None else AuxiliaryResult("completed", text=text)

    async def execute(self, call: Call[T]) -> tuple[AuxiliaryResult, T | None]:
        """Run any host call (a text model's answer, an embedder's vectors) as :meth:`run` does.

        The same steps and statuses as a model call: identity, credential blocks, per (scene,
        scope) cooldowns and ``in_flight``, the call loop and its budget, failure
        classification and telemetry. Answers ``(completed result, value)``, or ``(the failure,
        None)``; a value that is empty (``""``, ``[]``) is ``failed: empty_response``.
        """
        route = self._route(call.owner)
        if isinstance(route, AuxiliaryResult):
            return route, None
        gate = self._gate(call.scene, route)
        if gate is not None:
            return gate, None
        entry = self._entries.admit(
            call.scene, call.scope, route.fingerprint, route.digest, self._clock()
        )
        if isinstance(entry, AuxiliaryResult):
            return entry, None
        try:
            value = await self._call(call, entry)
        except CallOverdue:
            return self._overdue(call.scene, route, entry), None
        except asyncio.CancelledError:
            entry.pending = False  # the caller gave up: the scope is free again
            entry.last = AuxiliaryResult("failed", "cancelled")
            raise
        except ModelDeferred:
            raise
        except Exception as error:  # noqa: BLE001 - every model failure is classified
            return self._failed(call.scene, route, entry, error), None
        if _empty(value):
            return self._settle(entry, self._cooled(entry, "failed", "empty_response")), None
        entry.failures, entry.retry_at = 0, None
        return self._settle(entry, AuxiliaryResult("completed")), value

    def fingerprint(self, model: Identified) -> str | None:
        """The keyed fingerprint of ``model``'s configuration (``None``: identity unavailable).

        Features that persist state about a configuration (the extraction ledger's
        ``routeFingerprint``) keep this, never the configuration itself; a changed key or
        setting gives another fingerprint. No model call, nothing written but the install key.
        """
        route = self._route(model)
        return None if isinstance(route, AuxiliaryResult) else route.fingerprint

    def status(
        self, scene: Scene, model: Identified | None, scope: str | None = None
    ) -> SceneStatus:
        """How ``scene`` stands for ``model`` (one scope, or all of them), without calling it.

        Only state of the current configuration counts: after a key change the old cooldowns
        and successes are not shown as this configuration's.
        """
        if model is None:
            return SceneStatus(scene, "not_configured")
        route = self._route(model)
        if isinstance(route, AuxiliaryResult):
            return SceneStatus(scene, "unavailable", route.reason)
        label = route.identity.label
        gate = self._gate_quietly(route)
        if gate is not None:
            state = "blocked" if gate.requires_configuration_change else "unavailable"
            return SceneStatus(scene, state, gate.reason, model=label)
        return self._entries.status(scene, scope, route.fingerprint, label, self._clock())

    # -- steps -----------------------------------------------------------------------------

    def _route(self, model: Identified) -> _Route | AuxiliaryResult:
        try:
            identity = model.identity
        except Exception as error:  # noqa: BLE001 - a host's model must never break a tool
            _LOG.warning("model assistance unavailable: model identity (%s)", type(error).__name__)
            return IDENTITY_UNAVAILABLE
        try:
            key = self._key.load()
        except IdentityUnavailable:
            return IDENTITY_UNAVAILABLE
        return _Route(identity, fingerprint(key, identity), label_digest(key, identity.label))

    def _gate(self, scene: Scene, route: _Route) -> AuxiliaryResult | None:
        label = route.identity.label
        with self._lock:
            latched = self._latches.get(label)
            if latched is not None and latched != route.fingerprint:
                del self._latches[label]  # the configuration changed: the old failure is moot
                latched = None
        if latched is not None:
            return self._persist_block(route)
        return self._gate_quietly(route, scene)

    def _gate_quietly(self, route: _Route, scene: Scene | None = None) -> AuxiliaryResult | None:
        with self._lock:
            if self._latches.get(route.identity.label) == route.fingerprint:
                return PERSISTENCE_UNAVAILABLE
        try:
            receipt = self._receipts.read(route.digest)
        except PersistenceUnavailable:
            return PERSISTENCE_UNAVAILABLE
        if receipt is not None:
            if receipt.fingerprint == route.fingerprint:
                return CREDENTIAL_BLOCK
            with self._lock:
                self._stale.add(route.digest)
        if scene is not None:
            with self._lock:
                if len(self._latches) >= self._entries.capacity:
                    return PERSISTENCE_UNAVAILABLE  # fail closed: never evict an unsaved block
        return None

    async def _call(self, call: Call[T], entry: Entry) -> T:
        def ended() -> None:
            entry.pending = False  # the call is over: the scope may call again

        return await run_call(call.work, call.timeout, here=is_loop_bound(call.owner), ended=ended)

    def _overdue(self, scene: Scene, route: _Route, entry: Entry) -> AuxiliaryResult:
        self.telemetry.report(scene, _TIMEOUT, route.identity.family)
        return self._settle(entry, self._cooled(entry, "failed", "timeout"))

    def _failed(
        self, scene: Scene, route: _Route, entry: Entry, error: Exception
    ) -> AuxiliaryResult:
        failure = classify(error)
        self.telemetry.report(scene, failure, route.identity.family)
        if failure.root_cause == "cancelled":
            return self._settle(entry, AuxiliaryResult("failed", "cancelled"))
        if failure.root_cause == "credentials":
            with self._lock:
                self._latches[route.identity.label] = route.fingerprint
            _LOG.warning(
                "model assistance blocked: scene=%s model=%s: the credentials were refused; "
                "change the key to unblock",
                scene,
                route.identity.label,
            )
            return self._settle(entry, self._persist_block(route))
        if failure.root_cause == "model_unsupported":
            return self._settle(entry, self._cooled(entry, "unavailable", "model_unsupported"))
        return self._settle(entry, self._cooled(entry, "failed", "request_failed"))

    def _persist_block(self, route: _Route) -> AuxiliaryResult:
        label = route.identity.label
        try:
            self._receipts.write(route.digest, BlockReceipt(label, route.fingerprint))
        except PersistenceUnavailable:
            return PERSISTENCE_UNAVAILABLE  # the latch stays: no call until it is saved
        with self._lock:
            if self._latches.get(label) == route.fingerprint:
                del self._latches[label]
        return CREDENTIAL_BLOCK

    def _cooled(self, entry: Entry, status: Status, reason: Reason) -> AuxiliaryResult:
        entry.failures += 1
        delay = min(self._cooldown * 2 ** min(entry.failures - 1, 3), MAX_COOLDOWN)
        entry.retry_at = self._clock() + delay
        return AuxiliaryResult(status, reason, retry_at=entry.retry_at)

    def _settle(self, entry: Entry, result: AuxiliaryResult) -> AuxiliaryResult:
        entry.last = result
        if result.completed and entry.digest in self._stale:
            # A receipt of an older configuration blocks nothing; tidy it once the new one works.
            with self._lock:
                self._stale.discard(entry.digest)
            self._receipts.remove(entry.digest)
        return result


_default: AuxiliaryRunner | None = None
_DEFAULT_LOCK: Final = threading.Lock()


def default_runner() -> AuxiliaryRunner:
    """The process's runner (made on first use): one set of cooldowns for the whole process."""
    global _default
    with _DEFAULT_LOCK:
        if _default is None:
            _default = AuxiliaryRunner()
        return _default
