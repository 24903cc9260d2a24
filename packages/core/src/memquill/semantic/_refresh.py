"""Note chunks embedded at index time: a session's refresh tells its semantic ranker.

A :class:`~memquill.semantic.SemanticRanker` over a query engine with a search index listens
to that index (:meth:`memquill.index.IndexSearcher.on_refresh`). When a refresh — the change
watcher's or the freshness walk's, before a search or from ``memquill index`` — read or removed
notes, :func:`embed_refreshed` runs then, in the refreshing thread:

1. the read notes are read again and cut into units as search cuts them; every chunk vector
   of a removed note, and of a read note's chunk that is no longer there or whose text
   changed, is deleted first (whatever the embedder does next);
2. the chunks not cached yet (new or changed text) are embedded through the auxiliary runner
   (scene ``memory_embed``, scope ``index``) within the ranker's search budget (3 s); what was
   embedded before the budget ran out is kept, the rest is embedded by the next semantic search
   (or ``memquill index --embed``).

Nothing here may break indexing or keyword search: an embedder that fails, times out or is
blocked, an unreadable note, a vector file that cannot be written are logged on
``memquill.semantic`` and left to the next semantic search.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Final

from memquill.enhance import WAIT_MARGIN, run_blocking
from memquill.errors import MemquillError
from memquill.index import SyncReport
from memquill.paths import read_text_nofollow
from memquill.query import SearchDocument, note_document
from memquill.semantic._embed_call import EmbedFallback
from memquill.semantic._units import Unit, units_of
from memquill.semantic._vectors import VectorCache

SCOPE: Final = "index"
"""The runner scope of embedding at index time (its own cooldown)."""

EmbedUnits = Callable[[Sequence[Unit], str, str, float], Coroutine[Any, Any, object]]
"""``(units, space, scope, deadline)``: embed ``units`` and store their vectors."""


def embed_refreshed(
    root: Path,
    report: SyncReport,
    *,
    cache: VectorCache,
    space: Callable[[], str],
    embed_units: EmbedUnits,
    timeout: float,
) -> int:
    """Bring ``root``'s note vectors in line with what ``report`` read and removed (see the
    module doc); the number of chunks embedded (0 when anything failed)."""
    try:
        units = _note_units(root, sorted(report.read))
        named = space()
        still = {unit.key: unit.digest for unit in units}
        cache.drop_notes(named, report.read | report.gone, still)
        cached = cache.lookup(named, [(unit.key, unit.digest) for unit in units])
        missing = [unit for unit in units if unit.key not in cached]
        if not missing:
            return 0
        deadline = time.monotonic() + timeout
        run_blocking(embed_units(missing, named, SCOPE, deadline), timeout + 2 * WAIT_MARGIN)
    except EmbedFallback as failure:
        _log.warning(
            "note chunks not embedded at index time (%s: %s); the next semantic search does it",
            failure.result.status,
            failure.result.reason,
        )
        return 0
    except (TimeoutError, MemquillError, OSError, sqlite3.Error) as error:
        _log.warning("note chunks not embedded at index time: %s", error)
        return 0
    return len(missing)


def _note_units(root: Path, paths: Sequence[str]) -> list[Unit]:
    documents: list[SearchDocument] = []
    for path in paths:
        try:
            text = read_text_nofollow(root / path, note=True)
        except MemquillError:
            continue  # changed again or gone: the next refresh sees it
        documents.append(note_document(path, text))
    return units_of(documents)


_log = logging.getLogger("memquill.semantic")
