"""What the index stores of a note equals what the reference computes, term by term.

The index counts terms its own way, at C speed: each note is folded and split into words once,
cut at safe places into parts, and every chunk's counts come from its parts plus its two cut
ends (:mod:`memquill.index._analysis`). The reference folds and counts every chunk on its own
(:class:`memquill.query._documents.SearchDocument`). These properties hold for generated notes
with headings, windows that cut words anywhere, camelCase, identifiers, CJK, combining marks,
astral characters and every kind of space and punctuation.
"""

from __future__ import annotations

import string
from collections import Counter

from hypothesis import given, settings, strategies as st

from memquill.foundation.text import point_at, point_of, unit_starts
from memquill.index._analysis import analyse_note, chunk_spans, note_words
from memquill.index._build import BatchBuilder
from memquill.index._codec import NoteRow, decode_page, decode_term_list, encode_page
from memquill.query._documents import note_document
from memquill.query._markdown import CHUNK_SIZE, chunk_markdown
from memquill.query._tokens import (
    COMPOUND,
    ascii_word_bytes,
    camel_free,
    compound_terms,
    count_keys,
    count_term,
    count_words,
    fold,
    split_words,
    term_counts,
    tokenize,
    word_keys,
)

WORDS = (
    *("alpha", "painting", "paints", "went", "getUserId", "HTTPServer", "x_y.z", "don't"),
    *("Caroline's", "ÀB", "ß", "ﬁne", "e\u0301", "日本語", "メモ", "😀", "\U00020000", "Ⅻ"),
    *("under_score", "kebab-case", "a/b", "v1.2", "\u2063", "’s", "ǅ", "İstanbul", "ＡＢ"),
)
SEPARATORS = (" ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u3000", "\u2028", "-", ".", "'", "/")


def texts(max_parts: int) -> st.SearchStrategy[str]:
    part = st.one_of(
        st.sampled_from(WORDS),
        st.sampled_from(SEPARATORS),
        st.sampled_from(tuple(string.punctuation)),
        st.sampled_from(("\n# Title ", "\n## Sec ", "\n###### deep ", "\n#nope ", "\n---\n")),
        st.text(alphabet=string.ascii_letters + "éÉ’\u0301", min_size=1, max_size=12),
        st.integers(150, 1400).map(lambda size: "w" * size),  # a word across windows
    )
    return st.lists(part, max_size=max_parts).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts(40))
def test_words_count_what_the_tokenizer_yields(text: str) -> None:
    expected = Counter(tokenize(text))
    assert term_counts(text) == expected
    assert count_words(split_words(fold(text))) == expected


def ascii_texts(max_parts: int) -> st.SearchStrategy[str]:
    """Notes of ASCII text alone (analysis folds them in one pass): headings, identifiers,
    camelCase, words that windows cut, and runs of one word that count past a byte."""
    part = st.one_of(
        st.sampled_from(tuple(word for word in WORDS if word.isascii())),
        st.sampled_from(tuple(sep for sep in SEPARATORS if sep.isascii())),
        st.sampled_from(tuple(string.punctuation)),
        st.sampled_from(("\n# Title ", "\n## Sec a-b ", "\n###### deep ", "\n#nope ", "\n---\n")),
        st.text(alphabet=string.ascii_lowercase + "-_./' ", min_size=1, max_size=12),
        st.integers(150, 1400).map(lambda size: "w" * size),
        st.integers(1, 400).map(lambda size: "a " * size),
    )
    return st.lists(part, max_size=max_parts).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts(40), ascii_texts(40)))
def test_word_keys_count_what_the_tokenizer_yields(text: str) -> None:
    keys = word_keys(split_words(fold(text)))
    counts: dict[str, int] = {}
    count_keys(counts, keys)
    expected = Counter(tokenize(text))
    # No term is empty or starts with a compound key's mark: compound keys sort first.
    assert all(term and not term.startswith(COMPOUND) for term in expected)
    for key in [key for key in counts if key.startswith(COMPOUND)]:
        count = counts.pop(key)
        for term in compound_terms(key):
            counts[term] = counts.get(term, 0) + count
    assert counts == expected


@settings(max_examples=300, deadline=None)
@given(ascii_texts(40), st.integers(0, 2000), st.integers(0, 2000))
def test_a_slice_of_ascii_word_bytes_splits_as_the_slice_folded(
    text: str, begin: int, end: int
) -> None:
    if not camel_free(text):
        text = text.lower()
    assert ascii_word_bytes(text)[begin:end].split() == split_words(fold(text[begin:end]))


@settings(max_examples=200, deadline=None)
@given(texts(40))
def test_a_folded_text_is_its_folded_lines(text: str) -> None:
    assert fold(text).split("\n") == [fold(line) for line in text.split("\n")]


