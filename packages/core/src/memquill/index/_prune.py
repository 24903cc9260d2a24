"""Which documents can still reach the re-scored set: exact candidate pruning.

Ranking re-scores only the ``depth`` best documents by (decayed) BM25F score, so a document
that provably scores below ``depth`` others never matters. Terms are taken rarest first, as in
MaxScore: once the terms left could not lift an unseen document above the ``depth``-th best
lower bound, the common terms are only looked up for the documents already in play, and those
that can no longer reach the bound are dropped. Every bound holds with a relative margin
(:data:`MARGIN`) far above floating-point error, so the set kept always contains the set the
full ranking would re-score; :func:`memquill.query._rank.rank` then scores the kept documents
exactly. A term's gain never exceeds ``idf * (k1 + 1)`` (term frequencies saturate), and a
month mention adds a fixed gain.

The lower bound is raised early by *completing* the leading documents: the ``depth`` best so
far are looked up in every term not yet taken, and ``depth`` documents with known complete
scores mean the ``depth``-th best is at least their lowest. Common terms then rarely need a
pass over every document holding them.

A query term's gains are worked out in C (:class:`GainFactors`). A note's gain from a term is
``idf * t`` with ``t = f (k1 + 1) / (f + k1)``, ``f`` its body count over its length norm plus
its weighted field counts: ``t`` is the note's *gain factor* for the term. It depends on the
term's postings, the notes' lengths and the ranking constants, not on the query, so it is kept
per term for as long as the index is unchanged: a term searched again costs a few passes in C
over its postings, not a Python loop. Pruning only needs bounds: sums here may round
differently from ranking's own in the last bits, and kept factors are 32-bit floats (4 bytes a
posting, not 8; each within 2^-24 of its value, relatively): both far inside :data:`MARGIN`.

In a process that has numpy loaded, pruning is done in bulk instead
(:func:`select_dense`): every note's score summed in one array, a pass per term, and the
``depth``-th best found by a partial sort. It keeps every document within :data:`MARGIN` of
that threshold, so it too keeps a superset of the re-scored set, and ranking's exact scores
decide as before: the hits are the same bytes either way (a tested property). numpy is not a
dependency, and importing it costs more than many searches save: pruning is done in bulk only
in a process that has imported it already (:func:`bulk_module`).
"""

from __future__ import annotations

import heapq
import sys
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import add, eq, ge, mul
from typing import Any, Final

from memquill.index._view import HeldPostings, NoteTable
from memquill.lazy import installed
from memquill.query import Posting, RankParams

MARGIN: Final = 1e-6
"""Relative slack of every bound: sixteen times the rounding of a kept gain factor."""
_REPRUNE: Final = 2
"""Drop hopeless documents again once more than this many times ``depth`` are in play."""
_SAMPLE: Final = 4
"""A threshold is first taken among this many times ``depth`` documents."""
Scale = Callable[[dict[int, float]], list[float]]
"""Each document's score in play times its decay factor (same order as the dict)."""


@dataclass(slots=True)
class Term:
    """One scoring term for pruning.

    Attributes:
        bound: no document gains more than this from the term.
        accumulate: adds the term's gain to ``acc[slot]`` of every allowed document holding
            it (inserting missing slots).
        size: how many documents hold it (the cost of ``accumulate``).
        accumulate_known: like ``accumulate``, for the slots already in ``acc`` only.
        lookup: the gains of some slots (0.0 for one that does not hold the term).
        dense: adds the term's gain to ``scores[slot]`` of every note holding it (a numpy
            array by slot) and to ``extra[slot]`` of every record (:func:`select_dense`).
    """

    bound: float
    accumulate: Callable[[dict[int, float]], None]
    size: int
    accumulate_known: Callable[[dict[int, float]], None]
    lookup: Callable[[list[int]], list[float]]
    dense: Callable[[Any, Any, dict[int, float]], None]


