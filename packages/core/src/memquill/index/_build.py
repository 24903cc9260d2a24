"""Reading and analysing notes, in worker processes when there are many.

Notes are handed out in small *units* to whichever analyser is free, so every worker stays
busy to the end and progress is told as each unit is done. An analyser (:class:`Analyser`, in a
worker or in this process) gathers analysed notes into batches of up to ``batch_size`` notes,
sent back when full and at the end; this process stores each batch in one transaction as it
arrives (new notes take the next ids, so a batch extends each term's last postings block).
Only analysed batches (:mod:`._batch`) and counts cross back. Workers are fresh interpreters
running :mod:`._worker`: forking a process that may hold threads and locks is never safe, and
``multiprocessing`` would run the host program's main module again in each worker.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memquill.errors import SourceError
from memquill.index._analysis import analyse_note
from memquill.index._batch import AnalysedBatch, BatchBuilder
from memquill.paths import read_text_stat
from memquill.query import Identity, file_identity

UNIT: Final = 256
"""Notes handed out at a time."""
MAX_BATCH: Final = 8192
"""Most notes per batch (one transaction)."""
PARALLEL_FROM: Final = 1024
"""Fewer notes than this are analysed in this process (starting workers costs more)."""


@dataclass(frozen=True, slots=True)
class Start:
    """Tells an analyser how many notes make a batch."""

    batch_size: int


@dataclass(frozen=True, slots=True)
class Unit:
    """Notes to analyse: workspace paths with the identities the walk saw."""

    root: str
    items: tuple[tuple[str, Identity], ...]


@dataclass(frozen=True, slots=True)
class UnitDone:
    """A unit analysed: how many notes it held, and those that could not be read."""

    count: int
    errors: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Finish:
    """Tells an analyser to send what it gathered (a worker then exits)."""


class Analyser:
    """Reads, analyses and gathers notes into batches (in a worker or in this process)."""

    def __init__(self, start: Start) -> None:
        self._size = start.batch_size
        self._batch = BatchBuilder()

    def analyse(self, unit: Unit) -> tuple[UnitDone, AnalysedBatch | None]:
        """Analyse ``unit``; a batch too, if it filled one."""
        root = Path(unit.root)
        errors: list[tuple[str, str]] = []
        for path, _ in unit.items:
            # The time before reading: a note read within the racy window of its last
            # change is read again later (see ``._sync``).
            seen = time.time_ns()
            try:
                # The identity stored is the one of the file the text came from: if the
                # note changed since the walk, the next walk sees it as it was indexed.
                text, info = read_text_stat(root / path, note=True)
            except SourceError as error:
                errors.append((path, error.message))
                continue
            self._batch.add(analyse_note(path, text, file_identity(info)), seen)
        full = len(self._batch) >= self._size
        return UnitDone(len(unit.items), tuple(errors)), self.flush() if full else None

    def flush(self) -> AnalysedBatch | None:
        """The notes gathered since the last batch (``None``: none)."""
        if not len(self._batch):
            return None
        batch, self._batch = self._batch.build(), BatchBuilder()
        return batch


def run_units(
    root: Path,
    items: Sequence[tuple[str, Identity]],
    *,
    workers: int,
    done: Callable[[UnitDone], None],
    store: Callable[[AnalysedBatch], None],
) -> int:
    """Analyse ``items``, telling ``done`` of each unit and ``store`` of each batch (both
    in this thread). Returns how many analysers ran."""
    count = analysers(len(items), workers)
    # About two batches per analyser: few transactions, and a build killed midway has stored
    # some of its work.
    size = min(MAX_BATCH, max(UNIT, -(-len(items) // (2 * count))))
    units = [
        Unit(os.fspath(root), tuple(items[start : start + UNIT]))
        for start in range(0, len(items), UNIT)
    ]
    if count == 1:
        analyser = Analyser(Start(size))
        for unit in units:
            finished, batch = analyser.analyse(unit)
            if batch is not None:
                store(batch)
            done(finished)
        last = analyser.flush()
        if last is not None:
            store(last)
        return 1
    for message in _parallel([Start(size)] * count, units):
        if isinstance(message, UnitDone):
            done(message)
        else:
            store(message)
    return count


def analysers(notes: int, workers: int) -> int:
    """How many analysers ``notes`` notes get (1: this process)."""
    if workers <= 1 or notes < PARALLEL_FROM:
        return 1
    return min(workers, -(-notes // UNIT))


def worker_count() -> int:
    """Worker processes for a large build: the cores this process may use."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, cores)


def _parallel(starts: list[Start], units: list[Unit]) -> Iterator[UnitDone | AnalysedBatch]:
    """Analyse ``units`` in one child process per start, yielding what they send back.

    Children are fresh interpreters running :data:`._worker.PROGRAM` (never forks of
    this process, which may hold threads and locks); one thread per child feeds it units as it
    becomes free and relays its answers.
    """
    from memquill.index._worker import PROGRAM, read_message, write_message

    todo: queue.SimpleQueue[Unit] = queue.SimpleQueue()
    for unit in units:
        todo.put(unit)
    results: queue.SimpleQueue[UnitDone | AnalysedBatch | Finish | BaseException] = (
        queue.SimpleQueue()
    )
    children: list[subprocess.Popen[bytes]] = []

    def feed(child: subprocess.Popen[bytes], start: Start) -> None:
        try:
            assert child.stdin is not None and child.stdout is not None
            write_message(child.stdin, start)
            while True:
                try:
                    unit: Unit | Finish = todo.get_nowait()
                except queue.Empty:
                    unit = Finish()
                write_message(child.stdin, unit)
                while True:  # a batch may come before the unit's count
                    answer = read_message(child.stdout)
                    if not isinstance(answer, UnitDone | AnalysedBatch | Finish):
                        raise RuntimeError("index worker failed")
                    results.put(answer)
                    if not isinstance(answer, AnalysedBatch):
                        break
                if isinstance(answer, Finish):
                    return
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
            results.put(error)

    finished = False
    try:
        for start in starts:
            child = subprocess.Popen(
                [sys.executable, *PROGRAM],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            children.append(child)
            threading.Thread(target=feed, args=(child, start), daemon=True).start()
        running = len(starts)
        while running:
            message = results.get()
            if isinstance(message, BaseException):
                raise message
            if isinstance(message, Finish):
                running -= 1
            else:
                yield message
        finished = True
    finally:
        for child in children:
            if child.stdin is not None:
                child.stdin.close()
            if child.stdout is not None:
                child.stdout.close()
            if finished:
                # Every worker said it is done and now exits: reap it in the background.
                threading.Thread(target=child.wait, daemon=True).start()
                continue
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck child
                child.kill()
                child.wait()
