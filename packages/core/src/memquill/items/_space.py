"""One namespace's workspace: its session and store, its write lock, and its items decoded once
per store revision.

An item is an active fact whose key is the one :func:`fact_key` makes of the item's key; facts
without a key, or with a key of another form (a person's ``prefs%2Fcoffee``), are facts but not
items. An item's ``created_at`` is when its fact was first saved (the version whose id is the
root id); ``updated_at`` is when its current version was written.

A namespace changes a few items at a time, so a new revision is read from the last one: an
item whose current version is the same record (and whose fact was first saved at the same
moment) keeps its decoded item and its search document, and only the changed items are decoded
and analysed again (building every document again after each write took 4.3 s at 100,000
items).
"""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memquill.errors import InvalidInputError, Messages
from memquill.items._paths import Namespace
from memquill.items._values import Expiry, ItemIndex, decode_expiry, decode_index, decode_value
from memquill.query import SearchDocument, TermIndex, record_document
from memquill.store import (
    JSONValue,
    ProjectedRecord,
    Record,
    Snapshot,
    quote_key,
    unquote_key,
)
from memquill.tools import MemorySession


@dataclass(frozen=True, slots=True)
class StoredItem:
    """One item, as read.

    Attributes:
        namespace: its namespace's labels.
        key: its key, as given when it was put.
        value: its value (a fresh copy at each read).
        created_at: when its fact was first saved (UTC).
        updated_at: when its current version was written (UTC).
        record_id: the id of the fact version it is (a put makes another).
        index: what of it is embedded: ``None`` the store's fields, ``False`` nothing, or the
            fields its put named.
        expiry: its time to live in minutes and when it expires, if it was put with one.
    """

    namespace: Namespace
    key: str
    value: dict[str, JSONValue]
    created_at: datetime
    updated_at: datetime
    record_id: str = ""
    index: ItemIndex = None
    expiry: Expiry | None = None


def fact_key(key: object) -> str:
    """The fact key of an item key: each ``/``-separated part quoted (:func:`quote_key` with
    ``keep_slashes``), or, when a part is empty (``a//b``), the whole key quoted.

    Raises:
        InvalidInputError: not non-empty text, a lone surrogate, or over 200 characters quoted.
    """
    if not isinstance(key, str) or not key:
        raise InvalidInputError(Messages.ITEM_KEY)
    return _quoted(key)


@functools.lru_cache(maxsize=65536)
def _quoted(key: str) -> str:
    try:
        return quote_key(key, keep_slashes=True)
    except InvalidInputError:
        pass
    try:
        return quote_key(key)
    except InvalidInputError:
        raise InvalidInputError(Messages.ITEM_KEY) from None


@functools.lru_cache(maxsize=65536)
def item_key(key: str) -> str | None:
    """The item key a fact key stands for (``None``: :func:`fact_key` never makes it)."""
    if "%" not in key:
        return key  # a valid key without escapes is the quoting of itself
    try:
        text = unquote_key(key)
        return text if fact_key(text) == key else None
    except InvalidInputError:
        return None


@dataclass(slots=True)
class View:
    """A namespace's items at one store revision, in file order of their current versions."""

    snapshot: Snapshot
    records: dict[str, Record]  # fact key → current version
    items: dict[str, StoredItem]  # fact key → item
    documents: dict[str, SearchDocument] | None = field(default=None)
    soonest: datetime | None = field(default=None)  # the first expiry of its items, if any
    firsts: dict[str, str] = field(default_factory=dict[str, str])
    """Fact key → when its fact was first saved (as stored): an item is kept only while
    that is unchanged too (a compaction may drop the first version)."""
    reused: dict[str, SearchDocument] = field(default_factory=dict[str, SearchDocument])
    """Documents kept from the last view, until :meth:`Space.documents` builds the rest."""


