"""``index``: build or refresh the search index explicitly, or show its status.

Searches keep the index current on their own; this command does the work up front (a large
vault's first search would otherwise pay for it) and shows where the index is and how fresh.
On a terminal a progress bar shows files per second and the time left; ``--quiet`` or a
non-terminal stream prints only the summary. ``--embed MODULE:ATTR`` (as ``memquill-mcp
--embed``) then embeds, for semantic recall, every note chunk and active record whose vector
the workspace's vector cache lacks, so no search pays for it (``docs/ranking.md``).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TextIO

from memquill.cli.context import Context, add_common
from memquill.foundation.controls import escape_controls
from memquill.index import IndexSearcher, IndexStatus, SearchIndex, SyncReport, index_errors
from memquill.paths import canonical_workspace

if TYPE_CHECKING:
    from memquill.semantic import Embedder

__all__ = ["register"]

_BAR: Final = 24
_EVERY: Final = 0.1


def register(subparsers: Any) -> None:
    """Add ``index`` to ``memquill``."""
    index = subparsers.add_parser(
        "index", help="build or refresh the search index (searches also keep it current)"
    )
    shown = index.add_mutually_exclusive_group()
    shown.add_argument("--status", action="store_true", help="show the index and its freshness")
    shown.add_argument(
        "--embed",
        metavar="MODULE:ATTR",
        help="then embed every note chunk and record not embedded yet, for semantic recall "
        "with this embedder (a memquill Embedder, or a function returning one)",
    )
    index.add_argument("--rebuild", action="store_true", help="discard the index and build anew")
    index.add_argument("--quiet", action="store_true", help="no progress bar, summary only")
    add_common(index)
    index.set_defaults(handler=_index)


def _index(args: argparse.Namespace, context: Context) -> int:
    root = canonical_workspace(context.workspace)
    embedder = None
    if args.embed:
        # Semantic recall is loaded only when asked for.
        from memquill.semantic import load_embedder

        try:
            embedder = load_embedder(args.embed)
        except ValueError as error:
            context.err.write(escape_controls(f"error[usage]: {error}") + "\n")
            return 2
    searcher = IndexSearcher(notice=None, watch=False)
    try:
        # A read-only, full or misplaced index folder: a search's words, as a storage error.
        with index_errors():
            return _run(args, context, searcher.index(root), embedder)
    finally:
        searcher.close()


def _run(
    args: argparse.Namespace, context: Context, index: SearchIndex, embedder: Embedder | None
) -> int:
    if args.status:
        status = index.status()
        context.emit(_status_text(status), _status_json(status))
        return 0
    if args.rebuild:
        index.discard()
    bar = None if args.quiet or context.as_json else _Bar.on(context.err)
    started = time.perf_counter()
    try:
        report = index.refresh(progress=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.finish()
    elapsed = time.perf_counter() - started
    status = index.status(freshness=False)
    text, data = _summary(report, status, elapsed), _summary_json(report, status, elapsed)
    code = 0
    if embedder is not None:
        line, data["embedded"] = _embed(context, embedder)
        text += "\n" + line
        code = 0 if data["embedded"] is not None else 1
    context.emit(text, data)
    return code


def _embed(context: Context, embedder: Embedder) -> tuple[str, dict[str, Any] | None]:
    """Embed what the vector cache lacks: the summary line, and the figures (``None``: the
    embedder failed, and the line says why)."""
    from memquill.semantic import SemanticRanker

    ranker = SemanticRanker(embedder, context.session("read").query)
    started = time.perf_counter()
    try:
        count = asyncio.run(ranker.warm(scope="index"))
        units = len(ranker.cache.units())
    except RuntimeError as error:
        return escape_controls(f"Not embedded: {error}."), None
    finally:
        ranker.cache.close()
    elapsed = time.perf_counter() - started
    line = (
        f"Embedded {count:,} text{'' if count == 1 else 's'} in {_duration(elapsed)}; "
        f"vector cache: {units:,} vectors."
    )
    return line, {"texts": count, "vectors": units, "seconds": round(elapsed, 3)}


class _Bar:
    """A one-line progress bar on a terminal (files per second, time left).

    The rate is measured from the first notes done on: starting worker processes takes a
    moment in which nothing is done, and counting it would promise a later end than comes.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._started = time.perf_counter()
        self._first: tuple[float, int] | None = None
        self._shown = 0.0
        self._drawn = False

    @classmethod
    def on(cls, stream: TextIO) -> _Bar | None:
        isatty = getattr(stream, "isatty", None)
        return cls(stream) if callable(isatty) and isatty() else None

    def update(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - self._shown < _EVERY:
            return
        self._shown = now
        first = self._first
        if done and first is None:
            self._first = first = (now, done)
        if first is None or done <= first[1]:
            pace = "… files/s  ETA …"  # nothing measured yet
        elif done >= total:
            pace = f"{done / max(now - self._started, 1e-9):,.0f} files/s  ETA {_duration(0.0)}"
        else:
            rate = (done - first[1]) / max(now - first[0], 1e-9)
            pace = f"{rate:,.0f} files/s  ETA {_duration((total - done) / rate)}"
        filled = _BAR * done // max(total, 1)
        line = f"\r[{'#' * filled}{'.' * (_BAR - filled)}] {done:,}/{total:,} notes  {pace}"
        self._stream.write(line)
        self._stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()


def _summary(report: SyncReport, status: IndexStatus, elapsed: float) -> str:
    rate = f" ({report.analysed / elapsed:,.0f} files/s)" if report.analysed and elapsed else ""
    lines = [
        f"Indexed {_notes(report.notes)}: {report.analysed:,} read, "
        f"{report.removed:,} removed, in {_duration(elapsed)}{rate}.",
        f"Index: {_where(status)}, {_megabytes(status.size)}.",
    ]
    lines.extend(report.warnings)
    return "\n".join(lines)


def _summary_json(report: SyncReport, status: IndexStatus, elapsed: float) -> dict[str, Any]:
    return {
        "notes": report.notes,
        "read": report.analysed,
        "removed": report.removed,
        "seconds": round(elapsed, 3),
        "path": None if status.path is None else str(status.path),
        "bytes": status.size,
        "warnings": list(report.warnings),
    }


def _status_text(status: IndexStatus) -> str:
    if not status.exists:
        return (
            f"Index: {_where(status)}\n"
            "not built yet (the next search or `memquill index` builds it)"
        )
    if status.fresh:
        freshness = "up to date"
    else:
        freshness = (
            f"{_notes(status.stale or 0)} to read, {status.removed or 0:,} to remove "
            "at the next search"
        )
    synced = (
        "never"
        if status.synced_ns is None
        else datetime.fromtimestamp(status.synced_ns / 1e9, UTC).isoformat(timespec="seconds")
    )
    return "\n".join(
        [
            f"Index: {_where(status)}",
            f"size: {_megabytes(status.size)}",
            f"notes: {status.documents:,} ({status.pages} page{'' if status.pages == 1 else 's'})",
            f"last brought up to date: {synced}",
            f"freshness: {freshness}",
        ]
    )


def _status_json(status: IndexStatus) -> dict[str, Any]:
    return {
        "path": None if status.path is None else str(status.path),
        "exists": status.exists,
        "bytes": status.size,
        "notes": status.documents,
        "pages": status.pages,
        "synced_ns": status.synced_ns,
        "stale": status.stale,
        "removed": status.removed,
        "fresh": status.fresh,
    }


def _notes(count: int) -> str:
    return f"{count:,} note" + ("" if count == 1 else "s")


def _where(status: IndexStatus) -> str:
    return "in memory" if status.path is None else str(status.path)


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s"
