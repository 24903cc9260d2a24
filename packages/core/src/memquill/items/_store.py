"""``ItemStore``: items in nested namespaces, kept as named facts, one workspace per namespace.

The framework-neutral heart of key-value memory interfaces (a LangGraph ``BaseStore``): a
namespace is a workspace folder under the store's root (:mod:`memquill.items._paths`), an
item's key is its fact's key (:func:`~memquill.items._space.fact_key`), and its value is
the fact's text plus extra JSON (:mod:`memquill.items._values`). Every write goes through
the one write path with the source ``tool`` and the store's session id:

- ``put`` of a new key saves a fact; of a key in use, corrects it (one new version, history
  kept), unless the value is the one stored already (nothing is written); a race with another
  writer is retried on the revision it read, so no write is ever blind;
- ``delete`` forgets the fact (text, key and extra erased, the tombstone kept); a later ``put``
  of the key saves a new fact;
- ``put_many`` applies many puts (and deletes) with the rules of ``put`` and ``delete``, each
  namespace's puts in one write: one lock, one fsync or commit, however many items;
- ``search`` ranks the items of every namespace under a prefix together with memquill's keyword
  ranking (ties: namespace, then key), exactly as ranking every item's text would: each
  namespace keeps its items' search documents in an inverted index
  (:class:`memquill.query.TermIndex`), brought up to date after a write by analysing only the
  items it changed, so a search reads the postings of its query's terms, and only the items that
  can be among the best ``offset + limit`` are ranked (:func:`memquill.query.narrow`: exact,
  the same items, order and scores); ``items`` lists
  them newest first (``updated_at``; ties: namespace, then the later write first);
  ``namespaces`` lists the namespaces that hold at least one item, in sorted order.

Each namespace has one session (one ``RecordStore``) and one lock in this process; the store's
own lock (or the database row's) orders writers across processes. At most ``open_limit``
namespaces are kept open; the least recently used one is closed and reopened when needed. On a
database every namespace borrows a connection per read or write from one small pool per
process and database, so many namespaces never mean many connections. A search or listing
across namespaces on files reads again only the namespaces whose ``records.md`` changed since
it last read them; on a database it reads all of them in one statement, in which each sends
only the rows changed since this process last read it (``memquill.store``'s ``snapshots``).

A search on a database without a filter reads no namespace at all: the database keeps every
item's analysed terms and answers with the few items that can rank among the best
(:mod:`memquill.items._database_search`), the same hits, order and scores. A search with a
filter ranks in the process, as on files (the filter decides which items count).
"""

from __future__ import annotations

import copy
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from pathlib import Path
from typing import Any, Final

from memquill.errors import (
    BlockedError,
    ConflictError,
    InvalidInputError,
    Messages,
    NotFoundError,
    UnsafePathError,
)
from memquill.items._database_search import database_item, database_search
from memquill.items._paths import (
    Namespace,
    check_folders,
    label_folder,
    namespace_folder,
    namespace_of_row,
    row_name,
    validate_namespace,
    walk_namespaces,
)
from memquill.items._space import Space, StoredItem, View, fact_key
from memquill.items._values import Expiry, check_index, check_put_index, encode_value
from memquill.owner_only import private_folder
from memquill.query import IndexCorpus, TermIndex, narrow, rank, score_value
from memquill.store import (
    FactKey,
    JSONValue,
    Listing,
    SecretScanner,
    database_listing,
    is_database,
    parse_location,
    resolve_location,
    snapshots,
    with_workspace,
)
from memquill.tools import (
    KeyedFact,
    MemorySession,
    WriteSource,
    correct,
    forget_current,
    remember,
    upsert,
)

