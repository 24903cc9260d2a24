"""The stemmer: Snowball's published examples, irregular forms, and the prefix property."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from memquill.query._tokens import (
    IRREGULAR,
    SNOWBALL_EXCEPTIONS,
    count_term,
    fold,
    irregular_forms,
    query_terms,
    search_prefix,
    search_prefixes,
    stem,
    tokenize,
)

# Words and stems from Snowball's English sample vocabulary (and Porter's examples, as
# Porter2 stems them).
SNOWBALL = {
    "caresses": "caress",
    "ponies": "poni",
    "agreed": "agre",
    "happy": "happi",
    "relational": "relat",
    "generalizations": "general",
    "hopping": "hop",
    "filing": "file",
    "sensibility": "sensibl",
    "consign": "consign",
    "consigned": "consign",
    "consigning": "consign",
    "consignment": "consign",
    "consistency": "consist",
    "consistently": "consist",
    "consolation": "consol",
    "consolatory": "consolatori",
    "consolidating": "consolid",
    "consolingly": "consol",
    "conspicuously": "conspicu",
    "conspiracy": "conspiraci",
    "conspirators": "conspir",
    "constable": "constabl",
    "constancy": "constanc",
    "knackeries": "knackeri",
    "kneeling": "kneel",
    "knightly": "knight",
    "knitting": "knit",
    "knives": "knive",
    "knocker": "knocker",
    "dying": "die",
    "skies": "sky",
    "news": "news",
}

WORDS = [
    "went", "go", "goes", "gone", "going", "made", "make", "making", "children", "child's",
    "happiness", "happy", "happily", "studies", "studied", "relational", "relate", "sensibility",
    "dying", "die", "skies", "sky", "possibility", "possible", "ability", "ably", "valency",
    "sensible", "hoping", "hope", "hopping", "analysis", "bonus", "bonuses", "probability",
    "probable", "gentle", "agreed", "ran", "run", "runner", "o'neil", "don't", "x", "喜欢",
    " ", "\n", "-", "'", "’s", "Ｗｅｎｔ", "_", ".", "/", "goingHome", "MadeIT",
]  # fmt: skip


@pytest.mark.parametrize(("word", "expected"), sorted(SNOWBALL.items()))
def test_snowball_examples(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_irregular_forms_share_their_base_term() -> None:
    assert stem("went") == stem("gone") == stem("goes") == stem("go") == "go"
    assert stem("made") == stem("making") == stem("makes") == "make"
    assert stem("children") == "child" and stem("women") == "woman"
    assert irregular_forms("go") == ("goes", "gone", "went")
    assert search_prefixes("go") == ("go", "went")  # "goes" and "gone" start with "go"
    for form, base in IRREGULAR.items():
        assert stem(form) == stem(base), form
    assert irregular_forms("sky") == ("skies",) and search_prefixes("sky") == ("skies", "sky")
    assert search_prefixes("die") == ("d",)  # "dying": a consonant and "ying" is "Cie"


def test_plurals_of_words_without_a_vowel_lose_their_s() -> None:
    # Snowball keeps them ("pdfs"): memquill's own rule, so "PDF" finds "PDFs".
    assert stem("pdfs") == stem("pdf") == "pdf"
    assert stem("prs") == "pr" and stem("llms") == "llm"
    assert stem("css") == "css" and stem("gyms") == "gym" and stem("yrs") == "yrs"
    assert query_terms("Which PDF?") == tuple(tokenize("PDFs")) == ("pdf",)


def test_singular_and_plural_of_us_words_agree() -> None:
    assert stem("bonus") == stem("bonuses") == "bonus"


def test_question_words_are_not_query_terms() -> None:
    assert query_terms("What kind of art does Caroline make?") == ("art", "carolin", "make")
    assert query_terms("Which sort of music? Sort files by blood type") == (
        "music",
        "sort",
        "file",
        "blood",
        "type",
    )
    assert query_terms("a kind person") == ("kind", "person")
    assert query_terms("Where did Melanie go?") == ("melani", "go")
    assert query_terms("When did she go?") == query_terms("When did she went?")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="abceilnorstuyz", min_size=1, max_size=14))
def test_every_word_starts_with_its_terms_search_prefix(word: str) -> None:
    term = stem(word)
    exception = word in IRREGULAR or word in SNOWBALL_EXCEPTIONS
    assert exception or word.startswith(search_prefix(term)), (word, term)
    assert any(word.startswith(prefix) for prefix in search_prefixes(term)), (word, term)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=25))
def test_find_counting_agrees_with_the_tokenizer_for_stems(parts: list[str]) -> None:
    text = " ".join(parts[: len(parts) // 2]) + "".join(parts[len(parts) // 2 :])
    counts = Counter(tokenize(text))
    folded = fold(text)
    for term, expected in counts.items():
        assert count_term(folded, term) == expected, (text, term)
