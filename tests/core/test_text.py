"""UTF-16 code units: the unit of ``contentLength``, the content limit and paging."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from memquill.foundation.text import utf16_len, utf16_prefix, utf16_slice, utf16_take

# Well-formed text only: a lone surrogate is not a character and never reaches the store.
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
ASTRAL_HEAVY = st.text(
    st.one_of(
        st.characters(min_codepoint=0x10000, max_codepoint=0x1FFFF), st.sampled_from("a中\n")
    ),
    max_size=40,
)


def reference_len(text: str) -> int:
    # Independent of any encoder: a code point above U+FFFF is a surrogate pair, two units.
    return sum(2 if ord(char) > 0xFFFF else 1 for char in text)


def test_lengths_count_code_units_not_code_points() -> None:
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("记忆") == 2  # BMP CJK: one unit each
    assert utf16_len("😀") == 2  # astral: a surrogate pair
    assert utf16_len("a😀b𝄞") == 6
    assert utf16_len("\r\n") == 2


def test_take_finds_exact_boundaries_and_refuses_to_split_a_pair() -> None:
    text = "a😀b"
    assert utf16_take(text, 0, 0) == 0
    assert utf16_take(text, 0, 1) == 1
    assert utf16_take(text, 0, 2) is None  # would end inside the pair
    assert utf16_take(text, 0, 3) == 2
    assert utf16_take(text, 0, 4) == 3
    assert utf16_take(text, 0, 5) is None  # longer than the text
    assert utf16_take(text, 1, 2) == 1
    assert utf16_take("😀😀😀", 0, 5) is None
    assert utf16_take("😀😀😀", 1, 4) == 2


def test_prefix_and_slice_never_tear_a_character() -> None:
    assert utf16_prefix("ab😀", 3) == "ab"
    assert utf16_prefix("ab😀", 4) == "ab😀"
    assert utf16_prefix("abc", 10) == "abc"
    assert utf16_slice("a😀b", 0, 2) == "a"  # end inside the pair moves back
    assert utf16_slice("a😀b", 2) == "😀b"  # start inside the pair moves back
    assert utf16_slice("a😀b", 3) == "b"
    assert utf16_slice("a😀b", 1, 3) == "😀"
    assert utf16_slice("plain", 1, 3) == "la"


@settings(max_examples=150)
@given(TEXT | ASTRAL_HEAVY)
def test_len_matches_utf16_encoding(text: str) -> None:
    assert utf16_len(text) == reference_len(text)


@settings(max_examples=150)
@given(TEXT | ASTRAL_HEAVY, st.data())
def test_take_agrees_with_the_encoding(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    units = data.draw(st.integers(0, reference_len(text) + 2))
    points = utf16_take(text, start, units)
    # Every code-point prefix length of text[start:], in units.
    boundaries = [reference_len(text[start : start + n]) for n in range(len(text) - start + 1)]
    if units in boundaries:
        assert points == boundaries.index(units)
    else:
        assert points is None


@settings(max_examples=150)
@given(ASTRAL_HEAVY, st.integers(1, 7))
def test_consecutive_pages_cover_the_text_exactly(text: str, page: int) -> None:
    total = utf16_len(text)
    pieces = [utf16_slice(text, start, start + page) for start in range(0, total, page)]
    assert "".join(pieces) == text
    for limit in range(total + 1):
        prefix = utf16_prefix(text, limit)
        assert text.startswith(prefix)
        assert utf16_len(prefix) <= limit
        assert limit - utf16_len(prefix) <= 1
