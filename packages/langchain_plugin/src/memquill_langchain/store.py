"""``MemquillStore``: a LangGraph ``BaseStore`` whose memory is Markdown a person can read.

Needs ``langgraph`` (``pip install 'memquill-langchain[langgraph]'``). Give it to an agent and
every tool, node and LangMem memory tool reads and writes through it::

    from langchain.agents import create_agent
    from memquill_langchain.store import MemquillStore

    agent = create_agent(model, tools, store=MemquillStore("/srv/memory"))

The mapping (``docs/adapters/langgraph.md``) is :class:`memquill.items.ItemStore`'s: a namespace
``("memories", "ana")`` is the workspace folder ``ROOT/memories/ana/`` (labels escaped
reversibly, folders ``0700``), a key is the fact's key, ``{"content": TEXT, ...}`` keeps
``TEXT`` as the fact's text and the other fields beside it, any other value is kept as JSON
text. ``put`` on a key in use corrects the fact (one new version; an identical value writes
nothing), ``delete`` and ``put(value=None)`` forget it, ``search`` with a query is memquill's
keyword ranking across every namespace under the prefix, without one the newest first.

What LangGraph defines is kept: namespace labels are checked as ``BaseStore`` checks them (a
``langgraph`` root is refused by ``put`` alone, not by a batch's ``PutOp`` or ``delete``), a
batch answers one result per operation in order, its reads see the store as it was before the
batch, and of several puts to one item the last wins. A batch's puts to one namespace are one
write (one lock, one fsync or commit), all checked before any is written (:meth:`batch`). TTL
is forgetting with a clock (``supports_ttl``; ``ttl=`` LangGraph's ``TTLConfig``): the expiry is
kept in the item's record, and an expired item is forgotten by the sweep thread or at the next
read. A semantic ``index`` (LangGraph's ``IndexConfig``) makes a search with a query semantic:
the items nearest the query join the keyword hits, scored by similarity with a keyword share
(:data:`KEYWORD_SHARE`), so a paraphrase is found and comes first when it is the nearest; an
embedder that fails keeps keyword order, logged and kept in :attr:`MemquillStore.ranking`.
``put(index=False)`` keeps an item out of the vector index and ``put(index=[fields])`` names the
fields embedded of it, kept with the item. Every refusal is memquill's error: ``SecretError``
for credential material, ``InvalidInputError`` for a bad key or value, ``CapacityError`` past a
namespace's 2 MiB, all ``MemquillError``. ``abatch`` runs the batch in a worker thread, so
waiting for another writer never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, cast

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
    )
    from langgraph.store.base.embed import get_text_at_path
except ImportError as missing:  # the package imports without the extra; this module needs it
    raise ImportError(
        "MemquillStore needs LangGraph: pip install 'memquill-langchain[langgraph]'"
    ) from missing

from memquill import InvalidInputError, MemquillError
from memquill.errors import Messages
from memquill.items import ItemHit, ItemPut, ItemStore, StoredItem
from memquill.plugins import (
    MemquillPluginManager,
    get_plugin_manager,
    plugin_report,
    secret_scanner,
)
from memquill.semantic import similarities_blocking
from memquill.tools import CANDIDATE_LIMIT
from memquill_langchain.embeddings import embedder_from_index

__all__ = ["DEFAULT_SESSION_ID", "MemquillStore"]

DEFAULT_SESSION_ID: Final = "langgraph"
"""The session the store's writes are recorded under (``source.sessionId`` in records.md)."""
_LOG: Final = logging.getLogger("memquill.langchain")
SEMANTIC_LINE: Final = "Memory ranking semantic: nearest items joined the keyword results."
KEYWORD_SHARE: Final = 0.2
"""The keyword score's share of a semantic search's score (the similarity has the rest)."""