DEFAULT_SESSION: Final = "items"
_FILE_OPEN: Final = 4096
"""Namespaces kept open on files: a file namespace holds no descriptor, only its decoded
items, so a search across hundreds of them reads only the files that changed."""
_DATABASE_OPEN: Final = 65536
"""Namespaces kept open on a database: each holds its decoded items, not a connection (the
database's connections are shared by every namespace: ``memquill.store._postgres_pool``). A
search across namespaces holds every one it reads at once anyway; keeping fewer open than it
reads made each such search open and decode all of them again (2.5 s instead of 0.4 s across
10,000 namespaces of one item each)."""
DATABASE_SEARCH: Final = 20_000
"""Record versions under a prefix from which a search on a database, without a filter, asks
the database for its candidates (:mod:`memquill.items._database_search`) rather than
reading every namespace under it into the process. Below, the process's own index answers
a repeated search in a few milliseconds (3.7 ms at 10,000 items, where the database's
candidates took 27); above, reading them costs seconds at the first search (13 s at 100,000)
and memory in every process, and the database answers in a few statements."""
_ATTEMPTS: Final = 8
"""Puts retried after a conflict with another writer, each on what it then reads."""

Accept = Callable[[Mapping[str, Any]], bool]
"""Whether an item's value passes a filter."""


@dataclass(frozen=True, slots=True)
class ItemHit:
    """An item a search found, with its score (rounded as ``memory_search`` shows it)."""

    item: StoredItem
    score: float


@dataclass(frozen=True, slots=True)
class ItemPut:
    """One put of :meth:`ItemStore.put_many`, with :meth:`ItemStore.put`'s arguments; a
    ``value`` of ``None`` forgets the item (:meth:`ItemStore.delete`)."""

    namespace: Sequence[str]
    key: str
    value: object
    index: object = None
    ttl: float | None = None