@dataclass(frozen=True, slots=True)
class _Before:
    """What a new view may keep of the last one: the same store (identity), and per item
    the same current record (the same object, or an equal one read again)."""

    records: dict[str, Record]
    items: dict[str, StoredItem]
    firsts: dict[str, str]
    documents: dict[str, SearchDocument]

    @classmethod
    def of(cls, view: View | None, snapshot: Snapshot) -> _Before:
        if view is None or view.snapshot.identity != snapshot.identity:
            return cls({}, {}, {}, {})  # a record revision names the store: nothing kept
        documents = view.documents if view.documents is not None else view.reused
        return cls(view.records, view.items, view.firsts, documents)

    def item(self, key: str, record: Record, first: str) -> StoredItem | None:
        """The last view's item of ``key`` if its version and first save are unchanged."""
        old = self.records.get(key)
        if old is None or (old is not record and old != record) or self.firsts[key] != first:
            return None
        return self.items[key]

    def document(self, key: str) -> SearchDocument | None:
        """The last view's document of ``key``, if it was built."""
        return self.documents.get(key)


class Space:
    """One namespace: a session on its folder, a lock for its writes, its items per revision.

    Args:
        namespace: the labels.
        folder: the workspace folder (created at the first write).
        session: the session every read and write of this namespace goes through.
    """

    def __init__(self, namespace: Namespace, folder: Path, session: MemorySession) -> None:
        self.namespace = namespace
        self.folder = folder
        self.session = session
        self.lock = threading.Lock()
        self._view: View | None = None
        self.records_file = os.path.join(folder, "memory", "records.md")
        self.marked: tuple[tuple[int, int, int, int], View] | None = None
        """The file's identity when :attr:`marked`'s view was read (``ItemStore``'s walk)."""
        self._terms = TermIndex()
        self._indexed: str | None = None  # the revision the term index holds

    def view(self, snapshot: Snapshot) -> View:
        """The items of ``snapshot`` (decoded once per revision; an item whose current
        version and first save are those of the last view's is kept from it)."""
        cached = self._view
        if cached is not None and cached.snapshot.revision == snapshot.revision:
            return cached
        before = _Before.of(cached, snapshot)
        created = {r.id: r.created_at for r in snapshot.records if r.id == r.root_id}
        records: dict[str, Record] = {}
        items: dict[str, StoredItem] = {}
        documents: dict[str, SearchDocument] = {}
        firsts: dict[str, str] = {}
        for record in snapshot.records:
            key = record.key
            if record.status != "active" or key is None:
                continue
            first = created.get(record.root_id, record.created_at)
            kept = before.item(key, record, first)
            if kept is not None:
                records[key] = record
                firsts[key] = first
                items[key] = kept
                document = before.document(key)
                if document is not None:
                    documents[key] = document
                continue
            text = item_key(key)
            if text is None:
                continue
            records[key] = record
            firsts[key] = first
            items[key] = StoredItem(
                self.namespace,
                text,
                decode_value(record.content, record.extra),
                _moment(first),
                _moment(record.updated_at),
                record.id,
                decode_index(record.extra),
                decode_expiry(record.extra),
            )
        expiries = [item.expiry[1] for item in items.values() if item.expiry is not None]
        view = View(snapshot, records, items, soonest=min(expiries, default=None))
        view.firsts = firsts
        view.reused = documents
        self._view = view
        return view

    @property
    def kept(self) -> View | None:
        """The view the last :meth:`view` call made or returned (``None``: none yet)."""
        return self._view

    def documents(self, view: View) -> dict[str, SearchDocument]:
        """Each item's search document, by fact key: built once per item version (an item
        the view kept from the last one keeps its document, if that one was built)."""
        if view.documents is None:
            snapshot = view.snapshot
            reused = view.reused
            view.documents = {
                key: reused.get(key) or record_document(ProjectedRecord.of(snapshot, record))
                for key, record in view.records.items()
            }
            view.reused = {}
        return view.documents

    def terms(self, view: View) -> TermIndex:
        """The items' documents of ``view`` in an inverted index, by fact key: brought up to
        date from the revision it held, analysing only the documents that changed. Callers
        serialise their use of it (``ItemStore`` searches under one lock)."""
        revision = view.snapshot.revision
        if self._indexed != revision:
            self._indexed = None  # a sync cut short leaves no revision claimed
            self._terms.sync(self.documents(view))
            self._indexed = revision
        return self._terms

    def close(self) -> None:
        """Let go of the store's connection, if it keeps one."""
        self.session.store.close()


def _moment(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)