class MemquillStore(BaseStore):
    """A LangGraph store on memquill (see the module docstring).

    Args:
        root: an existing folder; each namespace is a workspace folder under it.
        store: ``file`` (each namespace's ``memory/records.md``) or a ``postgresql://`` URL
            (each namespace a row named ``WORKSPACE/memories/ana``, ``WORKSPACE`` being the
            URL's ``workspace=`` option); default ``$MEMQUILL_STORE``, else ``file``.
        session_id: the session writes are recorded under.
        lock_timeout: seconds a write waits for another writer before ``BusyError``.
        capacity: each namespace's records file capacity, in bytes (whole MiB, 1 to 64;
            default: the namespace folder's ``.assistant/config.json``, else 2 MiB).
        index: ``None`` (keyword search), or LangGraph's ``IndexConfig``: ``{"embed": ...,
            "dims": N, "fields": [...]}`` (``embed`` an ``Embeddings``, a function of texts or
            a ``"provider:model"`` name). A search with a query then ranks the items nearest
            the query together with the keyword hits (:func:`_fused`); each
            item's vector is kept in its namespace workspace's vector cache (a new store with
            the same embedder finds it, another embedder rebuilds, a delete removes it at the
            write; a database store keeps them in process memory only).
        ttl: LangGraph's ``TTLConfig``: ``default_ttl`` (minutes, for puts without ``ttl=``),
            ``refresh_on_read`` (default ``True``: a read extends what it returns once less
            than half its time is left) and ``sweep_interval_minutes`` (a daemon thread
            forgets expired items at that interval; :meth:`close` stops it).
        plugins: the plugin manager whose secret detectors guard every write (default: a new
            one, loading the installed plugins).

    Raises:
        InvalidInputError: ``root`` is not an existing folder, ``store`` is not valid, or
            ``index`` is not an ``IndexConfig`` (or its ``embed`` cannot be used).
    """

    supports_ttl: bool = True

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        store: str | None = None,
        session_id: str = DEFAULT_SESSION_ID,
        lock_timeout: float = 5.0,
        index: object = None,
        ttl: TTLConfig | None = None,
        plugins: MemquillPluginManager | None = None,
        capacity: int | None = None,
    ) -> None:
        ItemStore.check_index(index)
        self.ttl_config = ttl
        self._index: dict[str, Any] | None = None
        if isinstance(index, Mapping):
            config = cast("Mapping[str, Any]", index)
            try:
                self._embedder = embedder_from_index(dict(config))
            except (ValueError, ImportError) as error:
                raise InvalidInputError(Messages.ITEM_INDEX) from error
            self._index = dict(config)
        self._fields: list[str] = list((self._index or {}).get("fields") or ["$"])
        self._memo: dict[str, tuple[float, ...]] = {}
        self.ranking: str | None = None
        """How the last search with a query was ordered, as ``memory_search``'s first line
        says it (``Memory ranking semantic: …`` or the fallback line); ``None``: keyword."""
        manager = plugins if plugins is not None else get_plugin_manager()
        for failure in plugin_report(manager).failures:
            _LOG.warning("plugin %s: %s", failure.plugin, failure.message)
        self._items = ItemStore(
            root,
            store=store,
            session_id=session_id,
            secrets=secret_scanner(manager),
            lock_timeout=lock_timeout,
            capacity=capacity,
        )
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        interval = (ttl or {}).get("sweep_interval_minutes")
        if interval:
            self._sweeper = threading.Thread(
                target=self._sweep_every,
                args=(float(interval) * 60.0,),
                name="memquill-ttl-sweep",
                daemon=True,
            )
            self._sweeper.start()

    def _sweep_every(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            try:
                self.sweep()
            except MemquillError as error:  # the next sweep, or read, tries again
                _LOG.warning("TTL sweep: %s", error)

    def sweep(self) -> int:
        """Forget every item whose time to live ran out (what the sweep thread runs every
        ``sweep_interval_minutes``); how many went."""
        return self._items.sweep()

    def __repr__(self) -> str:
        return f"MemquillStore({str(self._items.root)!r})"

    @property
    def items(self) -> ItemStore:
        """The memquill item store underneath (the same items, framework-neutral)."""
        return self._items

    def close(self) -> None:
        """Stop the TTL sweep thread and let go of the open namespaces (the store stays
        usable; expired items are still forgotten at the next read; a database's connections
        stay in the process's pool, shared by every store of that database)."""
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5.0)
        self._items.close()

    # -- the two methods BaseStore asks for ---------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``: one result per operation, in order. Reads see the store as it was
        before the batch; puts are applied after them, in order, the last of several to one
        item winning, each namespace's puts in one write (:meth:`ItemStore.put_many`: one
        lock and one fsync or commit per namespace, not per put).

        Every put is checked before anything is written (labels, key, value, ``ttl``,
        ``index``, size, credentials): a refused one raises and the batch writes nothing.
        A batch is not a transaction across namespaces: they are written one after another,
        in the order of their first put, each all or none, so a write the store refuses
        (``BlockedError`` for a forgotten item's words, ``CapacityError``, ``BusyError``)
        raises after the namespaces before it were saved, and nothing of its namespace or the
        ones after it is. A delete is its own write, in its place among its namespace's puts."""
        chosen = list(ops)
        for op in chosen:
            _check_op(op)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        read: dict[tuple[tuple[str, ...], str], StoredItem] = {}
        for op in chosen:
            if isinstance(op, GetOp):
                results.append(self._get(op, read))
            elif isinstance(op, SearchOp):
                results.append(self._search(op, read))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list(op))
            else:
                puts[(op.namespace, op.key)] = op  # the first one's place, the last one's value
                results.append(None)
        chosen_puts = [
            ItemPut(op.namespace, op.key, op.value, index=op.index, ttl=op.ttl)
            for op in puts.values()
            if op.value is not None or op.namespace  # the empty namespace: nothing to forget
        ]
        if any(put.value is None for put in chosen_puts):
            self._memo.clear()  # a forgotten item's vector goes with it (and its row)
        if chosen_puts:
            self._items.put_many(chosen_puts)
        for op, result in zip(chosen, results, strict=True):
            self._refresh(op, result, read)
        return results

    def _refresh(
        self, op: Op, result: Result, read: Mapping[tuple[tuple[str, ...], str], StoredItem]
    ) -> None:
        """``refresh_on_read``: a read extends the time to live of what it returned (``read``:
        the items as the batch's reads returned them, so one without a time to live costs no
        second read)."""
        if isinstance(op, GetOp) and op.refresh_ttl and isinstance(result, Item):
            found: list[Item] = [result]
        elif isinstance(op, SearchOp) and op.refresh_ttl and isinstance(result, list):
            found = cast("list[Item]", result)
        else:
            return
        for item in found:
            key = (item.namespace, item.key)
            self._items.refresh(item.namespace, item.key, read=read.get(key))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread: the event loop never waits for a writer's lock."""
        chosen = list(ops)
        return await asyncio.to_thread(self.batch, chosen)

    # -- operations -------------------------------------------------------------------------

    def _get(self, op: GetOp, read: dict[tuple[tuple[str, ...], str], StoredItem]) -> Item | None:
        if not op.namespace:
            return None  # nothing is ever kept under the empty namespace
        found = self._items.get(op.namespace, op.key)
        if found is None:
            return None
        read[(found.namespace, found.key)] = found
        return _item(found)

    def _search(
        self, op: SearchOp, read: dict[tuple[tuple[str, ...], str], StoredItem]
    ) -> list[SearchItem]:
        accept = None if not op.filter else _matcher(op.filter)
        if op.query and self._index is not None:
            scored = self._semantic_search(op, accept)
        elif op.query:
            hits = self._items.search(
                op.namespace_prefix, op.query, accept=accept, limit=op.limit, offset=op.offset
            )
            scored = [(hit.item, hit.score) for hit in hits]
        else:
            found = self._items.items(op.namespace_prefix, accept, limit=op.limit, offset=op.offset)
            scored = [(item, None) for item in found]
        for item, _ in scored:
            read[(item.namespace, item.key)] = item
        return [_search_item(item, score) for item, score in scored]

    def _semantic_search(
        self, op: SearchOp, accept: Callable[[Mapping[str, Any]], bool] | None
    ) -> list[tuple[StoredItem, float | None]]:
        """Dense candidates (the items nearest the query) join the keyword candidates, ranked
        together by :func:`_fused`; an embedder that fails keeps keyword order, logged and kept
        in :attr:`ranking`."""
        assert op.query is not None
        window = max(CANDIDATE_LIMIT, op.offset + op.limit)
        hits = self._items.search(op.namespace_prefix, op.query, accept=accept, limit=window)
        indexed = [
            (item, text)
            for item in self._items.items(op.namespace_prefix, accept)
            if (text := self._embedded(item))
        ]
        folders: dict[tuple[str, ...], Path] = {}
        for item, _ in indexed:
            if item.namespace not in folders:
                folders[item.namespace] = self._items.folder(item.namespace)
        # Each item's vector is kept in its namespace workspace's vector cache.
        found, line = similarities_blocking(
            self._embedder,
            op.query,
            [text for _, text in indexed],
            memo=self._memo,
            scope="langgraph-store",
            units=[(folders[item.namespace], f"i:{item.record_id}") for item, _ in indexed],
        )
        if found is None:
            _LOG.warning("%s", line)
            self.ranking = line
            chosen = hits[op.offset : op.offset + op.limit]
            return [(hit.item, hit.score) for hit in chosen]
        self.ranking = SEMANTIC_LINE
        nearest = sorted(
            zip(found, (item for item, _ in indexed), strict=True), key=lambda pair: -pair[0]
        )[:window]
        ranked = _fused(hits, nearest)
        return [(item, score) for score, item in ranked[op.offset : op.offset + op.limit]]

    def _embedded(self, item: StoredItem) -> str:
        """What of ``item`` is embedded: its put's fields, else the store's ('': nothing)."""
        if item.index is False:
            return ""
        return _text(item.value, self._fields if item.index is None else item.index)

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        start: list[str] = []
        for condition in conditions:
            if condition.match_type == "prefix":
                for label in condition.path:
                    if label == "*":
                        break
                    start.append(label)
                break
        found = [
            namespace
            for namespace in self._items.namespaces(tuple(start))
            if all(_matches_condition(condition, namespace) for condition in conditions)
        ]
        if op.max_depth is not None:
            found = sorted({namespace[: op.max_depth] for namespace in found})
        return found[op.offset : op.offset + op.limit]


