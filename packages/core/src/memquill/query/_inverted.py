"""An inverted index of search documents in memory, kept current a document at a time.

:class:`TermIndex` holds documents by key and, per term, the documents that hold it with the
counts ranking reads: the body count and the five field counts (title, tags, aliases,
headings, path) that :meth:`memquill.query._rank.Corpus.postings` finds by scanning every
document. Adding or removing a document analyses that document alone
(:func:`document_postings`: every term of its folded body and fields counted at once with
:func:`~memquill.query._tokens.term_counts`, whose counts equal :func:`count_term`'s, a tested
invariant), so a set that changes a few documents at a time stays current at the cost of what
changed, not of the whole set.

:class:`IndexCorpus` reads one or more indexes, each with the documents it takes (``None``:
all), as one :class:`~memquill.query._rank.RankCorpus`: a query term costs a look-up instead of
a pass over every document, and :func:`~memquill.query._rank.rank` scores the documents that
hold a query term with the figures the full scan gives (the number of documents, each term's
frequency and the mean body lengths of the documents taken), so it returns the same hits with
the same scores as a :class:`~memquill.query._rank.Corpus` of those documents (a property test
holds it to that). :meth:`IndexCorpus.origin` tells which index and key a hit came from;
:meth:`IndexCorpus.by_index` lists every document, its day and whether it is one chunk by
document index, for a pass over many postings (:mod:`memquill.query._topk`'s pruning).

Re-scoring reads each hit's chunk counts. A short document without a heading (a record, most
often) is one chunk of its whole text (:func:`single_chunk`), so its chunk counts are its body
counts, read from the postings instead of folding and counting its chunk.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Final

from memquill.foundation.text import path_key, utf16_len
from memquill.query._dates import MonthKey, month_matches, path_day
from memquill.query._documents import DocumentKind, SearchDocument
from memquill.query._markdown import CHUNK_SIZE
from memquill.query._rank import Posting
from memquill.query._tokens import term_counts

_KINDS: Final[tuple[DocumentKind, ...]] = ("note", "record")
_NO_FIELDS: Final[dict[int, tuple[int, ...]]] = {}


def document_postings(
    document: SearchDocument,
) -> tuple[dict[str, int], dict[str, tuple[int, ...]]]:
    """Every term of ``document``: its body count (terms the body holds) and, for terms a
    metadata field holds, the count in each field."""
    body = term_counts(document.folded, folded=True)
    per_field = [term_counts(field, folded=True) for field in document.fields]
    held: set[str] = set()
    for counts in per_field:
        held.update(counts)
    fields = {term: tuple(counts.get(term, 0) for counts in per_field) for term in held}
    return body, fields


def single_chunk(content: str) -> bool:
    """Whether ``content`` is one chunk, its whole text, without a heading: no line is a
    heading (only a line starting with ``#`` may be one) and it fits one window. Its chunk's
    counts are then its body's (the chunk's text folds to the folded body)."""
    return not (content.startswith("#") or "\n#" in content) and utf16_len(content) <= CHUNK_SIZE


class TermIndex:
    """Documents by key, with each term's postings (see the module docstring)."""

    def __init__(self) -> None:
        self._slots: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._documents: list[SearchDocument | None] = []
        self._terms: list[tuple[str, ...]] = []
        self._days: list[date | None] = []
        self._path_keys: list[bytes] = []
        self._single: list[bool] = []
        """Whether a slot's document is one chunk: its whole text, without a heading."""
        self._free: list[int] = []
        self._bodies: dict[str, dict[int, int]] = {}
        """Term → slot → body count (0 when only a field holds it): every holder."""
        self._fields: dict[str, dict[int, tuple[int, ...]]] = {}
        self._months: dict[tuple[int, int], set[int]] = {}
        self._lengths: dict[str, int] = dict.fromkeys(_KINDS, 0)
        self._counts: dict[str, int] = dict.fromkeys(_KINDS, 0)

    def __len__(self) -> int:
        return len(self._slots)

    def get(self, key: str) -> SearchDocument | None:
        """The document held under ``key``."""
        slot = self._slots.get(key)
        return None if slot is None else self._documents[slot]

    def keys(self) -> list[str]:
        """The keys of the documents held."""
        return list(self._slots)

    def add(self, key: str, document: SearchDocument) -> None:
        """Hold ``document`` under ``key`` (in place of the one held under it, if any)."""
        if key in self._slots:
            self.remove(key)
        body, fields = document_postings(document)
        if self._free:
            slot = self._free.pop()
            self._keys[slot] = key
            self._documents[slot] = document
        else:
            slot = len(self._documents)
            self._keys.append(key)
            self._documents.append(document)
            self._terms.append(())
            self._days.append(None)
            self._path_keys.append(b"")
            self._single.append(False)
        self._slots[key] = slot
        for term, count in body.items():
            self._bodies.setdefault(term, {})[slot] = count
        for term, counts in fields.items():
            self._bodies.setdefault(term, {}).setdefault(slot, 0)
            self._fields.setdefault(term, {})[slot] = counts
        self._terms[slot] = tuple({*body, *fields})
        day = path_day(document.path)
        self._days[slot] = day
        if day is not None:
            self._months.setdefault((day.year, day.month), set()).add(slot)
        self._path_keys[slot] = path_key(document.path)
        self._single[slot] = single_chunk(document.content)
        self._lengths[document.kind] += document.length
        self._counts[document.kind] += 1

    def remove(self, key: str) -> None:
        """Let go of the document held under ``key`` (nothing if none)."""
        slot = self._slots.pop(key, None)
        if slot is None:
            return
        document = self._documents[slot]
        assert document is not None
        for term in self._terms[slot]:
            holders = self._bodies[term]
            del holders[slot]
            if not holders:
                del self._bodies[term]
            counts = self._fields.get(term)
            if counts is not None and counts.pop(slot, None) is not None and not counts:
                del self._fields[term]
        day = self._days[slot]
        if day is not None:
            dated = self._months[(day.year, day.month)]
            dated.discard(slot)
            if not dated:
                del self._months[(day.year, day.month)]
        self._lengths[document.kind] -= document.length
        self._counts[document.kind] -= 1
        self._keys[slot] = None
        self._documents[slot] = None
        self._terms[slot] = ()
        self._days[slot] = None
        self._free.append(slot)

    @property
    def capacity(self) -> int:
        """One more than the highest slot a document may hold."""
        return len(self._documents)

    def totals(self, kind: DocumentKind) -> tuple[int, int]:
        """The summed body length and the number of the documents of ``kind`` held."""
        return self._lengths[kind], self._counts[kind]

    def slot(self, key: str) -> int | None:
        """The slot of the document held under ``key``."""
        return self._slots.get(key)

    def at(self, slot: int) -> SearchDocument:
        """The document in ``slot`` (one that holds a document)."""
        document = self._documents[slot]
        assert document is not None
        return document

    def key_at(self, slot: int) -> str:
        """The key of the document in ``slot``."""
        key = self._keys[slot]
        assert key is not None
        return key

    def day_at(self, slot: int) -> date | None:
        """The day the path of the document in ``slot`` names."""
        return self._days[slot]

    def path_key_at(self, slot: int) -> bytes:
        """The tie-break key of the document in ``slot``."""
        return self._path_keys[slot]

    def slots(
        self,
    ) -> tuple[Sequence[SearchDocument | None], Sequence[date | None], Sequence[bool]]:
        """Per slot: its document (``None``: a free slot), the day its path names, and whether
        it is one chunk of its whole text (:func:`single_chunk`). Read only."""
        return self._documents, self._days, self._single

    def chunk_counts(self, slot: int, term: str) -> tuple[int, ...]:
        """How often ``term`` occurs in each chunk of the document in ``slot``: for a
        document that is one chunk of its whole text, its body count (no chunk to fold)."""
        if self._single[slot]:
            bodies = self._bodies.get(term)
            return (0 if bodies is None else bodies.get(slot, 0),)
        return self.at(slot).chunk_counts(term)

    def holders(self, term: str) -> tuple[dict[int, int], dict[int, tuple[int, ...]]] | None:
        """The slots holding ``term`` with their body counts, and those a field holds it in
        with their field counts (``None``: no document holds it). Read only."""
        bodies = self._bodies.get(term)
        return None if bodies is None else (bodies, self._fields.get(term, _NO_FIELDS))

    def dated(self) -> list[tuple[tuple[int, int], list[int]]]:
        """Each (year, month) some path names, with the slots of its documents."""
        return [(month, sorted(slots)) for month, slots in self._months.items()]

    def sync(self, documents: Mapping[str, SearchDocument]) -> None:
        """Hold exactly ``documents`` (a document is analysed again only when the one held
        under its key is another object)."""
        slots, held = self._slots, self._documents
        for key, document in documents.items():
            slot = slots.get(key)
            if slot is None or held[slot] is not document:
                self.add(key, document)
        if len(slots) > len(documents):
            for key in [key for key in slots if key not in documents]:
                self.remove(key)

    def update(self, documents: Mapping[str, SearchDocument], keys: Collection[str]) -> None:
        """Hold under each of ``keys`` what ``documents`` holds under it (nothing, when it
        holds none), leaving every other key as it is: :meth:`sync`'s result, at the cost of
        ``keys`` alone, when only those keys' documents may differ from the ones held."""
        slots, held = self._slots, self._documents
        for key in sorted(keys):  # sorted: the same slots whatever the set's order
            document = documents.get(key)
            if document is None:
                self.remove(key)
                continue
            slot = slots.get(key)
            if slot is None or held[slot] is not document:
                self.add(key, document)


