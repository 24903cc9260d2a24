"""Month mentions in queries and dated paths: parsing, and their weight in ranking."""

from __future__ import annotations

from datetime import UTC, date, datetime

from memquill.query._dates import path_day, query_months
from memquill.query._documents import note_document
from memquill.query._rank import Corpus, RankParams, rank

NOW = datetime(2026, 9, 22, tzinfo=UTC)
FLAT = RankParams(half_life_days=None)


def test_query_months() -> None:
    assert query_months("What did we decide in July 2022?") == ((2022, 7),)
    assert query_months("plans for march, and the 3rd of March 2024") == ((None, 3), (2024, 3))
    assert query_months("on 1 May, 2022") == ((2022, 5),)
    assert query_months("May 4th") == ((None, 5),)
    assert query_months("you may go; MAY 2021") == ((2021, 5),)
    assert query_months("marching octobers") == ()


def test_dated_paths() -> None:
    assert path_day("memory/daily/2026-07-14.md") == date(2026, 7, 14)
    assert path_day("2026-07-14.md") == date(2026, 7, 14)
    assert path_day("x2026-07-14.md") is None
    assert path_day("2026-02-30.md") is None
    assert path_day("notes/july.md") is None


def test_the_named_month_lifts_its_daily_notes() -> None:
    docs = [
        note_document("daily/2022-06-30.md", "we decided on the launch plan"),
        note_document("daily/2022-07-14.md", "we decided on the launch plan"),
        note_document("daily/2023-07-14.md", "we decided on the launch plan"),
        note_document("notes/other.md", "nothing relevant"),
    ]
    corpus = Corpus(docs)
    hits = rank(corpus, "What launch plan did we decide on in July 2022?", now=NOW, params=FLAT)
    assert [hit.document.path for hit in hits] == [
        "daily/2022-07-14.md",
        "daily/2022-06-30.md",
        "daily/2023-07-14.md",
    ]
    any_year = rank(corpus, "launch plan in July", now=NOW, params=FLAT)
    assert {hit.document.path for hit in any_year[:2]} == {
        "daily/2022-07-14.md",
        "daily/2023-07-14.md",
    }
    # A month alone finds its notes (the year alone matches paths too); filters apply first.
    assert [h.document.path for h in rank(corpus, "July 2022", now=NOW, params=FLAT)] == [
        "daily/2022-07-14.md",
        "daily/2022-06-30.md",
    ]
    assert rank(corpus, "July 2022", now=NOW, params=FLAT, file_type="notes") == []


def test_date_weight_zero_turns_it_off() -> None:
    docs = [note_document("2022-07-14.md", "plan"), note_document("2022-06-14.md", "plan")]
    off = RankParams(half_life_days=None, date_weight=0.0)
    hits = rank(Corpus(docs), "plan July 2022", now=NOW, params=off)
    assert hits[0].score == hits[1].score