def _check_op(op: object) -> None:
    """LangGraph's label rules, for operations given to ``batch`` directly (the ``langgraph``
    root is ``put``'s own rule, checked before it batches); a ``ttl`` or
    an ``index`` this store cannot keep is refused before anything runs."""
    if isinstance(op, GetOp):
        _check_labels(op.namespace)
    elif isinstance(op, SearchOp):
        _check_labels(op.namespace_prefix)
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            _check_labels(condition.path)
    elif isinstance(op, PutOp):
        # BaseStore.put/aput refuse a "langgraph" root before the batch; a PutOp given to
        # batch (and delete's) is checked for its labels only, as LangGraph's stores do.
        _check_labels(op.namespace)
        if not op.namespace and op.value is not None:
            raise InvalidNamespaceError("Namespace cannot be empty.")  # no folder to keep it
        if op.ttl is not None and not 0 < op.ttl < 1e9:
            raise InvalidInputError(Messages.ITEM_TTL)  # refused before anything runs
        ItemStore.check_put_index(op.index)
    else:
        raise ValueError(f"Unknown operation type: {type(op)}")


def _check_labels(namespace: Sequence[object]) -> None:
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"Invalid namespace label '{label}' found in {namespace}. Namespace labels"
                f" must be strings, but got {type(label).__name__}."
            )
        if not label:
            raise InvalidNamespaceError(
                f"Namespace labels cannot be empty strings. Got {label} in {namespace}"
            )
        if "." in label or "\0" in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label '{label}' found in {namespace}. Namespace labels "
                "cannot contain periods ('.') or NUL bytes."
            )