def select(
    terms: Sequence[Term],
    depth: int,
    scale: Scale | None,
    factor: Callable[[int], float],
    ceiling: float,
) -> set[int] | None:
    """The slots that may rank among the best ``depth``; ``None`` when nothing is pruned.

    Args:
        terms: the query's terms (and month mentions).
        depth: how many documents are re-scored.
        scale: decayed scores of the documents in play, in bulk (``None``: no decay).
        factor: the decay factor of one slot.
        ceiling: no slot's decay factor exceeds this.
    """
    if depth <= 0 or ceiling <= 0.0 or sum(term.size for term in terms) <= depth:
        return None
    order = sorted(terms, key=lambda term: -term.bound)
    remaining = sum(term.bound for term in order)
    acc: dict[int, float] = {}
    complete: dict[int, float] = {}
    theta = 0.0
    closed = False
    for position, term in enumerate(order):
        if not closed and len(acc) >= depth:
            values = list(acc.values()) if scale is None else scale(acc)
            best = _depth_best(values, depth)
            leading = list(compress(acc.keys(), map(ge, values, repeat(best))))
            theta = max(theta, best)
            closed = remaining * ceiling * (1.0 + MARGIN) < theta * (1.0 - MARGIN)
            if not closed:
                decay = None if scale is None else factor
                completed = _completed(acc, leading, order[position:], depth, decay, complete)
                theta = max(theta, completed)
                closed = remaining * ceiling * (1.0 + MARGIN) < theta * (1.0 - MARGIN)
            if closed:
                acc = _reachable(acc, remaining, theta, factor, ceiling, scale is None)
        if closed:
            if len(acc) > _REPRUNE * depth:
                theta = max(theta, _threshold(acc, depth, scale))
                acc = _reachable(acc, remaining, theta, factor, ceiling, scale is None)
            term.accumulate_known(acc)
        else:
            term.accumulate(acc)
        remaining -= term.bound
    if len(acc) <= depth:
        return set(acc)
    theta = max(theta, _threshold(acc, depth, scale))
    return set(_reachable(acc, 0.0, theta, factor, ceiling, scale is None))


def select_dense(
    numpy: Any,
    terms: Sequence[Term],
    depth: int,
    slots: int,
    decay: Callable[[Any], Any] | None,
    factor: Callable[[int], float],
) -> set[int] | None:
    """:func:`select` in bulk: the slots that may rank among the best ``depth`` (``None`` when
    nothing is pruned), for unfiltered terms.

    Args:
        numpy: the numpy module.
        terms: the query's terms (and month mentions).
        depth: how many documents are re-scored.
        slots: one more than the highest note slot.
        decay: the decay factors of some note slots (a numpy array of slots in, one of factors
            out; ``None``: no decay).
        factor: the decay factor of one slot (records).
    """
    if depth <= 0 or sum(term.size for term in terms) <= depth:
        return None
    scores = numpy.zeros(slots)
    extra: dict[int, float] = {}
    for term in terms:
        term.dense(numpy, scores, extra)
    held = numpy.flatnonzero(scores)
    values = scores[held]
    if decay is not None:
        values *= decay(held)
    records = [(slot, score * factor(slot)) for slot, score in extra.items()]
    found = len(held) + len(records)
    if found > depth:
        every = numpy.concatenate((values, numpy.array([score for _, score in records])))
        theta = float(numpy.partition(every, found - depth)[found - depth])
        # Bulk sums round unlike ranking's own: keep what comes within the margin of theta.
        cut = theta * (1.0 - MARGIN) / (1.0 + MARGIN)
        held = held[values >= cut]
        records = [(slot, score) for slot, score in records if score >= cut]
    kept = set(held.tolist())
    kept.update(slot for slot, _ in records)
    return kept


def bulk_module() -> Any:
    """numpy, if this process has imported it already (else ``None``).

    memquill never imports it for pruning itself: the import costs a process about 0.3 s of
    CPU and 20 MiB of memory, more than pruning in bulk saves a process that searches a
    vault of 20,000 notes fewer than a few hundred times. A host that uses numpy has paid both.
    """
    if "numpy" in sys.modules:
        return installed("numpy")  # waits for an import under way in another thread
    return None


