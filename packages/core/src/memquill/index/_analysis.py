"""What the index stores of one note: its figures and, per term, the counts ranking reads.

:func:`analyse_note` computes, with the query layer's own tokenizer and Markdown rules, exactly
what :class:`~memquill.query.Corpus` would compute for the same text: the body count and the
five field counts of every term (title, tags, aliases, headings, path), and how often each term
occurs in each chunk (text plus heading). Only the figures are kept; the text stays in the
note (:mod:`._batch` gathers them for the writer).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

from memquill.index._codec import FieldCounts
from memquill.index._parts import note_words
from memquill.query import Identity, count_words, fold, note_meta, path_day, split_words


@dataclass(frozen=True, slots=True)
class NoteFigures:
    """One note as the index keeps it.

    Attributes:
        path: the workspace path.
        identity: the file identity the text was read at.
        byte_size: UTF-8 size of the text (the text limit counts it).
        length: length of the folded body (length normalisation).
        tags: the lowercased tags, sorted (the ``tags`` filter).
        day: the day the path names, as a proleptic ordinal, or 0.
        body: per term, its count in the body (terms the body holds).
        fields: per term that a metadata field holds, its five field counts.
        terms: every term of the body or a field, sorted (the matrix's columns).
        chunks: how many chunks the note has.
        matrix: per chunk (row), per column of ``terms``: the term's count in that chunk.
    """

    path: str
    identity: Identity
    byte_size: int
    length: int
    tags: tuple[str, ...]
    day: int
    body: dict[str, int]
    fields: dict[str, FieldCounts]
    terms: tuple[str, ...]
    chunks: int
    matrix: array[int]


def analyse_note(path: str, content: str, identity: Identity) -> NoteFigures:
    """Analyse the note ``path`` whose text (read at ``identity``) is ``content``."""
    meta = note_meta(content, path)
    words = note_words(content)
    body = count_words(words.body)
    headings: dict[str, Counter[str]] = {}
    rows: list[Counter[str]] = []
    for heading, found in words.chunks:
        counts = count_words(found)
        if heading:
            # A chunk counts its heading's terms too (windows of one section share it).
            extra = headings.get(heading)
            if extra is None:
                extra = headings[heading] = count_words(split_words(fold(heading)))
            counts.update(extra)
        rows.append(counts)
    fields: dict[str, FieldCounts] = {}
    for position, value in enumerate(
        (meta.title, "\n".join(meta.tags), "\n".join(meta.aliases), "\n".join(meta.headings), path)
    ):
        for term, count in count_words(split_words(fold(value))).items():
            current = fields.get(term)
            values = list(current) if current is not None else [0, 0, 0, 0, 0]
            values[position] = count
            fields[term] = (values[0], values[1], values[2], values[3], values[4])
    day = path_day(path)
    terms = tuple(sorted(body.keys() | fields.keys()))
    return NoteFigures(
        path=path,
        identity=identity,
        byte_size=len(content.encode("utf-8", "surrogatepass")),
        length=words.length,
        tags=tuple(sorted({tag.lower() for tag in meta.tags})),
        day=0 if day is None else day.toordinal(),
        body=body,
        fields=fields,
        terms=terms,
        chunks=len(rows),
        matrix=chunk_matrix(terms, rows),
    )


def chunk_matrix(terms: tuple[str, ...], rows: Sequence[Mapping[str, int]]) -> array[int]:
    """Per chunk (row), the count of each of ``terms`` (in that order), in one compact array."""
    width = len(terms)
    top = max((max(row.values(), default=0) for row in rows), default=0)
    if top < 1 << 8:  # nearly always: bytes are built fastest
        return array("B", b"".join(bytes(map(row.get, terms, repeat(0, width))) for row in rows))
    values = array("H" if top < 1 << 16 else "I")
    for row in rows:
        values.extend(map(row.get, terms, repeat(0, width)))
    return values