class ItemStore:
    """Items in nested namespaces under ``root`` (see the module docstring).

    Args:
        root: an existing folder; each namespace is a workspace folder under it.
        store: where each namespace's records live: ``file`` (its folder's
            ``memory/records.md``) or a ``postgresql://`` URL, whose ``workspace=`` option
            (default ``default``) is the base of each namespace's row name
            (``BASE/memories/ana``). Default ``$MEMQUILL_STORE``, else ``file``.
        session_id: the session writes are recorded under (source ``tool``).
        secrets: the credential scanner every write runs (built-in detectors by default).
        lock_timeout: seconds a write waits for another writer before ``busy``.
        now: the clock (UTC); injectable for tests.
        open_limit: namespaces kept open at once (default 4,096 on files, 65,536 on a
            database, where they share a few connections).
        capacity: each namespace's records file capacity in bytes (``None``: its own setting).

    Raises:
        InvalidInputError: ``root`` is not an existing folder, or ``store`` is not valid.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        store: str | None = None,
        session_id: str = DEFAULT_SESSION,
        secrets: SecretScanner | None = None,
        lock_timeout: float = 5.0,
        now: Callable[[], datetime] | None = None,
        open_limit: int | None = None,
        capacity: int | None = None,
    ) -> None:
        self.root = Path(root).expanduser().absolute()
        if not self.root.is_dir():
            raise InvalidInputError(Messages.ITEM_ROOT)
        self._location = resolve_location(store)
        self._base = parse_location(self._location).workspace if self.is_database else ""
        if open_limit is None:
            open_limit = _DATABASE_OPEN if self.is_database else _FILE_OPEN
        if not session_id or open_limit < 1:
            raise ValueError("session_id must be non-empty and open_limit at least 1")
        self._session_id = session_id
        self._secrets = secrets
        self._lock_timeout = lock_timeout
        self._now = now
        self._open_limit = open_limit
        self.expired = 0
        """Items forgotten because their time to live ran out, since this store was made."""
        self._capacity = capacity  # per namespace workspace (None: each one's own setting)
        self._spaces: OrderedDict[Namespace, Space] = OrderedDict()
        self._spaces_lock = threading.Lock()
        self._search_lock = threading.Lock()  # the namespaces' term indexes, one search at a time
        self._last_corpus: (
            tuple[list[tuple[Namespace, View]], tuple[Namespace | str, ...], IndexCorpus] | None
        ) = None
        self._held: _Held | None = None
        self._rows: dict[str, _Row] = {}
        """Each database row listed, by name, with the view read at its hash (any prefix)."""
        self._orders: tuple[IndexCorpus | None, dict[int, tuple[Namespace, str]]] = (None, {})
        """The tie order of the last corpus without a filter's items, as searches found it."""

    @staticmethod
    def check_index(index: object) -> None:
        """Check a semantic index configuration (:func:`~memquill.items._values.check_index`).

        Raises:
            InvalidInputError: not ``None``, ``False`` or an ``IndexConfig``-shaped mapping.
        """
        check_index(index)

    @staticmethod
    def check_put_index(index: object) -> None:
        """Check a put's ``index`` (``None``, ``False``, or a list of text paths).

        Raises:
            InvalidInputError: anything else.
        """
        check_put_index(index)

    def __repr__(self) -> str:
        backend = "postgres" if self.is_database else "file"
        return f"ItemStore({str(self.root)!r}, backend={backend!r})"

    @property
    def is_database(self) -> bool:
        """Whether the namespaces live in a database rather than in their folders."""
        return is_database(self._location)

    # -- reads ----------------------------------------------------------------------------

    def get(self, namespace: Sequence[str], key: str) -> StoredItem | None:
        """The item ``key`` of ``namespace``, or ``None``.

        Raises:
            InvalidInputError: a bad namespace or key. The store's read errors.
        """
        labels = validate_namespace(namespace)
        name = fact_key(key)
        if self.is_database:
            found = database_item(self._location, row_name(self._base, labels), labels, name)
            if found is None or isinstance(found, StoredItem):
                if (
                    found is not None
                    and found.expiry is not None
                    and found.expiry[1] <= self._clock()
                ):
                    self.delete(labels, key)  # forgotten, as a read in the process forgets it
                    self.expired += 1
                    return None
                return found
        view = self._unexpired(labels, self._read(labels))
        item = None if view is None else view.items.get(name)
        return None if item is None else _fresh(item)

    def items(
        self,
        prefix: Sequence[str] = (),
        accept: Accept | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[StoredItem]:
        """The items in the namespaces under ``prefix`` that ``accept`` takes, newest first
        (ties: namespace, then the later write first), from ``offset``, at most ``limit``."""
        found: list[tuple[str, Namespace, int, StoredItem]] = []
        for labels, view in self._views(prefix):
            for position, (name, item) in enumerate(view.items.items()):
                if accept is None or accept(item.value):
                    found.append((view.records[name].updated_at, labels, position, item))
        found.sort(key=lambda entry: entry[2], reverse=True)
        found.sort(key=lambda entry: entry[1])
        found.sort(key=lambda entry: entry[0], reverse=True)  # stable: the ties stay in order
        start = max(offset, 0)
        chosen = found[start:] if limit is None else found[start : start + max(limit, 0)]
        return [_fresh(entry[3]) for entry in chosen]

    def search(
        self,
        prefix: Sequence[str],
        query: str,
        *,
        accept: Accept | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[ItemHit]:
        """The items under ``prefix`` that match ``query``, best first (ties: namespace, then
        key), ranked together as one set of facts; ``accept`` chooses the ones ranked."""
        if limit <= 0:
            return []
        now = self._now() if self._now is not None else datetime.now(UTC)
        start = max(offset, 0)
        labels = validate_namespace(prefix) if prefix else ()
        # On a database the listing comes first: it says how much the prefix holds.
        listed = self._listed(labels) if self.is_database else None
        if listed is not None and accept is None and listed[0].versions > DATABASE_SEARCH:
            found = database_search(self._location, self._base, labels, query, start + limit, now)
            if found is not None:
                for namespace in found.expired:
                    self.sweep(namespace)  # forgotten, as a read in the process forgets them
                scored = found.scored
                scored.sort(key=lambda pair: (-pair[0], pair[1].namespace, pair[1].key))
                chosen = scored[start : start + limit]
                return [ItemHit(_fresh(item), score_value(score)) for score, item in chosen]
        views = self._views(prefix, listed)
        with self._search_lock:
            corpus = self._corpus(views, accept)
            orders = self._orders[1] if self._orders[0] is corpus else {}
            if accept is None:
                self._orders = (corpus, orders)

            def order(index: int) -> tuple[Namespace, str]:
                # Kept with the corpus: the same query across 10,000 namespaces of alike items
                # put 1,700 tied items in order at every search (a third of its ranking).
                found = orders.get(index)
                if found is None:
                    position, name = corpus.origin_at(index)
                    item = views[position][1].items[name]
                    found = orders[index] = (item.namespace, item.key)
                return found

            scored: list[tuple[float, StoredItem]] = []
            if corpus.size:
                # Only the items that may be among the best start + limit are ranked (the
                # same scores: pruning is exact, and ties follow the order sorted by below).
                kept = narrow(corpus, query, depth=start + limit, order=order, now=now)
                for hit in rank(kept, query, now=now, candidates=corpus.size):
                    position, name = corpus.origin(hit.document)
                    scored.append((hit.score, views[position][1].items[name]))
        scored.sort(key=lambda pair: (-pair[0], pair[1].namespace, pair[1].key))
        chosen = scored[start : start + limit]
        return [ItemHit(_fresh(item), score_value(score)) for score, item in chosen]

    def folder(self, namespace: Sequence[str]) -> Path:
        """The workspace folder of ``namespace`` (a database store's may not exist). Raises
        InvalidInputError for a bad namespace."""
        return namespace_folder(self.root, validate_namespace(namespace))

    def namespaces(self, prefix: Sequence[str] = ()) -> list[Namespace]:
        """The namespaces under ``prefix`` (itself included) that hold an item, sorted."""
        return [labels for labels, _ in self._views(prefix)]

    # -- writes ---------------------------------------------------------------------------

    def put(
        self,
        namespace: Sequence[str],
        key: str,
        value: object,
        *,
        index: object = None,
        ttl: float | None = None,
    ) -> None:
        """Save ``value`` as item ``key`` of ``namespace`` (see the module docstring);
        ``index`` (``False``, or the fields embedded for this item) is kept with it, and so is
        ``ttl``: minutes from now after which the item is forgotten (by :meth:`sweep`, or by
        the next read of its namespace).

        Raises:
            InvalidInputError: a bad namespace, key, value or index (nothing is written, no
                folder made).
            SecretError: the value holds credential material (nothing is written, no folder
                made).
            BlockedError: an agent may not save again the words of an item that was forgotten
                (deleted or expired); nothing is written.
            ConflictError: other writers changed the item at every one of 8 attempts.
            The store's other errors (``capacity``, ``busy``, ``storage``...).
        """
        labels = validate_namespace(namespace)
        name = fact_key(key)
        text, extra = encode_value(value, check_put_index(index), self._expiry(ttl))
        space = self._space(labels)
        # Bad input changes nothing on disk: the write's own checks run before the folder is
        # made (a refused put into a new namespace must not leave it behind).
        space.session.store.check(text, key=name, extra=extra)
        self._make_folder(space)
        source = WriteSource("tool", session_id=self._session_id)
        with space.lock:
            for attempt in range(_ATTEMPTS):
                snapshot = space.session.store.snapshot()
                current = snapshot.by_key(name)
                try:
                    if current is None:
                        unique = f"item:{uuid.uuid4()}"  # never a forgotten fact's key again
                        outcome = remember(
                            space.session,
                            text,
                            source=source,
                            idempotency_key=unique,
                            key=name,
                            extra=extra,
                        )
                    elif not current.holds(text, extra):
                        revision = snapshot.record_revision(current)
                        outcome = correct(
                            space.session, FactKey(name), text, revision, source=source, extra=extra
                        )
                    else:
                        return
                    if outcome.status == "blocked":
                        # A put has no receipt to say so: dropping it silently would lose it.
                        when = outcome.forgotten_at or "an earlier write"
                        raise BlockedError(Messages.ITEM_FORGOTTEN.format(when=when))
                    return
                except ConflictError:
                    if attempt == _ATTEMPTS - 1:
                        raise

    def put_many(self, puts: Iterable[ItemPut]) -> None:
        """Apply ``puts`` with the rules of :meth:`put` (and of :meth:`delete` for a ``None``
        value), each namespace's puts in one write: one lock and one fsync (one commit on a
        database) for all of them, however many.

        Every put is checked first (namespace, key, value, index, time to live, size,
        credentials): a refused one raises before anything is written, and no folder is made.
        Of several puts to one item the last wins, in the first one's place. Then the
        namespaces are written one after another, in the order of their first put; each
        namespace's puts between two of its deletes are one write, all or none, whose new
        versions follow the order given (a delete is its own write, in its place). A write
        refused by the store (``BlockedError`` for a put of a forgotten item's words, and the
        store's errors: ``capacity``, ``busy``...) raises after the namespaces before it were
        written; nothing of it, and nothing of the namespaces after it, is.

        Raises:
            As :meth:`put` and :meth:`delete`.
        """
        given = list(puts)
        chosen: dict[tuple[Namespace, str], tuple[ItemPut, str, dict[str, JSONValue] | None]]
        chosen = {}
        ready: Namespace | None = None  # the namespace of a lone put whose folders exist
        for put in given:
            labels = validate_namespace(put.namespace)
            name = fact_key(put.key)
            if put.value is None:
                chosen[(labels, name)] = (put, "", None)
                continue
            text, extra = encode_value(put.value, check_put_index(put.index), self._expiry(put.ttl))
            if len(given) == 1 and self._folders_exist(labels):
                # One put is one write, whose own checks (these, refusing alike) run before it
                # writes anything; with its folders there, nothing is made before them either:
                # checking it here too checked its text and extra twice.
                ready = labels
            else:
                self._space(labels).session.store.check(text, key=name, extra=extra)
            chosen[(labels, name)] = (put, text, extra)  # the first one's place, the last value
        spaces: dict[Namespace, list[tuple[str, ItemPut, str, dict[str, JSONValue] | None]]] = {}
        for (labels, name), (put, text, extra) in chosen.items():
            spaces.setdefault(labels, []).append((name, put, text, extra))
        for labels, entries in spaces.items():
            facts: list[KeyedFact] = []
            for name, put, text, extra in entries:
                if put.value is not None:
                    facts.append(KeyedFact(name, text, extra, f"item:{uuid.uuid4()}"))
                    continue
                self._put_facts(labels, facts)
                facts = []
                self.delete(labels, put.key)
            self._put_facts(labels, facts, made=labels == ready)

    def _put_facts(
        self, labels: Namespace, facts: Sequence[KeyedFact], *, made: bool = False
    ) -> None:
        """Save or correct ``facts`` (checked already, or by this write alone) in ``labels``'s
        workspace in one write (``made``: its folders were just found there)."""
        if not facts:
            return
        space = self._space(labels)
        if not made:
            self._make_folder(space)
        source = WriteSource("tool", session_id=self._session_id)
        with space.lock:
            for attempt in range(_ATTEMPTS):
                try:
                    result = upsert(space.session, facts, source=source)
                except ConflictError:
                    if attempt == _ATTEMPTS - 1:
                        raise
                    continue
                if result.status == "blocked":
                    found = (target.forgotten_at for target in result.targets)
                    when = next((stamp for stamp in found if stamp), None) or "an earlier write"
                    raise BlockedError(Messages.ITEM_FORGOTTEN.format(when=when))
                return

    def delete(self, namespace: Sequence[str], key: str) -> None:
        """Forget item ``key`` of ``namespace`` (nothing happens when there is none).

        Raises:
            InvalidInputError: a bad namespace or key. ConflictError, and the store's errors,
            as :meth:`put`.
        """
        labels = validate_namespace(namespace)
        name = fact_key(key)
        if not self.is_database and not check_folders(self.root, labels):
            return
        space = self._space(labels)
        source = WriteSource("tool", session_id=self._session_id)
        with space.lock:
            try:
                forget_current(space.session, FactKey(name), source=source)
            except NotFoundError:
                return  # forgotten meanwhile

    def sweep(self, prefix: Sequence[str] = ()) -> int:
        """Forget every item under ``prefix`` whose time to live ran out; how many went.
        (Every read forgets the expired items of the namespaces it reads, too.)"""
        before = self.expired
        for _ in self._views(prefix):
            pass
        return self.expired - before

    def refresh(
        self, namespace: Sequence[str], key: str, *, read: StoredItem | None = None
    ) -> bool:
        """Extend the time to live of item ``key`` to its full length, counted from now, once
        less than half of it is left (one correction then; at most one write per half-life,
        not one per read). Whether it was written. ``read``: the item as a read just returned
        it; one without a time to live, or with more than half of it left, is not read again
        (a search on a database reads only its hits, not their namespaces).

        Raises:
            As :meth:`put`.
        """
        labels = validate_namespace(namespace)
        if read is not None and (
            read.expiry is None
            or (read.expiry[1] - self._clock()).total_seconds() >= read.expiry[0] * 30.0
        ):
            return False
        if not self.is_database and not check_folders(self.root, labels):
            return False
        # The view kept from the read that returned the item: a refresh costs no read.
        view = self._kept(labels) if self.is_database else self._walked(labels)
        item = None if view is None else view.items.get(fact_key(key))
        if item is None or item.expiry is None:
            return False
        minutes, when = item.expiry
        if (when - self._clock()).total_seconds() >= minutes * 30.0:
            return False
        self.put(namespace, key, item.value, index=item.index, ttl=minutes)
        return True

    def close(self) -> None:
        """Let go of every open namespace (the store stays usable; a database's connections
        stay in the process's pool for the next read or write)."""
        with self._spaces_lock:
            spaces = list(self._spaces.values())
            self._spaces.clear()
        self._held = None
        self._rows = {}
        self._last_corpus = None
        self._orders = (None, {})
        for space in spaces:
            space.close()

    # -- internals ------------------------------------------------------------------------

    def _space(self, labels: Namespace) -> Space:
        evicted: Space | None = None
        with self._spaces_lock:
            space = self._spaces.get(labels)
            if space is not None:
                self._spaces.move_to_end(labels)
                return space
            folder = namespace_folder(self.root, labels)
            location = (
                with_workspace(self._location, row_name(self._base, labels))
                if self.is_database
                else self._location
            )
            session = MemorySession(
                folder,
                self._session_id,
                "read_write",
                lock_timeout=self._lock_timeout,
                now=self._now,
                secrets=self._secrets,
                store=location,
                capacity=self._capacity,
            )
            space = Space(labels, folder, session)
            self._spaces[labels] = space
            if len(self._spaces) > self._open_limit:
                _, evicted = self._spaces.popitem(last=False)
        if evicted is not None:
            evicted.close()
        return space

    def _folders_exist(self, labels: Namespace) -> bool:
        """Whether every folder of ``labels`` is there, safe (``False`` for one that is not,
        or cannot be inspected: checked first, a put's own refusal comes before that one)."""
        try:
            return check_folders(self.root, labels)
        except (UnsafePathError, OSError):
            return False

    def _make_folder(self, space: Space) -> None:
        if check_folders(self.root, space.namespace):
            return
        private_folder(space.folder)
        check_folders(self.root, space.namespace)  # made meanwhile as a link: refused

    def _read(self, labels: Namespace) -> View | None:
        if not self.is_database and not check_folders(self.root, labels):
            return None
        space = self._space(labels)
        return space.view(space.session.store.snapshot())

    def _kept(self, labels: Namespace) -> View | None:
        """The items of a database namespace as its last read found them (read if none)."""
        kept = self._space(labels).kept
        return kept if kept is not None else self._read(labels)

    def _listed(self, labels: Namespace) -> tuple[Listing, _Held | None]:
        """The listing of a database's rows under ``labels``, sent the mark of what the last
        read of the prefix kept (``None`` with it: nothing kept, or an item in it expired).

        Only the rows under the prefix's own row are listed: a search in one namespace of
        10,000 read every row's name and decoded it (40 ms). Labels are escaped without "/",
        so every row under the prefix starts with its row's name (and some siblings' rows do
        too, "u1" for "u10": the labels decide)."""
        whole = self._held
        if whole is not None and (
            whole.prefix != labels or (whole.soonest is not None and whole.soonest <= self._clock())
        ):
            whole = None
        start = "/".join((self._base, *(label_folder(label) for label in labels)))
        listing = database_listing(
            self._location, start if labels else start + "/", None if whole is None else whole.mark
        )
        return listing, whole

    def _views(
        self, prefix: Sequence[str], listed: tuple[Listing, _Held | None] | None = None
    ) -> list[tuple[Namespace, View]]:
        """Each namespace under ``prefix`` that holds an item, sorted, with its items. On a
        database, while no row under the prefix changed, the very list the last read of the
        prefix gave (:class:`_Held`; never changed in place); ``listed``: the prefix's
        listing, when the caller asked for it already."""
        labels = validate_namespace(prefix) if prefix else ()
        if not self.is_database:
            walked: list[tuple[Namespace, View]] = []
            for namespace in list(walk_namespaces(self.root, labels)):  # walked before any read
                view = self._unexpired(namespace, self._walked(namespace))
                if view is not None and view.items:
                    walked.append((namespace, view))
            return walked
        now = self._clock()
        listing, whole = listed if listed is not None else self._listed(labels)
        if listing.names is None and whole is not None:
            # Nothing under the prefix changed: a search across 10,000 namespaces skips
            # reading them (130 of 150 ms) and ranks with the corpus it kept.
            return whole.views
        # A row whose hash is the one held keeps its view (unless an item in it expired):
        # after a write to one namespace of 10,000, that one alone is read again.
        known = self._rows
        if len(known) > self._open_limit:
            known.clear()  # a bound: the rows of namespaces removed since stay until then
        rows: dict[str, _Row] = {}
        stale: list[tuple[str, int | None, Namespace]] = []
        for name, hashed in zip(listing.names or (), listing.hashes, strict=True):
            found = namespace_of_row(self._base, name)
            if found is None or found[: len(labels)] != labels:
                continue
            kept = known.get(name)
            if (
                hashed is not None
                and kept is not None
                and kept.hash == hashed
                and (kept.view is None or kept.view.soonest is None or kept.view.soonest > now)
            ):
                rows[name] = kept
            else:
                stale.append((name, hashed, found))
        # Read together: one statement for every namespace, each sending only the rows
        # changed since this process last read it (one per namespace took 12 of 15 s of
        # a search across 2,000).
        spaces = [self._space(namespace) for _, _, namespace in stale]
        read = snapshots([space.session.store for space in spaces])
        for (name, hashed, namespace), space, snapshot in zip(stale, spaces, read, strict=True):
            rows[name] = _Row(hashed, namespace, self._unexpired(namespace, space.view(snapshot)))
        views = [
            (row.namespace, row.view)
            for row in rows.values()
            if row.view is not None and row.view.items
        ]
        views.sort(key=itemgetter(0))
        known.update(rows)
        if listing.mark is not None:
            soonest = min((v.soonest for _, v in views if v.soonest is not None), default=None)
            self._held = _Held(labels, listing.mark, views, soonest)
        return views

    def _expiry(self, ttl: object) -> Expiry | None:
        if ttl is None:
            return None
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl < 1e9:
            raise InvalidInputError(Messages.ITEM_TTL)
        return float(ttl), self._clock() + timedelta(minutes=ttl)

    def _unexpired(self, labels: Namespace, view: View | None) -> View | None:
        """``view`` with the items whose time to live ran out forgotten first (through the
        one write path: tombstone, text erased, vectors deleted), read again."""
        if view is None or view.soonest is None or view.soonest > self._clock():
            return view
        now = self._clock()
        for item in list(view.items.values()):
            if item.expiry is not None and item.expiry[1] <= now:
                self.delete(labels, item.key)
                self.expired += 1
        return self._read(labels)

    def _clock(self) -> datetime:
        return self._now() if self._now is not None else datetime.now(UTC)

    def _walked(self, labels: Namespace) -> View | None:
        """The items of a namespace the walk just found (its folders checked, never a link):
        the view kept from the last read while its ``records.md`` is the same file (inode,
        size, modification and change times), else read again. A write replaces the file, a
        person's edit changes its times: either is read."""
        space = self._space(labels)
        try:
            found = os.lstat(space.records_file)
        except OSError:
            return self._read(labels)  # gone meanwhile: the store decides
        mark = (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
        kept = space.marked
        if kept is not None and kept[0] == mark:
            return kept[1]
        view = space.view(space.session.store.snapshot())
        space.marked = (mark, view)
        return view

    def _corpus(self, views: list[tuple[Namespace, View]], accept: Accept | None) -> IndexCorpus:
        """The items of ``views`` that ``accept`` takes, as one ranking corpus read from each
        namespace's term index (kept current item by item: a search reads the postings of
        its terms, not every item's text). Under the search lock. The last one without a
        filter is kept while no namespace changed (its indexes did not either): a search
        across 10,000 namespaces does not build it again, and it remembers its postings."""
        # One flat tuple (each namespace, then its revision), not a pair each: kept, 10,000
        # pairs made the collector's full passes several times as frequent.
        cached = self._last_corpus
        if accept is None and cached is not None and cached[0] is views:
            return cached[2]  # the list kept while nothing changed: the same revisions
        revisions = tuple(
            part for labels, view in views for part in (labels, view.snapshot.revision)
        )
        if accept is None and cached is not None and cached[1] == revisions:
            self._last_corpus = (views, revisions, cached[2])
            return cached[2]
        parts: list[tuple[TermIndex, list[str] | None]] = []
        for labels, view in views:
            terms = self._space(labels).terms(view)
            taken = None
            if accept is not None:
                taken = [name for name, item in view.items.items() if accept(item.value)]
            parts.append((terms, taken))
        corpus = IndexCorpus(parts)
        if accept is None:
            self._last_corpus = (views, revisions, corpus)
        return corpus


@dataclass(frozen=True, slots=True)
class _Row:
    """A database namespace's row as a listing found it: its hash, and the namespace's view
    read at that hash or after (``None``: none)."""

    hash: int | None
    namespace: Namespace
    view: View | None


@dataclass(frozen=True, slots=True)
class _Held:
    """What the last read of a database prefix found, used again while the mark of its rows
    stays the same and no item expired (the listing then sends only the mark): the namespaces
    holding items, with their views, and the first expiry among those items."""

    prefix: Namespace
    mark: str
    views: list[tuple[Namespace, View]]
    soonest: datetime | None


def _fresh(item: StoredItem) -> StoredItem:
    # Items are decoded once per revision and shared: a caller gets its own value to change.
    return replace(item, value=copy.deepcopy(item.value))