def _completed(
    acc: dict[int, float],
    leading: list[int],
    rest: Sequence[Term],
    depth: int,
    factor: Callable[[int], float] | None,
    complete: dict[int, float],
) -> float:
    """A lower bound of the ``depth``-th best decayed score: the ``depth``-th best complete
    score of the (at least ``depth``) documents ``leading`` so far. ``complete`` keeps their
    scores between calls: a score counted in full does not change as its terms are taken."""
    new = [slot for slot in leading if slot not in complete]
    if new:
        scores = [acc[slot] for slot in new]
        for term in rest:
            scores = list(map(add, scores, term.lookup(new)))
        complete.update(zip(new, scores, strict=True))
    if factor is None:
        decayed = [complete[slot] for slot in leading]
    else:
        decayed = [complete[slot] * factor(slot) for slot in leading]
    return heapq.nlargest(depth, decayed)[-1] * (1.0 - MARGIN)


def _reachable(
    acc: dict[int, float],
    remaining: float,
    theta: float,
    factor: Callable[[int], float],
    ceiling: float,
    flat: bool,
) -> dict[int, float]:
    """The documents whose decayed score can still reach ``theta``."""
    floor = theta * (1.0 - MARGIN)
    # First the bound every document shares, then (with decay) each document's own factor.
    cut = floor / (ceiling * (1.0 + MARGIN)) - remaining
    kept = dict(compress(acc.items(), map(ge, acc.values(), repeat(cut))))
    if flat:
        return kept
    top = 1.0 + MARGIN
    return {
        slot: score
        for slot, score in kept.items()
        if (score + remaining) * factor(slot) * top >= floor
    }


def _threshold(acc: dict[int, float], depth: int, scale: Scale | None) -> float:
    """The ``depth``-th best decayed lower bound among the documents in play."""
    return _depth_best(list(acc.values()) if scale is None else scale(acc), depth)


def _depth_best(values: list[float], depth: int) -> float:
    """The ``depth``-th largest of ``values`` (at least ``depth`` of them)."""
    if len(values) > _SAMPLE * depth:
        # The depth-th best of a part is no better than the whole's: only values at least
        # that good can be among the best (kept in C, a few of many).
        floor = heapq.nlargest(depth, values[: _SAMPLE * depth])[-1]
        values = list(compress(values, map(ge, values, repeat(floor))))
    return heapq.nlargest(depth, values)[-1]


# ----------------------------------------------------------------------------------------------
# Gains of the query's terms (see the module doc).


_MEMO: Final = 1 << 21
"""Gain factors kept, over every term (4 bytes each)."""
_SCAN_OVER_SEARCH: Final = 8
"""A pass over a term's postings costs about this many times less per posting than a
binary search per document in play (both in C)."""


@dataclass(frozen=True, slots=True)
class Norms:
    """Body-length normalisation, as ranking computes it: notes by ``base + scale * length``
    (from their lengths), records by their own normaliser per slot."""

    base: float
    scale: float
    lengths: Sequence[int]
    records: Mapping[int, float]

    def of(self, slot: int) -> float:
        """The normaliser of one slot."""
        return self.base + self.scale * self.lengths[slot] if slot >= 0 else self.records[slot]


