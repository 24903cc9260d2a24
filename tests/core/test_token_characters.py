"""Single characters are classed without a pattern exactly as the tokenizer's pattern classes
them: every code point, a word character (``[^\\W_<CJK>]``) and a CJK one (``[<CJK>]``)."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from memquill.query import _tokens
from memquill.query._tokens import is_cjk

# The CJK class as tokenizer version 3 wrote it: ideographs (BMP, compatibility, supplementary
# planes), kana, and the three ideographic letters of the CJK symbols block.
CJK = (
    "\u3005-\u3007\u3040-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003134f"
)


def test_the_cjk_class_is_unchanged() -> None:
    assert _tokens._CJK == CJK  # pyright: ignore[reportPrivateUsage]


def test_every_character_is_classed_as_the_patterns_class_it() -> None:
    word = re.compile(rf"[^\W_{CJK}]")
    cjk = re.compile(f"[{CJK}]")
    word_char = _tokens._word_char  # pyright: ignore[reportPrivateUsage]
    wrong = [
        code
        for code in range(0x110000)
        if (word.match(chr(code)) is not None) != word_char(chr(code))
        or (cjk.match(chr(code)) is not None) != is_cjk(chr(code))
    ]
    assert wrong == []
    assert not is_cjk("")


# The token pattern of tokenizer version 3 as it was first written: a run is segments
# (word characters joined by apostrophes) joined by joiners.
_WORD = rf"[^\W_{CJK}]"
_SEGMENT = rf"{_WORD}+(?:'{_WORD}+)*"
_RUN = rf"{_SEGMENT}(?:[{re.escape('_-./' + _tokens.CAMEL_MARK)}]{_SEGMENT})*"
TOKEN = re.compile(rf"(?P<cjk>[{CJK}]+)|(?P<word>{_RUN})")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab1_-./'' \u2063é中かＡ𠀀\u00b2x")))
def test_the_token_pattern_matches_as_version_3_wrote_it(text: str) -> None:
    pattern = _tokens._token_re()  # pyright: ignore[reportPrivateUsage]

    def found(p: re.Pattern[str]) -> list[tuple[int, int, str | None]]:
        return [(m.start(), m.end(), m.group("cjk")) for m in p.finditer(text)]

    assert found(pattern) == found(TOKEN)
    for start in range(len(text)):  # a match at every place, as counting asks for one
        ours, theirs = pattern.match(text, start), TOKEN.match(text, start)
        assert (ours and ours.span()) == (theirs and theirs.span())
