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
(:mod:`memquill.enhance._calls`), so the limit holds even for a model that blocks its thread:
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
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar

from memquill.enhance._calls import CallOverdue, is_loop_bound, run_call
from memquill.enhance._classify import Failure, classify
from memquill.enhance._entries import Entries, Entry
from memquill.enhance._identity import IdentityUnavailable, InstallKey, fingerprint, label_digest
from memquill.enhance._model import ModelDeferred, ModelIdentity
from memquill.enhance._receipts import BlockReceipt, BlockReceipts, PersistenceUnavailable
from memquill.enhance._results import (
    CREDENTIAL_BLOCK,
    IDENTITY_UNAVAILABLE,
    PERSISTENCE_UNAVAILABLE,
    AuxiliaryRequest,
    AuxiliaryResult,
    Reason,
    Scene,
    SceneStatus,
    Status,
)
from memquill.enhance._telemetry import Telemetry
from memquill.paths import user_data_dir

MAX_COOLDOWN: Final = 300.0
_TIMEOUT: Final = Failure("timeout", "transient_upstream")
_LOG: Final = logging.getLogger("memquill.enhance")


T = TypeVar("T")


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