class GainFactors:
    """Each term's gain factor ``t`` per note (aligned with its postings), for one state of the
    index."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] = ()
        self._lengths: array[int] = array("q")
        self._norm = (1.0, 0.0)
        self._terms: OrderedDict[str, array[float]] = OrderedDict()
        self._size = 0

    def prepare(self, notes: NoteTable, norms: Norms, params: RankParams) -> None:
        """Use the index as it is now, with these constants (forgetting older figures)."""
        key = (notes.generation, norms.base, norms.scale, params)
        if key == self._key:
            return
        self._key = key
        self._terms.clear()
        self._size = 0
        self._lengths = notes.lengths
        self._norm = (norms.base, norms.scale)

    def cached(self, term: str) -> array[float] | None:
        """The term's ``t`` per note, if already worked out."""
        found = self._terms.get(term)
        if found is not None:
            self._terms.move_to_end(term)
        return found

    def of(
        self, term: str, postings: HeldPostings, params: RankParams, numpy: Any = None
    ) -> array[float]:
        """``t`` of each note in ``postings`` (the live postings of ``term``; in bulk with
        ``numpy``)."""
        found = self.cached(term)
        if found is not None:
            return found
        if numpy is not None and postings.ids:
            found = self._dense(numpy, postings, params)
        else:
            found = array("f", self.at(postings, None, postings.ids, params))
        while self._terms and self._size + len(found) > _MEMO:
            self._size -= len(self._terms.popitem(last=False)[1])
        self._terms[term] = found
        self._size += len(found)
        return found

    def _dense(self, numpy: Any, postings: HeldPostings, params: RankParams) -> array[float]:
        """:meth:`at` of every note, in bulk (its sums may round differently: a bound)."""
        ids = numpy.frombuffer(postings.ids, postings.ids.typecode)
        base, scale = self._norm
        # Views of the index's arrays are dropped at once: an array lent to numpy cannot grow.
        lengths = numpy.frombuffer(self._lengths, self._lengths.typecode)[ids]
        bodies = numpy.frombuffer(postings.bodies, postings.bodies.typecode)
        frequencies = bodies / (base + scale * lengths)
        fields = postings.fields
        if fields:
            docs = numpy.frombuffer(fields.docs, fields.docs.typecode)
            counts = numpy.frombuffer(fields.counts, fields.counts.typecode).reshape(-1, 5)
            weights = numpy.array(params.field_weights[:5], numpy.float64)
            frequencies[numpy.searchsorted(ids, docs)] += counts[:, : len(weights)] @ weights
        k1 = params.k1
        gains = (frequencies * (k1 + 1.0) / (frequencies + k1)).astype(numpy.float32)
        found = array("f")
        found.frombytes(gains.tobytes())
        return found

    def at(
        self,
        postings: HeldPostings,
        positions: Sequence[int] | None,
        docs: Sequence[int],
        params: RankParams,
    ) -> list[float]:
        """``t`` of the notes ``docs`` at ``positions`` of ``postings`` (``None``: all)."""
        bodies = (
            postings.bodies if positions is None else map(postings.bodies.__getitem__, positions)
        )
        base, scale = self._norm
        lengths = map(self._lengths.__getitem__, docs)
        norms: Iterable[float] = map(add, repeat(base), map(mul, repeat(scale), lengths))
        frequencies = list(map(float.__rtruediv__, norms, bodies))  # body / norm
        fields = postings.fields
        if fields:
            weights = params.field_weights
            if positions is None:  # every note: each holder's place (holders are among them)
                places: Iterable[int] = map(bisect_left, repeat(docs), fields.docs)
                entries: Iterable[int] = range(len(fields))
            else:
                places, entries = fields.among(docs)
            counts = fields.counts
            for index, entry in zip(places, entries, strict=True):
                base = 5 * entry
                for weight, count in zip(weights, counts[base : base + 5], strict=False):
                    frequencies[index] += weight * count
        k1 = params.k1
        scaled: Iterable[float] = map(mul, frequencies, repeat(k1 + 1.0))
        return list(map(float.__truediv__, scaled, map(add, frequencies, repeat(k1))))


