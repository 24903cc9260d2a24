"""The runner's process-local memory: one entry per (scene, scope), least recently used first.

An entry belongs to one model configuration (its fingerprint): it says whether a call is out
(``in_flight``), until when the scope cools down after a failure, how many failures in a row
led there, and how the last call ended. Entries of another configuration are ignored, so a key
change starts afresh. Nothing here touches disk or the network: cooldowns end with the process.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

from memquill.enhance._results import AuxiliaryResult, Scene, SceneStatus


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