@settings(max_examples=150, deadline=None)
@given(texts(400))
def test_chunk_spans_are_the_reference_chunks(content: str) -> None:
    spans = chunk_spans(content)
    chunks = chunk_markdown(content)
    assert [(s.heading, s.start_line, content[s.begin : s.end]) for s in spans] == [
        (c.heading, c.start_line, c.text) for c in chunks
    ]


@settings(max_examples=150, deadline=None)
@given(st.one_of(texts(400), ascii_texts(400)))
def test_parts_count_every_chunk_and_the_body_as_the_reference(content: str) -> None:
    document = note_document("n.md", content)
    words = note_words(content)
    assert words.length == document.length
    assert count_words(words.body) == Counter(tokenize(content))
    assert len(words.chunks) == len(document.chunks())
    for found, (chunk, folded, _) in zip(words.chunks, document.chunks(), strict=True):
        assert found.heading == chunk.heading
        assert count_words(words.chunk_words(found)) == Counter(tokenize(chunk.text)), folded


@settings(max_examples=150, deadline=None)
@given(st.one_of(texts(300), ascii_texts(300)))
def test_a_note_s_figures_are_the_reference_s(content: str) -> None:
    path = "notes/2026-03-04 getUserId.md"
    document = note_document(path, content)
    figures = analyse_note(path, content, (1, 2, 3, 4, 5))
    assert figures.length == document.length
    assert figures.chunks == len(document.chunks())
    width = len(figures.terms)
    assert list(figures.terms) == sorted(figures.body.keys() | figures.fields.keys())
    builder = BatchBuilder()
    builder.add(figures, 0)
    batch = builder.build()
    stored = decode_term_list(batch.notes[0].term_list(range(width)))
    assert list(batch.vocabulary) == list(figures.terms)  # the batch numbers them in order
    assert list(stored.ids) == list(range(width)) and stored.chunks == figures.chunks
    for column, term in enumerate(figures.terms):
        assert figures.body.get(term, 0) == count_term(document.folded, term)
        assert stored.bodies[column] == figures.body.get(term, 0)
        rows = tuple(figures.matrix[row * width + column] for row in range(figures.chunks))
        assert rows == document.chunk_counts(term) == stored.chunk_counts(column), term
    for term, counts in figures.fields.items():
        assert counts == tuple(count_term(field, term) for field in document.fields), term
        assert stored.fields[figures.terms.index(term)] == counts


def test_a_chunk_count_past_a_byte_is_kept_whole() -> None:
    for content in ("a " * 300 + "b", "# Big a\n" + "a " * 300, "x é " + "a-b " * 280):
        document = note_document("a.md", content)
        figures = analyse_note("a.md", content, (1, 2, 3, 4, 5))
        assert figures.matrix.typecode == "H"
        width = len(figures.terms)
        for column, term in enumerate(figures.terms):
            rows = tuple(figures.matrix[row * width + column] for row in range(figures.chunks))
            assert rows == document.chunk_counts(term), term


def test_a_word_cut_by_two_windows_counts_in_each_as_cut() -> None:
    content = "start " + "x" * (CHUNK_SIZE - 8) + " paintings " + "y" * 900 + " end"
    document = note_document("a.md", content)
    figures = analyse_note("a.md", content, (1, 2, 3, 4, 5))
    assert figures.chunks == len(document.chunks()) == 2
    width = len(figures.terms)
    for column, term in enumerate(figures.terms):
        rows = tuple(figures.matrix[row * width + column] for row in range(2))
        assert rows == document.chunk_counts(term)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aé😀\U00020000\ud800x\n", max_size=40))
def test_points_of_utf16_offsets_without_a_table(text: str) -> None:
    starts = unit_starts(text)
    point = point_of(text)
    for unit in range(-2, starts[-1] + 3):
        assert point(unit) == point_at(starts, unit)


def test_a_page_of_notes_reads_back_and_detects_damage() -> None:
    rows = [
        NoteRow(7, "a/b.md", 10, 11, -12, 13, 14, 15, 16, 17, "x\ny", 738000),
        NoteRow(9, "日本/\udcff.md", 1, 2, 3, 4, 5, 6, 7, 8, "", 0),
    ]
    blob = encode_page(rows)
    assert decode_page(blob) == rows
    assert decode_page(encode_page([])) == []
    builder = BatchBuilder()
    builder.add(analyse_note("a.md", "alpha bravo", (1, 2, 3, 4, 5)), 0)
    batch = builder.build()
    term_list = batch.notes[0].term_list(range(len(batch.vocabulary)))
    for sound in (blob, term_list):
        damaged = bytearray(sound)
        damaged[5] ^= 1
        try:
            decode_page(bytes(damaged)) if sound is blob else decode_term_list(bytes(damaged))
        except Exception as error:
            assert "checksum" in str(error)
        else:
            raise AssertionError("damage was not detected")
