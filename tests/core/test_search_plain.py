"""The shell's search without the validation models answers exactly as the tool does.

:func:`memquill.query.search_request` must accept exactly what ``SearchArgs`` accepts for
values of the types the shell passes (anything else goes to the model, which words the
refusal), and :class:`memquill.query.SearchAnswer` must be the tool's result, field for field.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from tests.core.query_helpers import remember

from memquill.errors import InvalidInputError
from memquill.query import MemoryQuery, SearchArgs
from memquill.query._models import parse_args
from memquill.query._plain import search_request
from memquill.query._render import render_search

_TEXT = st.one_of(
    st.text(max_size=3),
    st.text(alphabet=st.sampled_from("a\U0001f600"), min_size=95, max_size=105),
    st.text(alphabet=st.sampled_from("b\U0001f600"), min_size=995, max_size=2005),
)


def _accepted(values: dict[str, object]) -> SearchArgs | None:
    try:
        return parse_args(SearchArgs, values)
    except InvalidInputError:
        return None


@settings(max_examples=300, deadline=None)
@given(
    query=_TEXT,
    tags=st.one_of(st.none(), st.lists(_TEXT, max_size=22)),
    file_type=st.sampled_from(["all", "daily", "longterm", "notes", "other", ""]),
    limit=st.one_of(st.integers(-2, 23), st.booleans()),
)
def test_the_plain_check_accepts_what_the_model_accepts(
    query: str, tags: list[str] | None, file_type: str, limit: int
) -> None:
    values: dict[str, object] = {
        "query": query,
        "tags": tags,
        "file_type": file_type,
        "limit": limit,
    }
    model = _accepted(values)
    plain = search_request(query, tags, file_type, limit)
    assert (plain is None) == (model is None)
    if plain is not None and model is not None:
        assert plain.query == model.query
        assert plain.tags == (None if model.tags is None else tuple(model.tags))
        assert (plain.file_type, plain.limit) == (model.file_type, model.limit)


@pytest.mark.parametrize(
    "values",
    [{"tags": ("x",)}, {"tags": "x"}, {"limit": "5"}, {"limit": 5.0}, {"query": b"x"}],
)
def test_values_of_another_type_go_to_the_model(values: dict[str, object]) -> None:
    # The model may coerce them (or word their refusal); the plain check never guesses.
    assert search_request(**{"query": "x", **values}) is None


def test_the_answer_is_the_tools_result_field_for_field(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "a.md").write_text("# Food\npierogi with farmer cheese\n", encoding="utf-8")
    (tmp_path / "memory" / "2026-01-02.md").write_text("pierogi again #food\n", encoding="utf-8")
    remember(tmp_path, "pierogi are best fried")
    engine = MemoryQuery(tmp_path)
    for tags in (None, ["food"]):
        args = parse_args(SearchArgs, {"query": "pierogi", "tags": tags, "limit": 3})
        request = search_request("pierogi", tags, "all", 3)
        assert request is not None
        result, answer = engine.search(args), engine.answer(request)
        assert result.hits, "the search found something"
        assert answer.as_data() == result.model_dump(mode="json")
        assert render_search(answer) == render_search(result)
