"""The in-memory inverted index (``memquill.query._inverted``) ranks exactly as the full scan:
``rank`` over an ``IndexCorpus`` returns the same hits, in the same order, with the same scores
(bit for bit) and chunks as over a ``Corpus`` of the same documents, however the index got
there (documents added, replaced and removed in any order) and whatever the filters."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings, strategies as st

from memquill.query._documents import SearchDocument, note_document
from memquill.query._inverted import IndexCorpus, TermIndex, single_chunk
from memquill.query._markdown import Chunk, chunk_markdown
from memquill.query._rank import Corpus, RankedHit, rank
from memquill.query._tokens import count_term

NOW = datetime(2026, 7, 20, tzinfo=UTC)
WORDS = (
    "coffee", "Coffee", "tea", "teas", "went", "go", "getUserId", "user_id", "art", "start",
    "paint", "painted", "#tag", "July", "2026", "the", "of", "kind", "咖啡", "茶", "Ana's",
    "PDFs", "pdf", "x", "deploy-window",
)  # fmt: skip
TEXT = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
PATHS = st.sampled_from(
    (
        "notes/a.md",
        "notes/coffee.md",
        "memory/daily/2026-07-01.md",
        "daily/2026-06-30.md",
        "memory.md",
        "memory/records/0001.md",
        "projects/getUserId.md",
    )
)


@st.composite
def documents(draw: st.DrawFn) -> SearchDocument:
    path = draw(PATHS)
    heading = draw(st.sampled_from(("", "# Coffee notes\n", "## tea\n", "---\ntags: [tea]\n---\n")))
    body = draw(TEXT)
    more = draw(st.sampled_from(("", "\n# July\n" + "tea " * 400)))  # several chunks
    if path.startswith("memory/records/"):
        return SearchDocument(path, body, kind="record", record_id="0001")
    return note_document(path, heading + body + more)


QUERIES = st.one_of(
    TEXT,
    st.sampled_from(("", "the of", "in July 2026", "what kind of art", "nothing-here", "咖啡")),
)


def same(left: list[RankedHit], right: list[RankedHit]) -> None:
    assert [(h.document.path, h.document.content, h.score, h.chunk, h.terms) for h in left] == [
        (h.document.path, h.document.content, h.score, h.chunk, h.terms) for h in right
    ]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 7), st.none() | documents()), min_size=1, max_size=24),
    QUERIES,
    st.sampled_from(("all", "daily", "longterm", "notes")),
    st.sampled_from(((), ("tea",), ("#Tag", "other"))),
    st.integers(1, 30),
    st.sets(st.integers(0, 7)),
)
def test_an_index_ranks_as_the_full_scan(
    changes: list[tuple[int, SearchDocument | None]],
    query: str,
    file_type: str,
    tags: tuple[str, ...],
    candidates: int,
    dropped: set[int],
) -> None:
    index = TermIndex()
    held: dict[str, SearchDocument] = {}
    for number, document in changes:  # adds, replacements and removals, in any order
        key = f"k{number}"
        if document is None:
            index.remove(key)
            held.pop(key, None)
        else:
            index.add(key, document)
            held[key] = document
    assert len(index) == len(held)
    for taken in (None, [key for key in held if int(key[1:]) not in dropped]):
        chosen = list(held) if taken is None else taken
        expected = Corpus([held[key] for key in chosen])
        corpus = IndexCorpus([(index, taken)])
        assert corpus.size == expected.size
        assert corpus.average_length == expected.average_length
        arguments = {"now": NOW, "tags": tags, "file_type": file_type, "candidates": candidates}
        found = rank(corpus, query, **arguments)  # type: ignore[arg-type]
        same(found, rank(expected, query, **arguments))  # type: ignore[arg-type]
        for hit in found:
            assert held[corpus.origin(hit.document)[1]] is hit.document


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(documents(), max_size=6), min_size=1, max_size=4), QUERIES)
def test_several_indexes_rank_as_one_corpus(parts: list[list[SearchDocument]], query: str) -> None:
    indexes: list[TermIndex] = []
    for documents_of_part in parts:
        index = TermIndex()
        index.sync({f"k{n}": document for n, document in enumerate(documents_of_part)})
        indexes.append(index)
    corpus = IndexCorpus([(index, None) for index in indexes])
    expected = Corpus([document for part in parts for document in part])
    size = max(expected.size, 1)
    same(
        rank(corpus, query, now=NOW, candidates=size),
        rank(expected, query, now=NOW, candidates=size),
    )


def test_sync_holds_exactly_the_documents_given_and_keeps_the_unchanged_ones() -> None:
    index = TermIndex()
    first = {f"k{n}": note_document(f"n{n}.md", f"coffee {n}") for n in range(5)}
    index.sync(first)
    changed = dict(first, k2=note_document("n2.md", "tea"))
    del changed["k4"]
    index.sync(changed)
    assert sorted(index.keys()) == ["k0", "k1", "k2", "k3"]
    assert all(index.get(key) is document for key, document in changed.items())
    hits = rank(IndexCorpus([(index, None)]), "coffee tea", now=NOW)
    assert sorted(hit.document.path for hit in hits) == ["n0.md", "n1.md", "n2.md", "n3.md"]


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdefg"), documents(), max_size=7),
    st.dictionaries(st.sampled_from("abcdefg"), st.none() | documents(), max_size=7),
    QUERIES,
)
def test_an_update_of_the_changed_keys_holds_what_a_sync_holds(
    first: dict[str, SearchDocument], changes: dict[str, SearchDocument | None], query: str
) -> None:
    """``update`` with the keys that changed leaves the index holding what ``sync`` would:
    the same documents by key, ranked alike."""
    now = {key: document for key, document in first.items() if key not in changes}
    now.update({key: document for key, document in changes.items() if document is not None})
    updated, synced = TermIndex(), TermIndex()
    updated.sync(first)
    synced.sync(first)
    updated.update(now, set(changes))
    synced.sync(now)
    assert sorted(updated.keys()) == sorted(synced.keys()) == sorted(now)
    assert all(updated.get(key) is document for key, document in now.items())
    same(
        rank(IndexCorpus([(updated, None)]), query, now=NOW),
        rank(IndexCorpus([(synced, None)]), query, now=NOW),
    )


@given(
    st.lists(
        st.sampled_from(("coffee", "# Title", "#tag", "\n", "## h", " ", "tea" * 300, "---")),
        max_size=8,
    ).map("".join)
)
def test_a_single_chunk_is_the_whole_text_without_a_heading(content: str) -> None:
    if single_chunk(content):
        assert chunk_markdown(content) == (Chunk("", content, 0),)
        document = note_document("n.md", content)
        assert document.chunk_counts("coffee") == (count_term(document.folded, "coffee"),)
