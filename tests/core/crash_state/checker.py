"""Run store operations under the recorder, then open every crash state and check the promises.

A scenario is a list of :class:`Step`\\ s run in order on one store; the recorder marks the
moment each returned (its acknowledgement). For every cut point in the trace and every state
the model (:mod:`tests.core.crash_state.model`) says a power cut there may leave, the state is
written to a fresh workspace folder and opened as the next process would:

1. with a fresh ``RecordStore``: the file decodes; if it does not, ``doctor`` must name the
   problem (a diagnosis: a torn tail, say) and ``doctor --fix`` must repair it;
2. every step acknowledged before the cut keeps its promise (a remembered fact is active, a
   correction stands, a forgotten fact's text is gone) and the records are those of the last
   acknowledged file or of the step in flight: a write lands whole or not at all;
3. a forgotten text is in no file except the staging files the next writer removes, and once
   ``doctor`` and the next write have run it is in no file at all, and every promise still holds.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.core.crash_state.model import CrashState, FileSystem, crash_states
from tests.core.crash_state.recorder import Call, Recorder
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.errors import CorruptError, MemoryRecordError
from memquill.store._codec import identity_bytes
from memquill.store._memo import decode_snapshot
from memquill.store._record import Record
from memquill.store._results import Snapshot
from memquill.store._secrets import SecretScanner

__all__ = ["Outcome", "Step", "check_scenario", "record_scenario"]

Promise = Callable[[Snapshot], str | None]
"""What an acknowledged step promises of every later state: ``None``, or what is wrong."""
Invariant = Callable[[Snapshot, Mapping[str, bytes]], str | None]
"""What holds at every cut, of the records and the files (workspace-relative paths)."""

STAGING_PREFIX = ".records-"
STAGING_SUFFIX = ".tmp"


@dataclass(frozen=True)
class Step:
    """One store call to record.

    Attributes:
        name: for messages (``remember``, ``forget``...).
        run: the call, on the store under test.
        promise: what must hold once it returned.
        forgets: texts that must be gone from disk once it returned.
        always: what must hold at every cut, even while it runs (a fact that is in a conflict
            copy until the merged file holds it).
    """

    name: str
    run: Callable[[RecordStore], object]
    promise: Promise
    forgets: tuple[str, ...] = ()
    always: Invariant | None = None


@dataclass
class Recorded:
    """A recorded scenario: the trace, the model at its start, and the records each step left."""

    root: str
    calls: list[Call]
    model: FileSystem
    versions: list[tuple[Record, ...]]
    steps: Sequence[Step]
    capacity: int | None


@dataclass
class Outcome:
    """What checking found: counts for the report, and the problems (empty: every promise
    held)."""

    cuts: int = 0
    states: int = 0
    distinct: int = 0
    repaired: int = 0
    staging_left: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list[str])

    def summary(self, name: str) -> str:
        return (
            f"{name}: {self.cuts} cut points, {self.states} crash states "
            f"({self.distinct} distinct) checked in {self.seconds:.2f} s; "
            f"{self.repaired} repaired by doctor --fix, {self.staging_left} with a staging file"
        )


def record_scenario(
    workspace: Path,
    steps: Sequence[Step],
    *,
    capacity: int | None = None,
    drop: Callable[[Call], bool] = lambda call: False,
) -> Recorded:
    """Run ``steps`` on the store of ``workspace`` under the recorder (``drop``: calls to
    leave out, a deliberately broken build)."""
    root = os.path.realpath(workspace)
    store = RecordStore(workspace, capacity=capacity)
    identity = identity_bytes(Path(root))
    versions = [_records(identity, root)]
    model = FileSystem.from_disk(root)
    recorder = Recorder(root, drop=drop)
    with recorder.active():
        for step in steps:
            step.run(store)
            recorder.mark(f"{step.name} returned")
            versions.append(_records(identity, root))
    return Recorded(root, recorder.calls, model, versions, steps, capacity)


def _records(identity: bytes, root: str) -> tuple[Record, ...]:
    path = Path(root, "memory", "records.md")
    raw = path.read_bytes() if path.exists() else b""
    return tuple(decode_snapshot(identity, raw).records)


def check_scenario(recorded: Recorded, scratch: Path, *, limit: int = 48) -> Outcome:
    """Open every crash state of ``recorded`` in a folder under ``scratch``."""
    started = time.perf_counter()
    outcome = Outcome()
    with _unsynced():
        _check_cuts(recorded, scratch, limit, outcome)
    outcome.seconds = time.perf_counter() - started
    return outcome


@contextmanager
def _unsynced() -> Generator[None]:
    """The copies opened here are scratch: syncing them would only cost time."""
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


def _check_cuts(recorded: Recorded, scratch: Path, limit: int, outcome: Outcome) -> None:
    seen: dict[tuple[str, int], list[str]] = {}
    calls = recorded.calls
    for cut, states in crash_states(calls, recorded.root, recorded.model, limit=limit):
        outcome.cuts += 1
        acked = sum(1 for call in calls[:cut] if call.op == "mark")
        where = f"cut {cut}/{len(calls)}" + (f" after {calls[cut - 1].describe()}" if cut else "")
        for state in states:
            outcome.states += 1
            key = (state.digest, acked)
            if key not in seen:
                outcome.distinct += 1
                seen[key] = _check_state(recorded, state, acked, scratch, outcome)
            for problem in seen[key]:
                if len(outcome.problems) < 200:
                    outcome.problems.append(f"{where} ({state.how}): {problem}")


def _check_state(
    recorded: Recorded, state: CrashState, acked: int, scratch: Path, outcome: Outcome
) -> list[str]:
    folder = scratch / f"state-{outcome.distinct}"
    folder.mkdir()
    try:
        state.materialise(folder)
        return _open_state(recorded, state, acked, folder, outcome)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _open_state(
    recorded: Recorded, state: CrashState, acked: int, folder: Path, outcome: Outcome
) -> list[str]:
    problems: list[str] = []
    steps = recorded.steps[:acked]
    forgotten = [text for step in steps for text in step.forgets]
    if any(_is_staging(path) for path, _ in state.tree):
        outcome.staging_left += 1
    for path, content in state.tree:
        if content is None or _is_staging(path):
            continue
        for text in forgotten:
            if text.encode() in content:
                problems.append(f"forgotten text is back in {path}")
    # Secret detection is not what this checks; the built-in detectors would be most of the time.
    store = RecordStore(
        folder, capacity=recorded.capacity, lock_timeout=5, secrets=SecretScanner(())
    )
    try:
        snapshot = store.snapshot()
    except CorruptError:
        report = store.doctor()
        if report.ok or (report.error is None and report.diagnosis is None):
            return [*problems, f"the file does not decode and doctor names no problem: {report}"]
        fixed = store.doctor(fix=True)
        try:
            snapshot = store.snapshot()  # however doctor reports it, the file must now decode
        except CorruptError:
            refused = fixed.repair.refused if fixed.repair else None
            return [*problems, f"doctor --fix did not repair {report.diagnosis}: {refused}"]
        outcome.repaired += 1
    except MemoryRecordError as error:
        return [*problems, f"the store cannot be opened: {error.code}: {error.message}"]
    problems += _promises(recorded, snapshot, acked, "after the cut")
    files = {path: content for path, content in state.tree if content is not None}
    for step in recorded.steps:
        broken = step.always(snapshot, files) if step.always else None
        if broken is not None:
            problems.append(f"{step.name} broke its invariant: {broken}")
    allowed = recorded.versions[acked : acked + 2]
    if snapshot.records not in allowed:
        kept = {record.id for record in snapshot.records}
        lost = [record.id for record in allowed[0] if record.id not in kept]
        problems.append(
            (f"lost {len(lost)} acknowledged record(s) of {len(allowed[0])}; " if lost else "")
            + f"the {len(snapshot.records)} records are neither the last acknowledged file's "
            "nor the in-flight write's: a write landed in part"
        )
    try:
        report = store.doctor(fix=True)
        if report.error is not None:
            problems.append(f"doctor --fix leaves an error: {report.error}")
        store.save([manual(f"The next writer after cut {state.cut} ran.")])
        after = store.snapshot()
    except MemoryRecordError as error:
        return [*problems, f"doctor or the next write failed: {error.code}: {error.message}"]
    problems += _promises(recorded, after, acked, "after the next write")
    for path in _files(folder):
        data = path.read_bytes()
        for text in forgotten:
            if text.encode() in data:
                problems.append(
                    f"forgotten text is back in {path.relative_to(folder)} after the next write"
                )
    return problems


def _promises(recorded: Recorded, snapshot: Snapshot, acked: int, when: str) -> list[str]:
    problems: list[str] = []
    for step in recorded.steps[:acked]:
        broken = step.promise(snapshot)
        if broken is not None:
            problems.append(f"lost an acknowledged {step.name} ({when}): {broken}")
    return problems


def _is_staging(relative: str) -> bool:
    name = os.path.basename(relative)
    return name.startswith(STAGING_PREFIX) and name.endswith(STAGING_SUFFIX)


def _files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file() and not path.is_symlink()]


# -- promises ----------------------------------------------------------------------------------


def active(content: str) -> Promise:
    """A fact with exactly this text is active."""

    def promise(snapshot: Snapshot) -> str | None:
        if any(record.content == content for record in _active(snapshot)):
            return None
        return f"no active record says {content[:40]!r}"

    return promise


def corrected(old: str, new: str) -> Promise:
    """``new`` is active and ``old`` is not."""

    def promise(snapshot: Snapshot) -> str | None:
        texts = [record.content for record in _active(snapshot)]
        if new not in texts:
            return f"the correction to {new[:40]!r} is missing"
        if old in texts:
            return f"{old[:40]!r} is active again"
        return None

    return promise


def gone(content: str) -> Promise:
    """No record, in any version, holds ``content``."""

    def promise(snapshot: Snapshot) -> str | None:
        if any(content in record.content for record in snapshot.records):
            return f"forgotten {content[:40]!r} is back"
        return None

    return promise


def all_of(*promises: Promise) -> Promise:
    def promise(snapshot: Snapshot) -> str | None:
        return next((p for p in (check(snapshot) for check in promises) if p), None)

    return promise


def _active(snapshot: Snapshot) -> list[Record]:
    return [record for record in snapshot.records if record.status == "active"]


def describe(calls: Sequence[Call]) -> str:
    """The trace, one call a line (for a failing test's message)."""
    return "\n".join(f"{index:3} {call.describe()}" for index, call in enumerate(calls))
