"""A key-value store's item vectors, kept in each namespace workspace's vector cache.

:func:`~memquill.semantic._texts.similarity_order` given ``units`` — each text's workspace
folder and unit name, ``i:<record id>`` for an item (its current version) — looks the texts'
vectors up in the workspace's :class:`~memquill.semantic._vectors.VectorCache` before embedding
anything, and keeps what it embedded there: a new process with the same embedder finds them; another
embedder finds the space changed and every vector of that file is rebuilt; a forget deletes the
item's row at the write (:func:`memquill.index.forget_vectors`), wherever it comes from. A folder
that cannot be a workspace (a database store's namespace, which has no folder) keeps its vectors in
the caller's memo only.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

from memquill.errors import MemquillError
from memquill.index import unit_digest, vectors_path
from memquill.paths import canonical_workspace
from memquill.semantic._embedder import Vector
from memquill.semantic._vectors import VectorCache

ItemUnit = tuple[Path, str]
"""A text's workspace folder and unit name (``i:<record id>``)."""


def kept_vectors(
    space: str, units: Sequence[ItemUnit], texts: Sequence[str], keys: Sequence[str]
) -> dict[str, Vector]:
    """The cached vectors of ``texts`` (by their memo ``keys``) whose digest still matches."""
    found: dict[str, Vector] = {}
    for cache, rows in _by_cache(units, texts, keys):
        with contextlib.closing(cache):
            try:
                held = cache.lookup(space, [(unit, digest) for unit, digest, _ in rows])
            except (sqlite3.Error, OSError):
                continue  # the cache is never the truth: embed again
            found.update((key, held[unit]) for unit, _, key in rows if unit in held)
    return found


def keep_vectors(
    space: str,
    units: Sequence[ItemUnit],
    texts: Sequence[str],
    keys: Sequence[str],
    memo: Mapping[str, Vector],
) -> None:
    """Store the vectors ``memo`` holds for ``texts`` in their workspaces' caches."""
    for cache, rows in _by_cache(units, texts, keys):
        with contextlib.closing(cache):
            kept = [(unit, digest, memo[key]) for unit, digest, key in rows if key in memo]
            with contextlib.suppress(sqlite3.Error, OSError):
                cache.store(space, kept)


def _by_cache(
    units: Sequence[ItemUnit], texts: Sequence[str], keys: Sequence[str]
) -> list[tuple[VectorCache, list[tuple[str, str, str]]]]:
    grouped: dict[Path, list[tuple[str, str, str]]] = {}
    for (folder, unit), text, key in zip(units, texts, keys, strict=True):
        grouped.setdefault(folder, []).append((unit, unit_digest(text), key))
    caches: list[tuple[VectorCache, list[tuple[str, str, str]]]] = []
    for folder, rows in grouped.items():
        try:
            path = vectors_path(canonical_workspace(folder))
        except (MemquillError, OSError):
            continue  # no folder (a database store's namespace): the memo only
        if path is not None:
            caches.append((VectorCache(path), rows))
    return caches
