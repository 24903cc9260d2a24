"""Reading and analysing notes in batches, in worker processes when there are many.

A batch is read, analysed and encoded as one segment (:func:`build_batch`), in this process
or in a worker; only the encoded segment crosses back. Workers are fresh interpreters running
:mod:`._worker`: forking a process that may hold threads and locks is never safe, and
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
from memquill.index._analysis import NoteFigures, analyse_note
from memquill.index._writer import EncodedSegment, encode_segment
from memquill.paths import read_text_stat
from memquill.query._scan import Identity, file_identity

__all__ = ["BATCH", "MIN_BATCH", "Batch", "BatchResult", "build_batch", "run_batches"]

BATCH: Final = 2048
"""Most notes per batch (and per segment of a build)."""
MIN_BATCH: Final = 256
PARALLEL_FROM: Final = 1024
"""Fewer notes than this are analysed in this process (starting workers costs more)."""


@dataclass(frozen=True, slots=True)
class Batch:
    """Notes to analyse: workspace paths with the identities the walk saw, and their ids."""

    root: str
    first_id: int
    items: tuple[tuple[str, Identity], ...]


@dataclass(frozen=True, slots=True)
class BatchResult:
    """An encoded segment and the notes that could not be read (path, message)."""

    segment: EncodedSegment
    errors: tuple[tuple[str, str], ...]
    count: int


def build_batch(batch: Batch) -> BatchResult:
    """Read, analyse and encode one batch (runs in a worker or in this process)."""
    root = Path(batch.root)
    notes: list[NoteFigures] = []
    errors: list[tuple[str, str]] = []
    seen = time.time_ns()
    for path, _ in batch.items:
        try:
            # The identity stored is the one of the file the text came from: if the note
            # changed since the walk, the next walk sees it as it was indexed.
            text, info = read_text_stat(root / path)
        except SourceError as error:
            errors.append((path, error.message))
            continue
        notes.append(analyse_note(path, text, file_identity(info)))
    return BatchResult(encode_segment(batch.first_id, notes, seen), tuple(errors), len(batch.items))


def run_batches(
    batches: Sequence[Batch],
    *,
    workers: int,
    done: Callable[[BatchResult], None],
) -> None:
    """Build every batch, calling ``done`` (in this process) as each one finishes."""
    if workers <= 1 or sum(len(batch.items) for batch in batches) < PARALLEL_FROM:
        for batch in batches:
            done(build_batch(batch))
        return
    for result in _parallel(batches, workers):
        done(result)


def worker_count() -> int:
    """Worker processes for a large build: the cores this process may use."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, cores)


def _parallel(batches: Sequence[Batch], workers: int) -> Iterator[BatchResult]:
    """Build ``batches`` in ``workers`` child processes, yielding results as they arrive.

    Children are started as ``python -m memquill.index._worker`` (never by forking this
    process, which may hold threads and locks); one thread per child feeds it.
    """
    from memquill.index._worker import read_message, write_message

    todo: queue.SimpleQueue[Batch | None] = queue.SimpleQueue()
    results: queue.SimpleQueue[BatchResult | BaseException] = queue.SimpleQueue()
    for batch in batches:
        todo.put(batch)
    children: list[subprocess.Popen[bytes]] = []

    def feed(child: subprocess.Popen[bytes]) -> None:
        try:
            assert child.stdin is not None and child.stdout is not None
            while (batch := todo.get()) is not None:
                write_message(child.stdin, batch)
                result = read_message(child.stdout)
                if not isinstance(result, BatchResult):
                    raise RuntimeError("index worker failed")
                results.put(result)
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
            results.put(error)

    threads: list[threading.Thread] = []
    try:
        for _ in range(min(workers, len(batches))):
            child = subprocess.Popen(
                [sys.executable, "-m", "memquill.index._worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            children.append(child)
            todo.put(None)
            thread = threading.Thread(target=feed, args=(child,), daemon=True)
            thread.start()
            threads.append(thread)
        for _ in batches:
            result = results.get()
            if isinstance(result, BaseException):
                raise result
            yield result
    finally:
        for child in children:
            if child.stdin is not None:
                child.stdin.close()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck child
                child.kill()
                child.wait()
            if child.stdout is not None:
                child.stdout.close()
