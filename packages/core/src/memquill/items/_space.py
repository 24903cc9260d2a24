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

A write shares every record it leaves alone with the snapshot before it (the same objects at
the same places), so the view of a new revision of the same store is the last view patched
with the places that hold other records
(:meth:`~memquill.store._record_list.RecordList.changes`): the versions a write appended,
superseded or forgot, and the places a shorter file lost. Items whose current version went
are dropped, the items of the active versions that came are appended (in file order, after
every kept one), and facts whose first version came or went have their ``created_at`` read
again; the documents and the term index take the changed keys alone. Walking every record
after each put was most of a search that follows a put (4.7 of 5.9 s over 30 such searches at
100,000 items). What a patch cannot keep exact is read whole, as before: another store, an
active version placed among the kept ones, a key or a fact twice, more changed places than a
quarter of the records.
"""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass, field, replace
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
    pending: list[str] | None = field(default=None)
    """The keys :attr:`reused` lacks, in order, when they come after every key it holds
    (``None``: not known, every item is looked at)."""
    created: dict[str, str] = field(default_factory=dict[str, str])
    """Root id → when that fact was first saved, for every fact of the snapshot."""
    owners: dict[str, str] = field(default_factory=dict[str, str])
    """Root id → the fact key of the item it is."""
    expiring: dict[str, datetime] = field(default_factory=dict[str, datetime])
    """Fact key → when the item expires, for the items put with a time to live."""
    patchable: bool = False
    """Whether the next revision may be read as a patch of this view: no two active
    versions have one key, no two items one fact, no two records one id."""
    since: tuple[str, frozenset[str]] | None = field(default=None)
    """A revision the term index may hold and the keys whose documents changed since then."""


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


class _Unpatchable(Exception):
    """The new revision cannot be read as a patch of the last view: read it whole."""


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
        """The items of ``snapshot`` (decoded once per revision). A revision of the store the
        last view read, whose records are mostly the same objects (a write appended a few
        versions and marked the ones it superseded or forgot), is that view patched with the
        records that changed; any other is read whole, keeping the last view's item of each
        key whose current version and first save are unchanged. Both give the same view."""
        cached = self._view
        if cached is not None and cached.snapshot.revision == snapshot.revision:
            return cached
        view = None
        if cached is not None and cached.patchable:
            try:
                view = self._patched(cached, snapshot)
            except _Unpatchable:
                view = None
        if view is None:
            view = self._read(_Before.of(cached, snapshot), snapshot)
        self._view = view
        return view

    def _read(self, before: _Before, snapshot: Snapshot) -> View:
        """The items of ``snapshot``, every record looked at."""
        created: dict[str, str] = {}
        roots = 0
        for r in snapshot.records:
            if r.id == r.root_id:
                created[r.id] = r.created_at
                roots += 1
        records: dict[str, Record] = {}
        items: dict[str, StoredItem] = {}
        documents: dict[str, SearchDocument] = {}
        firsts: dict[str, str] = {}
        owners: dict[str, str] = {}
        expiring: dict[str, datetime] = {}
        patchable = roots == len(created)
        for record in snapshot.records:
            key = record.key
            if record.status != "active" or key is None:
                continue
            first = created.get(record.root_id, record.created_at)
            item = before.item(key, record, first)
            if item is not None:
                document = before.document(key)
                if document is not None:
                    documents[key] = document
            else:
                text = item_key(key)
                if text is None:
                    continue
                item = stored_item(self.namespace, text, record, first)
            if key in records or record.root_id in owners:
                patchable = False  # a second active version of a key or a fact
            records[key] = record
            firsts[key] = first
            items[key] = item
            owners[record.root_id] = key
            if item.expiry is not None:
                expiring[key] = item.expiry[1]
            else:
                expiring.pop(key, None)  # a key twice: its last version's expiry counts
        return View(
            snapshot,
            records,
            items,
            soonest=min(expiring.values(), default=None),
            firsts=firsts,
            reused=documents,
            created=created,
            owners=owners,
            expiring=expiring,
            patchable=patchable,
        )

    def _patched(self, last: View, snapshot: Snapshot) -> View | None:
        """``last`` brought to ``snapshot`` by looking only at the records that are other
        objects at their places (``RecordList.changes``), or the places one of the two
        lacks (``None``: too many changed for a patch to pay).

        Raises:
            _Unpatchable: the changes are not ones a patch keeps exact (another store, an
                active version placed among the kept ones, a key or fact or id twice).
        """
        if last.snapshot.identity != snapshot.identity:
            raise _Unpatchable
        old, new = last.snapshot.records, snapshot.records
        places = new.changes(old)
        if len(places) + abs(len(new) - len(old)) > len(new) // 4 + 16:
            return None
        gone = [old[p] for p in places]
        gone.extend(old[len(new) :])
        came = [(p, new[p]) for p in places]
        came.extend(enumerate(new[len(old) :], len(old)))
        records, items, firsts = dict(last.records), dict(last.items), dict(last.firsts)
        created, owners, expiring = dict(last.created), dict(last.owners), dict(last.expiring)
        # Read in the reverse of the order :meth:`documents` sets them: a view whose
        # documents are still unset has its reused documents and pending keys as made.
        was_pending, was_reused, built = last.pending, last.reused, last.documents
        reused = dict(built if built is not None else was_reused)
        affected: set[str] = set()  # facts whose first save may have changed
        removed: list[str] = []
        for record in gone:
            if record.id == record.root_id:
                del created[record.id]
                affected.add(record.id)
            key = record.key
            if key is not None and records.get(key) is record:
                del records[key], items[key], firsts[key], owners[record.root_id]
                expiring.pop(key, None)
                reused.pop(key, None)
                removed.append(key)
        for _, record in came:
            if record.id == record.root_id:
                if record.id in created:
                    raise _Unpatchable
                created[record.id] = record.created_at
                affected.add(record.id)
        added: list[str] = []
        for place, record in came:
            key = record.key
            if record.status != "active" or key is None:
                continue
            text = item_key(key)
            if text is None:
                continue
            if place < len(old) or key in records or record.root_id in owners:
                raise _Unpatchable  # placed among the kept items, or a key or fact twice
            first = created.get(record.root_id, record.created_at)
            item = stored_item(self.namespace, text, record, first)
            records[key] = record
            firsts[key] = first
            items[key] = item
            owners[record.root_id] = key
            if item.expiry is not None:
                expiring[key] = item.expiry[1]
            added.append(key)
        for root in affected:
            key = owners.get(root)
            if key is None:
                continue
            first = created.get(root, records[key].created_at)
            if first != firsts[key]:
                firsts[key] = first
                items[key] = replace(items[key], created_at=_moment(first))
        pending: list[str] | None = None  # the keys without a document come last, in order
        if built is not None:
            pending = added
        elif was_pending is not None:
            dropped = set(removed)
            pending = [key for key in was_pending if key not in dropped]
            pending.extend(added)
        changed = frozenset((*removed, *added))
        since: tuple[str, frozenset[str]] | None = None
        if self._indexed == last.snapshot.revision:
            since = (last.snapshot.revision, changed)
        elif last.since is not None and len(last.since[1]) + len(changed) <= len(records) // 4:
            since = (last.since[0], last.since[1] | changed)
        return View(
            snapshot,
            records,
            items,
            soonest=min(expiring.values(), default=None),
            firsts=firsts,
            reused=reused,
            pending=pending,
            created=created,
            owners=owners,
            expiring=expiring,
            patchable=True,
            since=since,
        )

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
            if view.pending is not None:
                # The keys without a document come last: only they are looked at.
                documents = dict(reused)
                for key in view.pending:
                    documents[key] = record_document(
                        ProjectedRecord.of(snapshot, view.records[key])
                    )
            else:
                documents = {
                    key: reused.get(key) or record_document(ProjectedRecord.of(snapshot, record))
                    for key, record in view.records.items()
                }
            view.documents = documents
            view.reused = {}
            view.pending = None
        return view.documents

    def terms(self, view: View) -> TermIndex:
        """The items' documents of ``view`` in an inverted index, by fact key: brought up to
        date from the revision it held, analysing only the documents that changed (when the
        view knows which keys changed since that revision, only those are looked at).
        Callers serialise their use of it (``ItemStore`` searches under one lock)."""
        revision = view.snapshot.revision
        held = self._indexed
        if held != revision:
            self._indexed = None  # a sync cut short leaves no revision claimed
            documents = self.documents(view)
            since = view.since
            if since is not None and since[0] == held:
                self._terms.update(documents, since[1])
            else:
                self._terms.sync(documents)
            self._indexed = revision
        return self._terms

    def close(self) -> None:
        """Let go of the store's connection, if it keeps one."""
        self.session.store.close()


def stored_item(namespace: Namespace, text: str, record: Record, first: str) -> StoredItem:
    """The item ``text`` of ``namespace`` that ``record`` holds, its fact first saved at
    ``first``."""
    return StoredItem(
        namespace,
        text,
        decode_value(record.content, record.extra),
        _moment(first),
        _moment(record.updated_at),
        record.id,
        decode_index(record.extra),
        decode_expiry(record.extra),
    )


def _moment(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)
