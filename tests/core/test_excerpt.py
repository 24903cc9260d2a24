"""Excerpts show the evidence: the best line and its neighbours, cut only at words, in budget."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st
from tests.core.query_helpers import engine, write

from memquill.foundation.text import utf16_len
from memquill.query._excerpt import ELLIPSIS, Excerpt, LineIndex, build_excerpt
from memquill.query._tokens import count_term, fold, query_terms


def excerpt(content: str, query: str, units: int = 300) -> Excerpt:
    return build_excerpt(LineIndex(content), [(t, 1.0) for t in query_terms(query)], units)


def test_the_pierogi_note_shows_its_matching_line_not_a_torn_chunk_start(tmp_path: Path) -> None:
    filler = "We talked about the garden, the fence and whether the shed needs paint. " * 20
    write(tmp_path, "kitchen.md", f"# Kitchen\n\n{filler}\nThe pierogi recipe uses farmer cheese\n")
    write(tmp_path, "other.md", "Cheese shop opening hours.\n")
    hit = engine(tmp_path).search("pierogi farmer cheese").result.hits[0]
    assert hit.path == "kitchen.md"
    assert hit.line == 4
    assert hit.heading == "Kitchen"
    assert hit.snippet.startswith("The pierogi recipe uses farmer cheese")


def test_neighbours_fill_the_budget_next_line_first_and_the_heading_is_not_repeated() -> None:
    content = "# Trip\n\nday one: train\nday two: kayak on the lake\nday three: rain\nday four"
    shown = excerpt(content, "kayak")
    assert shown == Excerpt(
        3, "Trip", "day one: train\nday two: kayak on the lake\nday three: rain\nday four"
    )
    assert excerpt(content, "kayak", units=45).text == "day two: kayak on the lake\nday three: rain"


def test_a_line_that_does_not_fit_is_cut_at_words_around_its_matches() -> None:
    before = " ".join(f"w{i}" for i in range(200))
    after = " ".join(f"v{i}" for i in range(200))
    shown = excerpt(f"{before} saffron risotto {after}", "saffron risotto", units=80)
    assert shown.text.startswith(ELLIPSIS) and shown.text.endswith(ELLIPSIS)
    assert "saffron risotto" in shown.text
    assert utf16_len(shown.text) <= 80
    inner = shown.text.strip(ELLIPSIS)
    assert f" {inner} " in f" {before} saffron risotto {after} "  # whole words only


def test_the_start_of_the_next_line_fills_what_is_left_cut_at_a_word() -> None:
    long_next = "second line " + "with many words " * 30
    shown = excerpt(f"first line mentions kayak\n{long_next}", "kayak", units=100)
    first, tail = shown.text.split("\n")
    assert first == "first line mentions kayak"
    assert tail.endswith(ELLIPSIS) and long_next.startswith(tail[:-1])
    assert long_next[len(tail) - 1] == " "
    assert utf16_len(shown.text) <= 100


def test_cjk_lines_are_cut_between_characters() -> None:
    line = "我们" * 200 + "长城" + "他们" * 200
    shown = excerpt(line, "长城", units=50)
    assert "长城" in shown.text and utf16_len(shown.text) <= 50
    assert shown.text.startswith(ELLIPSIS) and shown.text.endswith(ELLIPSIS)


def test_a_word_longer_than_the_budget_is_cut_hard_but_within_it() -> None:
    shown = excerpt("x" * 1000 + " kayak", "zebra", units=50)
    assert shown.text == "x" * 49 + ELLIPSIS


def test_without_a_matching_line_the_start_after_the_frontmatter_is_shown() -> None:
    content = "---\ntags: [kayak]\n---\n# Boats\n\nAll about boats."
    assert excerpt(content, "kayak") == Excerpt(3, "Boats", "# Boats\n\nAll about boats.")


def test_frontmatter_lines_are_never_shown_as_context() -> None:
    content = "---\ntags: [project]\n---\n# Tea shop\n\nThe tea shop project ships in October."
    shown = excerpt(content, "tea")
    assert shown == Excerpt(5, "Tea shop", "The tea shop project ships in October.")


def test_astral_characters_count_two_units_and_are_never_split() -> None:
    line = "\U0001f600 " * 100 + "kayak " + "\U0001f600 " * 100
    shown = excerpt(line, "kayak", units=31)
    assert utf16_len(shown.text) <= 31 and "kayak" in shown.text
    shown.text.encode("utf-8")  # no lone surrogate


WORDS = ["kayak", "lake", "Rain", "tea", "the", "长城", "é", "\U0001f600", "x" * 40, "-", "."]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join), min_size=1, max_size=12),
    st.lists(st.sampled_from(["kayak", "lake", "rain", "tea", "长城"]), min_size=1, max_size=3),
    st.integers(min_value=20, max_value=300),
)
def test_every_excerpt_fits_shows_real_text_and_points_at_a_match(
    lines: list[str], query: list[str], units: int
) -> None:
    content = "\n".join(lines)
    shown = excerpt(content, " ".join(query), units)
    assert utf16_len(shown.text) <= units
    for piece in shown.text.split(ELLIPSIS):
        assert piece in content
    terms = query_terms(" ".join(query))
    holding = [i for i, line in enumerate(lines) if any(count_term(fold(line), t) for t in terms)]
    if holding:
        assert shown.line in holding