def _fused(
    hits: Sequence[ItemHit], nearest: Sequence[tuple[float, StoredItem]]
) -> list[tuple[float, StoredItem]]:
    """The keyword hits and the nearest items as one list, best first (ties: namespace, then
    key), each scored ``(1 - KEYWORD_SHARE) * similarity + KEYWORD_SHARE * keyword / best``:
    the cosine of its embedded fields with the query (0 without a vector) and its keyword score
    over the best one's (0 when keyword search missed it), rounded to four places. Similarity
    decides, as in LangGraph's stores; among near neighbours a keyword match goes first."""
    best = max((hit.score for hit in hits), default=0.0)
    keyword = {(hit.item.namespace, hit.item.key): hit.score for hit in hits}
    similar = {(item.namespace, item.key): score for score, item in nearest}
    items = {(hit.item.namespace, hit.item.key): hit.item for hit in hits}
    items.update(((item.namespace, item.key), item) for _, item in nearest)
    scored = [
        (
            round(
                (1 - KEYWORD_SHARE) * similar.get(name, 0.0)
                + KEYWORD_SHARE * (keyword.get(name, 0.0) / best if best > 0 else 0.0),
                4,
            ),
            item,
        )
        for name, item in items.items()
    ]
    scored.sort(key=lambda pair: (-pair[0], pair[1].namespace, pair[1].key))
    return scored


