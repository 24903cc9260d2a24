"""Reading and analysing notes, in worker processes when there are many, in batches.

Notes are handed out in small *units* to whichever analyser is free, so every worker stays
busy to the end and progress is told as each unit is done. An analyser (:class:`Analyser`, in a
worker or in this process) gathers analysed notes into batches of up to ``batch_size`` notes,
sent back when full and at the end; this process stores each batch in one transaction as it
arrives (new notes take the next ids, so a batch extends each term's last postings block).
Only analysed batches and counts cross back. Workers are fresh interpreters running
:mod:`._worker`: forking a process that may hold threads and locks is never safe, and
``multiprocessing`` would run the host program's main module again in each worker.

A batch (:class:`AnalysedBatch`) is analysed notes as an analyser hands them to the writer.
Analysers know nothing of the index: a batch numbers its terms by its own sorted vocabulary
and its notes from 0. It carries each note's figures and term list, and, already cut into
blocks, every term's postings over the batch; the writer gives terms the index's ids (it seals
each term list with them, :meth:`AnalysedNote.term_list`) and, when every note of the batch is
new, notes the next ids (:func:`._codec.shift_block`), so a large build does no per-posting
work in the writing process.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Final, NamedTuple

from memquill.errors import SourceError
from memquill.index._analysis import NoteFigures, analyse_note
from memquill.index._codec import (
    BLOCK,
    FieldCounts,
    NoteRow,
    TermCounts,
    block_blob,
    pack_term_counts,
    seal_term_list,
)
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


# ----------------------------------------------------------------------------------------------
# A batch of analysed notes (see the module doc).


BLOCKS_FROM: Final = 32
"""A batch of this many notes or more comes with its postings cut into blocks."""
_APPEND = list[int].append


class AnalysedNote(NamedTuple):
    """One note of a batch (a tuple: many cross from workers).

    Attributes:
        path: the workspace path.
        identity: the file identity the text was read at.
        seen: when the text was read (ns since the epoch; see :mod:`._sync`).
        byte_size: UTF-8 size of the text.
        length: length of the folded body.
        tags: the lowercased tags, sorted, one a line.
        day: the day the path names (proleptic ordinal), or 0.
        columns: its terms' numbers in the batch's vocabulary, ascending (its term list's
            columns).
        counts: the rest of its term list.
    """

    path: str
    identity: Identity
    seen: int
    byte_size: int
    length: int
    tags: str
    day: int
    columns: array[int]
    counts: TermCounts

    def term_list(self, ids: Sequence[int]) -> bytes:
        """Its term list's blob, where the batch's term ``i`` is term ``ids[i]``."""
        return seal_term_list(list(map(ids.__getitem__, self.columns)), self.counts)

    def row(self, doc_id: int) -> NoteRow:
        """Its row in the note table, under ``doc_id``."""
        return NoteRow(
            doc_id,
            self.path,
            *self.identity,
            self.seen,
            self.byte_size,
            self.length,
            self.tags,
            self.day,
        )


@dataclass(frozen=True, slots=True)
class AnalysedBatch:
    """Notes analysed together.

    Attributes:
        vocabulary: every term of the batch, sorted (a term's number is its position).
        notes: the notes, in the order they were analysed.
        postings: per term number, its postings over the batch as blocks, notes numbered
            from 0 in ``notes`` order; empty for a batch of fewer than :data:`BLOCKS_FROM`
            notes (an edit of a few notes: the writer changes their terms' blocks in place,
            and blocks made here would go unused).
    """

    vocabulary: tuple[str, ...]
    notes: tuple[AnalysedNote, ...]
    postings: tuple[tuple[bytes, ...], ...]


class BatchBuilder:
    """Gathers analysed notes into a batch (with blocks from ``blocks_from`` notes)."""

    def __init__(self, *, blocks_from: int = BLOCKS_FROM) -> None:
        self._notes: list[tuple[NoteFigures, int]] = []
        self._blocks_from = blocks_from

    def __len__(self) -> int:
        return len(self._notes)

    def add(self, figures: NoteFigures, seen: int) -> None:
        """Add a note whose text was read after ``seen`` (ns since the epoch)."""
        self._notes.append((figures, seen))

    def build(self) -> AnalysedBatch:
        """The batch of every note added."""
        vocabulary = sorted(set[str]().union(*(figures.terms for figures, _ in self._notes)))
        number = {term: index for index, term in enumerate(vocabulary)}
        # Per term number: the notes that hold it, their body counts, and their field counts.
        docs: list[list[int]] = [[] for _ in vocabulary]
        bodies_of: list[list[int]] = [[] for _ in vocabulary]
        held: dict[int, list[tuple[int, FieldCounts]]] = {}
        notes: list[AnalysedNote] = []
        blocks = len(self._notes) >= self._blocks_from
        for doc, (figures, seen) in enumerate(self._notes):
            terms = figures.terms
            columns = list(map(number.__getitem__, terms))
            bodies = list(map(figures.body.get, terms, repeat(0)))
            if blocks:
                # Appended in C: a note holds hundreds of terms.
                deque(map(_APPEND, map(docs.__getitem__, columns), repeat(doc)), maxlen=0)
                deque(map(_APPEND, map(bodies_of.__getitem__, columns), bodies), maxlen=0)
            # Few terms are in a field (a dozen of hundreds): each found by its column.
            fields = {bisect_left(terms, term): counts for term, counts in figures.fields.items()}
            if blocks:
                for column, counts in fields.items():
                    held.setdefault(columns[column], []).append((doc, counts))
            notes.append(
                AnalysedNote(
                    figures.path,
                    figures.identity,
                    seen,
                    figures.byte_size,
                    figures.length,
                    "\n".join(figures.tags),
                    figures.day,
                    array("I", columns),
                    pack_term_counts(bodies, fields, figures.chunks, figures.matrix),
                )
            )
        postings = (
            tuple(map(_blocks, docs, bodies_of, map(held.get, range(len(vocabulary)))))
            if blocks
            else ()
        )
        return AnalysedBatch(tuple(vocabulary), tuple(notes), postings)


def _blocks(
    docs: list[int], bodies: list[int], held: list[tuple[int, FieldCounts]] | None
) -> tuple[bytes, ...]:
    """A term's notes (ascending), their body counts and field counts, as blocks."""
    if len(docs) <= BLOCK and not held:  # most terms: one block, no field holds them
        return (block_blob(docs, bodies, [], []),)
    # The places of the notes a field holds the term in, ascending (notes were added so).
    places = [bisect_left(docs, doc) for doc, _ in held] if held else []
    found: list[bytes] = []
    for start in range(0, len(docs), BLOCK):
        stop = start + BLOCK
        low, high = bisect_left(places, start), bisect_left(places, stop)
        rows = [place - start for place in places[low:high]]
        counts = [count for _, five in held[low:high] for count in five] if held else []
        found.append(block_blob(docs[start:stop], bodies[start:stop], rows, counts))
    return tuple(found)
