"""Searchable documents: a note or an active record, analysed once and reused while unchanged.

A :class:`SearchDocument` holds what ranking reads: the folded body and metadata fields, the tag
set filters use, and (built on first use) the chunks with their folded text. Building one does
no I/O, so the scan and the records projection share it and a cache can keep it as long as the
source is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final, Literal

from memquill.query._excerpt import LineIndex
from memquill.query._markdown import Chunk, NoteMeta, chunk_markdown, note_meta
from memquill.query._tokens import count_term, fold, plain
from memquill.store import ProjectedRecord

WORKSPACE_FILE: Final = "workspace-file"
"""The provenance shown for a user's own note."""

_CHUNK_MEMO: Final = 256
_LABEL: Final = re.compile(r"([^\n:]{1,40}):[ \t]")
"""A leading label: up to 40 characters of the first line, then a colon and a space."""

DocumentKind = Literal["note", "record"]


class SearchDocument:
    """One document as ranking sees it.

    Attributes:
        path: the workspace path (``memory/records/<id>.md`` for a record).
        content: the text, verbatim.
        source: ``workspace-file`` or the record's provenance line.
        kind: ``note`` or ``record``.
        record_id: the record's id, for a record.
        record_revision: the record revision, for a record.
        key: the fact's key, for a record that has one.
        meta: title, tags, aliases and headings.
        folded: the folded body (see :func:`~memquill.query._tokens.fold`).
        plain: the folded body without camelCase marks, to rule a term out in one look-up.
        fields: the folded metadata fields (title, tags, aliases, headings, path).
        field_text: every field joined.
        field_plain: the same without camelCase marks, to rule a term out in one look-up.
        tag_keys: the lowercased tags, for the ``tags`` filter.
        length: the folded body's length, for length normalisation.
        byte_size: UTF-8 size of the text, for the scan's byte budget.
    """

    __slots__ = (
        "_chunk_counts",
        "_chunk_list",
        "_chunks",
        "_lines",
        "byte_size",
        "content",
        "field_plain",
        "field_text",
        "fields",
        "folded",
        "key",
        "kind",
        "length",
        "meta",
        "path",
        "plain",
        "record_id",
        "record_revision",
        "source",
        "tag_keys",
    )

    def __init__(
        self,
        path: str,
        content: str,
        *,
        source: str = WORKSPACE_FILE,
        kind: DocumentKind = "note",
        record_id: str | None = None,
        record_revision: str | None = None,
        key: str | None = None,
    ) -> None:
        self.path = path
        self.content = content
        self.source = source
        self.kind: DocumentKind = kind
        self.record_id = record_id
        self.record_revision = record_revision
        self.key = key
        meta = note_meta(content, path)
        if kind == "record" and meta.title == path.rsplit("/", 1)[-1]:
            # A record's file name is its id, which names nothing: its title is its leading
            # label ("Anna's phone: …", "Caroline: …"), if it has one.
            meta = replace(meta, title=record_label(content))
        self.meta: NoteMeta = meta
        self.folded = fold(content)
        self.fields: tuple[str, ...] = tuple(
            fold(value)
            for value in (
                meta.title,
                "\n".join(meta.tags),
                "\n".join(meta.aliases),
                "\n".join(meta.headings),
                path,
            )
        )
        self.field_text = "\n".join(self.fields)
        self.plain = plain(self.folded)
        self.field_plain = plain(self.field_text)
        self.tag_keys = frozenset(tag.lower() for tag in meta.tags)
        self.length = len(self.folded)
        self.byte_size = len(content.encode("utf-8", "surrogatepass"))
        self._chunks: tuple[tuple[Chunk, str, str], ...] | None = None
        self._chunk_list: tuple[Chunk, ...] | None = None
        self._chunk_counts: dict[str, tuple[int, ...]] = {}
        self._lines: LineIndex | None = None

    def chunks(self) -> tuple[tuple[Chunk, str, str], ...]:
        """Each chunk with its folded text and folded heading (computed once)."""
        if self._chunks is None:
            self._chunks = tuple(
                (chunk, fold(chunk.text), fold(chunk.heading)) for chunk in self.chunk_list()
            )
        return self._chunks

    def chunk_list(self) -> tuple[Chunk, ...]:
        """The chunks alone (computed once; a hit names its chunk without folding any)."""
        if self._chunk_list is None:
            self._chunk_list = chunk_markdown(self.content)
        return self._chunk_list

    def lines(self) -> LineIndex:
        """The text's lines, folded, for excerpts (computed once)."""
        if self._lines is None:
            self._lines = LineIndex(self.content, self.folded)
        return self._lines

    def chunk_counts(self, term: str) -> tuple[int, ...]:
        """How often ``term`` occurs in each chunk (text plus heading), remembered per term."""
        counts = self._chunk_counts.get(term)
        if counts is None:
            counts = tuple(
                count_term(text, term) + (count_term(heading, term) if heading else 0)
                for _, text, heading in self.chunks()
            )
            if len(self._chunk_counts) >= _CHUNK_MEMO:
                self._chunk_counts.clear()
            self._chunk_counts[term] = counts
        return counts


def record_label(content: str) -> str:
    """The short label a record starts with, before ``: `` on its first line ("" if none)."""
    match = _LABEL.match(content)
    return match.group(1).strip() if match is not None else ""


def note_document(path: str, content: str) -> SearchDocument:
    """A workspace note."""
    return SearchDocument(path, content)


def record_document(record: ProjectedRecord) -> SearchDocument:
    """An active record, as its projection ``memory/records/<id>.md``."""
    return SearchDocument(
        record.path,
        record.content,
        source=record.provenance,
        kind="record",
        record_id=record.id,
        record_revision=record.record_revision,
        key=record.key,
    )
