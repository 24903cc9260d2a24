"""Quiet telemetry: enum-only events about failed model calls, with a noise budget.

A failed model call becomes a :class:`ProviderEvent` only when someone can act on it: transient
upstream failures (5xx, timeouts, connection and name-resolution errors), protocol faults and
unknown failures. Credentials, other 4xx answers (429 included), cancellations and unsupported
models are the user's to fix and produce no event (a log line at INFO says what happened).

Events carry enums only (scene, root cause, outcome, provider family, status class) and an
integer: never a prompt, a path, a key or an exception message. They go to the standard
``logging`` logger ``memquill.enhance`` (WARNING) and to every connected sink; the plugin layer
connects the ``memquill_report_event`` hook.

Transient failures are budgeted per group (root cause + scene + provider family): at most 3
events per group per 15-minute window; the rest are counted, and the first event of a later
window carries that count in ``suppressed``. At most 256 groups are tracked: when full, expired
groups go first, and a new group is still let through (an unseen failure is never suppressed).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, get_args

from memquill.enhance._classify import Failure, Outcome, RootCause, StatusClass

EVENT_NAME: Final = "memquill.model_failure"
LOGGER: Final = logging.getLogger("memquill.enhance")
ProviderClass = Literal["langchain", "llamaindex", "mcp_sampling", "custom"]
Sink = Callable[["ProviderEvent"], None]
_MAX_SUPPRESSED: Final = 1_000_000
_SCENES: Final = frozenset({"memory_rerank", "memory_extract", "memory_embed"})


def provider_class(family: str) -> ProviderClass:
    """A model family as a telemetry enum (``custom`` for anything else)."""
    for known in get_args(ProviderClass):
        if family == known:
            return known
    return "custom"


@dataclass(frozen=True, slots=True)
class ProviderEvent:
    """One reportable model failure. Every field is an enum or an integer.

    Attributes:
        scene: ``memory_rerank``, ``memory_extract`` or ``unknown``.
        root_cause: see :func:`memquill.enhance._classify.classify`.
        outcome: ``transient_upstream``, ``provider_protocol_fault`` or ``unknown``.
        provider: the model family (``langchain``, ``llamaindex``, ``mcp_sampling``, ``custom``).
        status_class: ``4xx``, ``5xx`` or ``none``.
        suppressed: events of this group left out in the previous window.
        name: always ``memquill.model_failure``.
    """

    scene: str
    root_cause: RootCause
    outcome: Outcome
    provider: ProviderClass
    status_class: StatusClass
    suppressed: int = 0
    name: str = EVENT_NAME

    def attributes(self) -> dict[str, str | int]:
        """The event as flat attributes (for a span event, a metric, a Sentry tag set)."""
        return {
            "memquill.scene": self.scene,
            "memquill.failure.root_cause": self.root_cause,
            "memquill.failure.outcome": self.outcome,
            "memquill.provider": self.provider,
            "memquill.status_class": self.status_class,
            "memquill.suppressed": self.suppressed,
        }


class NoiseBudget:
    """At most ``limit`` events per group per ``window`` seconds, over at most ``groups`` groups.

    Args:
        limit: events allowed per group and window.
        window: the window, in seconds.
        groups: groups tracked at once.
        clock: seconds, monotonic (injectable for tests).
    """

    def __init__(
        self,
        *,
        limit: int = 3,
        window: float = 900.0,
        groups: int = 256,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limit, self._window, self._groups, self._clock = limit, window, groups, clock
        # group -> [window start, events this window, suppressed this window, carried over]
        self._state: dict[tuple[str, ...], list[float]] = {}
        self._lock = threading.Lock()

    def admit(self, group: tuple[str, ...]) -> tuple[bool, int]:
        """Whether an event of ``group`` may go out now, and the suppressed count it carries."""
        now = self._clock()
        with self._lock:
            state = self._state.get(group)
            if state is None:
                if len(self._state) >= self._groups:
                    self._drop_expired(now)
                if len(self._state) >= self._groups:
                    return True, 0  # full of live groups: an unseen failure is never suppressed
                state = self._state[group] = [now, 0.0, 0.0, 0.0]
            elif now - state[0] >= self._window:
                carried = min(state[3] + state[2], _MAX_SUPPRESSED)
                state[:] = [now, 0.0, 0.0, carried]
            if state[1] < self._limit:
                state[1] += 1
                carried, state[3] = int(state[3]), 0.0
                return True, carried
            state[2] = min(state[2] + 1, _MAX_SUPPRESSED)
            return False, 0

    def snapshot(self) -> dict[str, int]:
        """Counts only (no group names): tracked groups and events suppressed this window."""
        with self._lock:
            suppressed = sum(int(state[2]) for state in self._state.values())
            return {"groups": len(self._state), "suppressed": suppressed}

    def _drop_expired(self, now: float) -> None:
        for group in [g for g, s in self._state.items() if now - s[0] >= self._window]:
            del self._state[group]


class Telemetry:
    """Turns classified failures into budgeted events for logging and the connected sinks.

    Args:
        budget: the noise budget (3 per group per 15 minutes by default).
    """

    def __init__(self, *, budget: NoiseBudget | None = None) -> None:
        self.budget = budget or NoiseBudget()
        self._sinks: dict[str, Sink] = {}
        self._lock = threading.Lock()

    def connect(self, key: str, sink: Sink) -> None:
        """Send events to ``sink`` too; connecting the same ``key`` again replaces it."""
        with self._lock:
            self._sinks[key] = sink

    def disconnect(self, key: str) -> None:
        """Stop sending events to the sink connected under ``key``."""
        with self._lock:
            self._sinks.pop(key, None)

    def report(self, scene: str, failure: Failure, family: str) -> ProviderEvent | None:
        """Report one failed call; returns the event sent, or ``None`` when none was due.

        Only known scenes are named (anything else is ``unknown``), and only known families
        (anything else is ``custom``): no free text reaches an event.
        """
        provider = provider_class(family)
        scene = scene if scene in _SCENES else "unknown"
        if not failure.should_report:
            LOGGER.info(
                "model assistance: scene=%s cause=%s outcome=%s provider=%s (not reported)",
                scene,
                failure.root_cause,
                failure.outcome,
                provider,
            )
            return None
        suppressed = 0
        if failure.outcome == "transient_upstream":
            allowed, suppressed = self.budget.admit((failure.root_cause, scene, provider))
            if not allowed:
                return None
        event = ProviderEvent(
            scene, failure.root_cause, failure.outcome, provider, failure.status_class, suppressed
        )
        LOGGER.warning(
            "model assistance failed: scene=%s cause=%s outcome=%s provider=%s suppressed=%d",
            event.scene,
            event.root_cause,
            event.outcome,
            event.provider,
            event.suppressed,
        )
        with self._lock:
            sinks = list(self._sinks.values())
        for sink in sinks:
            try:
                sink(event)
            except Exception as error:  # noqa: BLE001 - a broken sink must not break a search
                LOGGER.warning("telemetry sink failed: %s", type(error).__name__)
        return event
