"""What the index stores of one note: its figures and, per term, the counts ranking reads.

:func:`analyse_note` computes, with the query layer's own tokenizer and Markdown rules, exactly
what :class:`~memquill.query.Corpus` would compute for the same text: the body count and the
five field counts of every term (title, tags, aliases, headings, path), and how often each term
of the body occurs in each chunk (text plus heading). Only the figures are kept; the text stays
in the note.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from itertools import repeat

from memquill.query._dates import path_day
from memquill.query._markdown import chunk_markdown, note_meta
from memquill.query._scan import Identity
from memquill.query._tokens import fold, term_counts

__all__ = ["NoteFigures", "analyse_note", "chunk_matrix"]

FieldCounts = tuple[int, int, int, int, int]


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
        terms: the body's terms in matrix column order.
        chunks: per chunk, per column of ``terms``: the term's count in that chunk.
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
    chunks: tuple[array[int], ...]


def analyse_note(path: str, content: str, identity: Identity) -> NoteFigures:
    """Analyse the note ``path`` whose text (read at ``identity``) is ``content``."""
    meta = note_meta(content, path)
    folded = fold(content)
    field_counts = [
        term_counts(value)
        for value in (
            meta.title,
            "\n".join(meta.tags),
            "\n".join(meta.aliases),
            "\n".join(meta.headings),
            path,
        )
    ]
    chunks = chunk_markdown(content)
    if len(chunks) == 1 and chunks[0].text == content:
        body = term_counts(folded, folded=True)
        texts = [body]
    else:
        texts = [term_counts(chunk.text) for chunk in chunks]
        # Sections that are not cut into windows partition the note by lines, and no term
        # spans a line break, so their counts add up to the body's (ASCII folds letter by
        # letter; other text is counted whole, since normalisation may join across lines).
        if content.isascii() and "\n".join(chunk.text for chunk in chunks) == content:
            body = _sum(texts)
        else:
            body = term_counts(folded, folded=True)
    rows: list[dict[str, int]] = []
    for chunk, counts in zip(chunks, texts, strict=True):
        if chunk.heading:
            counts = _sum([counts, term_counts(chunk.heading)])
        rows.append(counts)
    terms = tuple(body)
    fields: dict[str, FieldCounts] = {}
    for position, counts in enumerate(field_counts):
        for term in counts:
            current = fields.get(term)
            values = list(current) if current is not None else [0, 0, 0, 0, 0]
            values[position] = counts[term]
            fields[term] = (values[0], values[1], values[2], values[3], values[4])
    day = path_day(path)
    return NoteFigures(
        path=path,
        identity=identity,
        byte_size=len(content.encode("utf-8", "surrogatepass")),
        length=len(folded),
        tags=tuple(sorted({tag.lower() for tag in meta.tags})),
        day=0 if day is None else day.toordinal(),
        body=dict(body),
        fields=fields,
        terms=terms,
        chunks=chunk_matrix(terms, rows),
    )


def chunk_matrix(terms: tuple[str, ...], rows: list[dict[str, int]]) -> tuple[array[int], ...]:
    """Per chunk, the count of each of ``terms`` (in that order), as compact arrays."""
    matrix: list[array[int]] = []
    width = len(terms)
    for counts in rows:
        values = list(map(counts.get, terms, repeat(0, width)))
        top = max(values, default=0)
        code = "B" if top < 1 << 8 else "H" if top < 1 << 16 else "I"
        matrix.append(array(code, values))
    return tuple(matrix)


def _sum(parts: list[dict[str, int]]) -> dict[str, int]:
    total = dict(parts[0])
    for part in parts[1:]:
        for term, count in part.items():
            total[term] = total.get(term, 0) + count
    return total