@dataclass(frozen=True, slots=True)
class ByIndex:
    """An :class:`IndexCorpus`'s documents as lists by document index (read only)."""

    documents: list[SearchDocument | None]
    days: list[date | None]
    singles: list[bool]


class _Part:
    """One index as a corpus reads it: its position, first index and the slots it takes."""

    __slots__ = ("allowed", "base", "index", "position")

    def __init__(
        self, index: TermIndex, position: int, base: int, allowed: frozenset[int] | None
    ) -> None:
        self.index = index
        self.position = position
        self.base = base
        self.allowed = allowed


class IndexCorpus:
    """Indexes (each with the keys it takes; ``None``: all) read as one ranking corpus.

    A document's index in the corpus is its part's first index plus its slot in its part. The
    indexes must not change while the corpus is read.
    """

    def __init__(self, parts: Sequence[tuple[TermIndex, Collection[str] | None]]) -> None:
        self._parts: list[_Part] = []
        self._bases: list[int] = []
        lengths: dict[str, int] = dict.fromkeys(_KINDS, 0)
        counts: dict[str, int] = dict.fromkeys(_KINDS, 0)
        base = 0
        for position, (index, taken) in enumerate(parts):
            if taken is None:
                allowed = None
                for kind in _KINDS:
                    length, count = index.totals(kind)
                    lengths[kind] += length
                    counts[kind] += count
            else:
                found = (index.slot(key) for key in taken)
                allowed = frozenset(slot for slot in found if slot is not None)
                for slot in allowed:
                    document = index.at(slot)
                    lengths[document.kind] += document.length
                    counts[document.kind] += 1
            self._parts.append(_Part(index, position, base, allowed))
            self._bases.append(base)
            base += index.capacity
        self._size = sum(counts.values())
        # As Corpus: the mean of integer lengths, per kind (0 without documents of the kind).
        self.average_length = {
            kind: lengths[kind] / counts[kind] if counts[kind] else 0.0 for kind in _KINDS
        }
        self._postings: dict[str, list[Posting]] = {}
        self._issued: dict[int, int] = {}
        self._by_index: ByIndex | None = None

    @property
    def size(self) -> int:
        """How many documents the parts take."""
        return self._size

    def postings(self, term: str) -> list[Posting]:
        """Every document taken that holds ``term``, with its counts."""
        cached = self._postings.get(term)
        if cached is not None:
            return cached
        found: list[Posting] = []
        for part in self._parts:
            held = part.index.holders(term)
            if held is None:
                continue
            bodies, fields = held
            base, allowed, get = part.base, part.allowed, fields.get
            if allowed is None:
                found.extend((base + slot, body, get(slot)) for slot, body in bodies.items())
            else:
                found.extend(
                    (base + slot, body, get(slot))
                    for slot, body in bodies.items()
                    if slot in allowed
                )
        self._postings[term] = found
        return found

    def frequency(self, term: str) -> int:
        """How many documents taken hold ``term``."""
        return len(self.postings(term))

    def _locate(self, index: int) -> tuple[_Part, int]:
        part = self._parts[bisect_right(self._bases, index) - 1]
        return part, index - part.base

    def document(self, index: int) -> SearchDocument:
        """Document ``index`` (remembered for :meth:`origin`)."""
        part, slot = self._locate(index)
        document = part.index.at(slot)
        self._issued[id(document)] = index
        return document

    def stats(self, index: int) -> SearchDocument:
        """Document ``index``, as ranking scores it."""
        part, slot = self._locate(index)
        return part.index.at(slot)

    def origin(self, document: SearchDocument) -> tuple[int, str]:
        """The part (by position) and key of a document :meth:`document` returned."""
        return self.origin_at(self._issued[id(document)])

    def origin_at(self, index: int) -> tuple[int, str]:
        """The part (by position) and key of document ``index``."""
        part, slot = self._locate(index)
        return part.position, part.index.key_at(slot)

    def by_index(self) -> ByIndex:
        """Per document index: its document (``None`` where an index holds none, or one its
        part does not take), the day its path names and whether it is one chunk of its whole
        text. Built once, so that a pass over many postings reads them without locating each
        document's part."""
        if self._by_index is None:
            documents: list[SearchDocument | None] = []
            days: list[date | None] = []
            singles: list[bool] = []
            for part in self._parts:
                held, dated, single = part.index.slots()
                allowed = part.allowed
                if allowed is None:
                    documents.extend(held)
                else:
                    documents.extend(
                        document if slot in allowed else None for slot, document in enumerate(held)
                    )
                days.extend(dated)
                singles.extend(single)
            self._by_index = ByIndex(documents, days, singles)
        return self._by_index

    def day(self, index: int) -> date | None:
        """The day document ``index``'s path names."""
        part, slot = self._locate(index)
        return part.index.day_at(slot)

    def path_key(self, index: int) -> bytes:
        """The tie-break key of document ``index``."""
        part, slot = self._locate(index)
        return part.index.path_key_at(slot)

    def month_holders(self, key: MonthKey) -> tuple[int, list[int]]:
        """The documents taken that are dated in the month ``key`` (all of them are scored)."""
        holding: list[int] = []
        for part in self._parts:
            for (year, month), slots in part.index.dated():
                if month_matches(key, year, month):
                    allowed = part.allowed
                    holding.extend(
                        part.base + slot for slot in slots if allowed is None or slot in allowed
                    )
        return len(holding), holding

    def rescoring(self, indexes: Sequence[int]) -> None:
        """Nothing to fetch: every document is in memory."""

    def chunk_counts(self, index: int, term: str) -> tuple[int, ...]:
        """How often ``term`` occurs in each chunk of document ``index``."""
        part, slot = self._locate(index)
        return part.index.chunk_counts(slot, term)