def note_term(
    term: str,
    notes: HeldPostings,
    factors: GainFactors,
    records: Sequence[Posting],
    weight: float,
    params: RankParams,
    norms: Norms,
    allowed: Callable[[int], bool] | None,
) -> Term:
    """A query term for pruning: its gain mirrors the ranking's BM25F formula."""
    norm_of = norms.of
    k1 = params.k1
    k1p = k1 + 1.0
    weights = params.field_weights
    ids = notes.ids
    scaled = repeat(weight)

    def gain(slot: int, body: int, counts: tuple[int, ...] | None) -> float:
        frequency = body / norm_of(slot)
        if counts is not None:
            for field_weight, count in zip(weights, counts, strict=False):
                frequency += field_weight * count
        return weight * frequency * k1p / (frequency + k1)

    def accumulate(acc: dict[int, float]) -> None:
        if allowed is None:
            gains = map(mul, factors.of(term, notes, params), scaled)
            if acc:
                gains = map(add, map(acc.get, ids, repeat(0.0)), gains)
            acc.update(zip(ids, gains, strict=True))
        else:
            get = acc.get
            for doc, factor in zip(ids, factors.of(term, notes, params), strict=True):
                if allowed(doc):
                    acc[doc] = get(doc, 0.0) + weight * factor
        for index, body, counts in records:
            slot = -1 - index
            if allowed is None or allowed(slot):
                acc[slot] = acc.get(slot, 0.0) + gain(slot, body, counts)

    record_map = {-1 - index: (body, counts) for index, body, counts in records}

    def accumulate_known(acc: dict[int, float]) -> None:
        cached = factors.cached(term)
        if len(ids) < _SCAN_OVER_SEARCH * len(acc):
            # One pass over the postings, keeping the notes in play.
            held = list(map(acc.__contains__, ids))
            known = list(compress(ids, held))
            found = factors.of(term, notes, params) if cached is None else cached
            values = compress(found, held)
        elif ids:
            # A binary search per note in play (records' slots are negative: never found).
            keys = [slot for slot in acc if slot >= 0]
            positions = list(map(bisect_left, repeat(ids), keys))
            last = len(ids) - 1
            hits = list(map(eq, map(ids.__getitem__, map(min, positions, repeat(last))), keys))
            known = list(compress(keys, hits))
            at = list(compress(positions, hits))
            if cached is None:
                values = factors.at(notes, at, known, params)
            else:
                values = map(cached.__getitem__, at)
        else:
            known, values = [], []
        gains = map(mul, values, scaled)
        acc.update(zip(known, map(add, map(acc.__getitem__, known), gains), strict=True))
        for slot, (body, counts) in record_map.items():
            if slot in acc:
                acc[slot] += gain(slot, body, counts)

    def lookup(slots: list[int]) -> list[float]:
        if ids:
            # A binary search per slot, in C (a record's negative slot is never found).
            positions = list(map(bisect_left, repeat(ids), slots))
            last = len(ids) - 1
            hits = list(map(eq, map(ids.__getitem__, map(min, positions, repeat(last))), slots))
            at = list(compress(positions, hits))
            cached = factors.cached(term)
            if cached is None:
                found = iter(factors.at(notes, at, list(compress(slots, hits)), params))
            else:
                found = map(cached.__getitem__, at)
            gains = [weight * next(found) if hit else 0.0 for hit in hits]
        else:
            gains = [0.0] * len(slots)
        if record_map:
            for index, slot in enumerate(slots):
                held = record_map.get(slot)
                if held is not None:
                    gains[index] = gain(slot, held[0], held[1])
        return gains

    def dense(numpy: Any, scores: Any, extra: dict[int, float]) -> None:
        if ids:
            gains = numpy.frombuffer(factors.of(term, notes, params, numpy), numpy.float32)
            scores[numpy.frombuffer(ids, ids.typecode)] += gains.astype(numpy.float64) * weight
        for index, body, counts in records:
            slot = -1 - index
            extra[slot] = extra.get(slot, 0.0) + gain(slot, body, counts)

    size = len(ids) + len(records)
    return Term(weight * k1p, accumulate, size, accumulate_known, lookup, dense)


def month_term(gain: float, slots: Sequence[int], allowed: Callable[[int], bool] | None) -> Term:
    """A month the query names, held by the documents dated in it, for pruning."""

    def accumulate(acc: dict[int, float]) -> None:
        get = acc.get
        for slot in slots:
            if allowed is None or allowed(slot):
                acc[slot] = get(slot, 0.0) + gain

    def accumulate_known(acc: dict[int, float]) -> None:
        for slot in slots:
            if slot in acc:
                acc[slot] += gain

    held = set(slots)

    def lookup(asked: list[int]) -> list[float]:
        return [gain if slot in held else 0.0 for slot in asked]

    notes = [slot for slot in slots if slot >= 0]

    def dense(numpy: Any, scores: Any, extra: dict[int, float]) -> None:
        if notes:
            scores[numpy.array(notes, numpy.int64)] += gain
        for slot in slots:
            if slot < 0:
                extra[slot] = extra.get(slot, 0.0) + gain

    return Term(gain, accumulate, len(slots), accumulate_known, lookup, dense)