def _text(value: Mapping[str, Any], fields: Sequence[str]) -> str:
    """What is embedded of an item: the text at each of ``fields`` (LangGraph's paths)."""
    return "\n".join(text for path in fields for text in get_text_at_path(value, path))


def _item(found: StoredItem) -> Item:
    return Item(
        value=dict(found.value),
        key=found.key,
        namespace=found.namespace,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def _search_item(found: StoredItem, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=found.namespace,
        key=found.key,
        value=dict(found.value),
        created_at=found.created_at,
        updated_at=found.updated_at,
        score=score,
    )


def _matches_condition(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    else:
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    return all(wanted == "*" or label == wanted for label, wanted in pairs)


def _matcher(filters: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    def accept(value: Mapping[str, Any]) -> bool:
        return all(_compare(value.get(name), wanted) for name, wanted in filters.items())

    return accept


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (as its in-memory store applies them): operators
    ``$eq $ne $gt $gte $lt $lte``, objects matched field by field, lists element by element,
    anything else by equality. A comparison that cannot be made (a missing field, text) is
    no match."""
    if isinstance(wanted, Mapping):
        conditions = cast("Mapping[str, Any]", wanted)
        if any(name.startswith("$") for name in conditions):
            return all(_operator(value, name, operand) for name, operand in conditions.items())
        if not isinstance(value, Mapping):
            return False
        fields = cast("Mapping[str, Any]", value)
        return all(_compare(fields.get(name), item) for name, item in conditions.items())
    if isinstance(wanted, list | tuple):
        expected = cast("Sequence[Any]", wanted)
        if not isinstance(value, list | tuple):
            return False
        actual = cast("Sequence[Any]", value)
        return len(actual) == len(expected) and all(
            _compare(one, other) for one, other in zip(actual, expected, strict=True)
        )
    return bool(value == wanted)


def _operator(value: Any, name: str, operand: Any) -> bool:
    if name == "$eq":
        return bool(value == operand)
    if name == "$ne":
        return bool(value != operand)
    if name not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"Unsupported operator: {name}")
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    if name == "$gt":
        return left > right
    if name == "$gte":
        return left >= right
    if name == "$lt":
        return left < right
    return left <= right
