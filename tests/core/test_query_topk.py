"""Exact pruning to the best ``depth`` (``memquill.query._topk``): ranking the documents
:func:`narrow` keeps gives, for the best ``depth`` by score and then the caller's tie order,
the same documents, order, scores (bit for bit), chunks and terms as ranking every document of
the corpus, whatever the ties at the cut-off, filters, dates, chunks and depth."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from hypothesis import given, settings, strategies as st

from memquill.query._documents import SearchDocument, note_document
from memquill.query._inverted import IndexCorpus, TermIndex
from memquill.query._rank import RankedHit, rank
from memquill.query._topk import KeptCorpus, narrow

NOW = datetime(2026, 7, 20, tzinfo=UTC)
WORDS = ("coffee", "tea", "teas", "art", "start", "July", "#tag", "咖啡", "getUserId", "the")
# Few words, short texts: many documents share their inputs, so ties at the cut-off are common.
TEXT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
LONG = (
    "",
    "\n# July\n" + "tea " * 400,  # several chunks: the best is not known from the body
    "\n" + "coffee art " * 150,  # one section in several windows
    "\n## tea\nstart",  # a heading: two chunks, short
)


@st.composite
def documents(draw: st.DrawFn) -> SearchDocument:
    body = draw(st.one_of(TEXT, st.sampled_from(("coffee", "coffee tea", "tea", "start art"))))
    kind = draw(st.sampled_from(("record", "record", "record", "note", "daily", "longterm")))
    if kind == "record":
        number = draw(st.integers(0, 99))
        path = f"memory/records/{number:04d}.md"
        more = draw(st.sampled_from(LONG[:2] + ("",) * 4))
        return SearchDocument(path, body + more, kind="record", record_id=f"{number:04d}")
    path = {
        "note": draw(st.sampled_from(("notes/a.md", "notes/coffee.md", "projects/getUserId.md"))),
        "daily": draw(st.sampled_from(("memory/daily/2026-07-01.md", "daily/2026-06-30.md"))),
        "longterm": "memory.md",
    }[kind]
    heading = draw(st.sampled_from(("", "# Coffee notes\n", "---\ntags: [tea]\n---\n")))
    return note_document(path, heading + body + draw(st.sampled_from(LONG)))


QUERIES = st.one_of(
    st.lists(st.sampled_from(WORDS[:6]), min_size=1, max_size=3).map(" ".join),
    TEXT,
    st.sampled_from(("", "the of", "in July 2026", "tea in July 2026", "nothing-here", "咖啡 tea")),
)


def orders(ranks: list[int]) -> Callable[[tuple[int, str]], tuple[int, int]]:
    """A tie order of (part, key) unrelated to the documents' paths: key ``k<n>`` comes
    ``ranks[n]``-th (then by part)."""

    def order(origin: tuple[int, str]) -> tuple[int, int]:
        position, key = origin
        return ranks[int(key[1:])], position

    return order


def best(
    corpus: IndexCorpus, ranked: list[RankedHit], order: Callable[[tuple[int, str]], object]
) -> list[tuple[object, ...]]:
    """The hits sorted by score, then ``order``: what a caller keeps a prefix of."""
    rows = [
        (-hit.score, order(corpus.origin(hit.document)), hit.document.path, hit.chunk, hit.terms)
        for hit in ranked
    ]
    rows.sort(key=lambda row: row[:2])  # type: ignore[arg-type, return-value]
    return rows


def check(
    parts: list[list[SearchDocument]],
    query: str,
    depth: int,
    ranks: list[int],
    dropped: set[int],
    file_type: str = "all",
    tags: tuple[str, ...] = (),
) -> None:
    """The best ``depth`` of the documents :func:`narrow` keeps are the whole corpus's, with
    every part's documents, then without those ``dropped`` (a caller's filter)."""
    indexes: list[TermIndex] = []
    for held in parts:
        index = TermIndex()
        index.sync({f"k{n}": document for n, document in enumerate(held)})
        indexes.append(index)
    order = orders(ranks)
    for taken in (None, [f"k{n}" for n in range(64) if n not in dropped]):
        corpus = IndexCorpus([(index, taken) for index in indexes])
        arguments = {"now": NOW, "tags": tags, "file_type": file_type}
        full = rank(corpus, query, candidates=max(corpus.size, 1), **arguments)  # type: ignore[arg-type]
        kept = narrow(
            corpus,
            query,
            depth=depth,
            order=lambda index, corpus=corpus: order(corpus.origin_at(index)),
            **arguments,  # type: ignore[arg-type]
        )
        pruned = rank(kept, query, candidates=max(corpus.size, 1), **arguments)  # type: ignore[arg-type]
        assert best(corpus, pruned, order)[:depth] == best(corpus, full, order)[:depth]
        assert len(pruned) <= len(full)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(documents(), min_size=2, max_size=24), min_size=1, max_size=3),
    QUERIES,
    st.sampled_from(("all", "all", "all", "daily", "longterm", "notes")),
    st.sampled_from(((), (), (), ("tea",), ("#Tag", "other"))),
    st.integers(0, 8),
    st.permutations(range(64)),
    st.sets(st.integers(0, 23), max_size=6),
)
def test_the_documents_kept_rank_as_the_whole_corpus_at_the_top(
    parts: list[list[SearchDocument]],
    query: str,
    file_type: str,
    tags: tuple[str, ...],
    depth: int,
    ranks: list[int],
    dropped: set[int],
) -> None:
    check(parts, query, depth, ranks, dropped, file_type, tags)


# Families of documents nearly alike: what sets a family's documents apart is one input of
# ranking, so a group of equal scores that wrongly takes one in is caught.
FAMILIES = (
    (  # a field: the label's title holds "tea"
        ("record", "memory/records/0002.md", "coffee tea"),
        ("record", "memory/records/0003.md", "tea: coffee"),
    ),
    (  # a length (notes are normalised by it)
        ("note", "notes/a.md", "tea tea"),
        ("note", "notes/a.md", "teas and tea"),
    ),
    (  # a day: decayed, and in July or not
        ("note", "memory/daily/2026-07-01.md", "coffee tea"),
        ("note", "daily/2026-06-30.md", "coffee tea"),
        ("note", "memory/daily/2026-07-18.md", "coffee tea"),
    ),
    (  # chunks: one, or several with the best early or late
        ("record", "memory/records/0002.md", "coffee tea"),
        ("record", "memory/records/0005.md", "coffee " + "tea " * 400),
        ("record", "memory/records/0006.md", "tea " * 400 + "coffee"),
    ),
    (  # the same counts in several chunks, the best chunk apart
        ("record", "memory/records/0005.md", "coffee " + "tea " * 400),
        ("record", "memory/records/0006.md", "tea " * 400 + "coffee"),
    ),
    (  # a heading: two chunks
        ("note", "notes/b.md", "# Coffee\ntea"),
        ("note", "notes/b.md", "coffee\ntea"),
    ),
    (  # a count; the title and path
        ("record", "memory/records/0001.md", "coffee"),
        ("record", "memory/records/0004.md", "coffee coffee"),
        ("note", "notes/coffee.md", "tea"),
        ("note", "notes/a.md", "tea"),
    ),
)


@st.composite
def alike(draw: st.DrawFn) -> list[list[SearchDocument]]:
    """One or two parts of many documents of one family (and now and then another's)."""
    chosen = list(draw(st.sampled_from(FAMILIES)))
    chosen.append(draw(st.sampled_from([member for family in FAMILIES for member in family])))
    parts: list[list[SearchDocument]] = []
    for _ in range(draw(st.integers(1, 2))):
        part: list[SearchDocument] = []
        for kind, path, content in draw(st.lists(st.sampled_from(chosen), max_size=30)):
            if kind == "record":
                part.append(SearchDocument(path, content, kind="record", record_id=path[-7:-3]))
            else:
                part.append(note_document(path, content))
        parts.append(part)
    return parts


@settings(max_examples=300, deadline=None)
@given(
    alike(),
    st.sampled_from(("coffee", "tea", "coffee tea", "tea in July 2026", "coffee July")),
    st.integers(1, 6),
    st.permutations(range(64)),
    st.sets(st.integers(0, 29), max_size=10),
)
def test_ties_and_near_ties_at_the_cut_off(
    parts: list[list[SearchDocument]],
    query: str,
    depth: int,
    ranks: list[int],
    dropped: set[int],
) -> None:
    check(parts, query, depth, ranks, dropped)


def test_of_many_documents_with_the_same_score_only_the_first_in_order_are_kept() -> None:
    index = TermIndex()
    for number in range(200):
        text = "coffee and tea" if number % 2 else "coffee only"
        index.add(
            f"k{number:03d}", SearchDocument(f"memory/records/{number:04d}.md", text, kind="record")
        )
    corpus = IndexCorpus([(index, None)])

    def order(at: int) -> str:
        return corpus.origin_at(at)[1][::-1]  # keys read backwards: not the paths' order

    kept = narrow(corpus, "coffee tea", depth=5, order=order, now=NOW)
    assert isinstance(kept, KeptCorpus)
    both = sorted((f"k{number:03d}" for number in range(1, 200, 2)), key=lambda key: key[::-1])
    assert sorted(corpus.origin_at(at)[1] for at in kept.kept) == sorted(both[:5])
    deeper = narrow(corpus, "coffee tea", depth=103, order=order, now=NOW)
    assert isinstance(deeper, KeptCorpus)
    # All 100 with both words, then the first 3 of the 100 with one.
    assert len(deeper.kept) == 103
    assert narrow(corpus, "coffee tea", depth=200, order=order, now=NOW) is corpus
    assert narrow(corpus, "", depth=1, order=order, now=NOW) is corpus
