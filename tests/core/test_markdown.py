"""Markdown analysis: frontmatter, headings, inline tags, wiki links and chunking (spec 6.2)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from memquill.query._markdown import (
    CHUNK_SIZE,
    _frontmatter_block,  # pyright: ignore[reportPrivateUsage]
    chunk_markdown,
    frontmatter_lines,
    note_meta,
    wiki_links,
)


def test_frontmatter_inline_list_scalar_and_block_list() -> None:
    text = (
        "---\ntags: [alpha, \"beta\", 'gamma']\naliases:\n  - First\n  - 'Second'\nother: x\n---\n"
    )
    meta = note_meta(text, "a.md")
    assert meta.tags == ("alpha", "beta", "gamma")
    assert meta.aliases == ("First", "Second")
    assert note_meta("---\ntags: solo\naliases: One\n---\n", "a.md").tags == ("solo",)


def test_frontmatter_needs_an_opening_and_a_closing_line() -> None:
    assert note_meta("---\ntags: [a]\n", "a.md").tags == ()
    assert note_meta("intro\n---\ntags: [a]\n---\n", "a.md").tags == ()
    assert note_meta("  ---  \ntags: [a]\n---\n", "a.md").tags == ("a",)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            (
                *("---", " --- ", "----", "-- -", "---x", "\r---\r", "\u2028---", "---\t"),
                *("tags: [a, b]", "aliases:", "  - One", "tags: solo", "x---", "", " ", "- two"),
            )
        ),
        max_size=12,
    ).map("\n".join)
)
def test_the_frontmatter_is_found_as_line_by_line(content: str) -> None:
    # The note split into lines, the closing line the first after the opening one that is
    # ``---`` once stripped (what excerpts read): the same lines, found without splitting.
    lines = content.split("\n")
    taken = frontmatter_lines(lines)
    assert _frontmatter_block(content) == (lines[1 : taken - 1] if taken else [])


def test_title_is_the_first_h1_else_the_file_name_with_extension() -> None:
    assert note_meta("## Two\n# One\n# Later\n", "x/y.md").title == "One"
    assert note_meta("## Only two\n", "x/notes.txt").title == "notes.txt"


def test_headings_need_one_to_six_hashes_and_a_space() -> None:
    meta = note_meta("# A\n####### seven\n#nospace\n###### six  \n", "a.md")
    assert meta.headings == ("A", "six")


def test_inline_tags_skip_code_fences_headings_and_glued_hashes() -> None:
    text = (
        "#first and #second #first\n"
        "# Heading #notatag\n"
        "```\n#incode\n```\n"
        "after fence #after, x#glued ##double #9digit #a-b_c\n"
    )
    meta = note_meta("---\ntags: [first]\n---\n" + text, "a.md")
    assert meta.tags == ("first", "second", "after", "a-b_c")


def test_wiki_links_take_the_target_deduplicated_and_bounded() -> None:
    text = "See [[Alpha]], [[Beta|the beta]], [[Alpha]] and [[ ]] " + " ".join(
        f"[[n{i}]]" for i in range(30)
    )
    links = wiki_links(text)
    assert links[:3] == ("Alpha", "Beta", " ")
    assert len(links) == 20


def test_sections_start_at_headings_with_zero_based_lines() -> None:
    chunks = chunk_markdown("intro\n\n# One\nbody\n## Two\nmore")
    assert [(c.heading, c.start_line, c.text) for c in chunks] == [
        ("", 0, "intro\n"),
        ("One", 2, "# One\nbody"),
        ("Two", 4, "## Two\nmore"),
    ]
    assert chunk_markdown("# Only\n")[0].start_line == 0
    assert len(chunk_markdown("")) == 1


def test_long_sections_are_windowed_1200_by_1050_with_start_lines() -> None:
    line = "x" * 99  # 100 units per line with its newline
    text = "\n".join([line] * 30)
    chunks = chunk_markdown(text)
    assert [len(c.text) for c in chunks] == [1200, 1200, 899]
    assert [c.start_line for c in chunks] == [0, 10, 21]
    assert chunks[1].text == text[1050:2250]


def test_windows_count_utf16_units_and_never_split_a_pair() -> None:
    text = "\U0001f600" * 700  # 1400 units
    chunks = chunk_markdown(text)
    assert all(len(c.text.encode("utf-16-le")) // 2 <= CHUNK_SIZE for c in chunks)
    assert chunks[0].text == "\U0001f600" * 600
    assert chunks[1].text == "\U0001f600" * 175
