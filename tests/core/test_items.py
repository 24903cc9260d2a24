"""``memquill.items.ItemStore``'s names: labels as folder names and item keys as fact keys, both
reversible and one-to-one, whatever the text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from memquill import InvalidInputError
from memquill.items import ItemStore
from memquill.items._paths import MAX_FOLDER_NAME, folder_label, label_folder
from memquill.items._space import fact_key, item_key
from memquill.store._record import is_key

TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=60)


@given(TEXT)
def test_a_label_is_one_folder_name_and_back(label: str) -> None:
    try:
        name = label_folder(label)
    except InvalidInputError:
        assert len(label.encode()) * 3 > MAX_FOLDER_NAME  # only ever too long
        return
    assert folder_label(name) == label
    assert len(name) <= MAX_FOLDER_NAME and name not in (".", "..", "memory")
    assert not name.startswith(".") and "/" not in name and "\0" not in name
    assert name == name.lower() or "%" in name  # upper case is always escaped
    assert all(c.islower() or c.isdigit() or c in "_-~%ABCDEF" for c in name)


@given(TEXT, TEXT)
def test_two_labels_never_share_a_folder_even_without_case(one: str, other: str) -> None:
    try:
        first, second = label_folder(one), label_folder(other)
    except InvalidInputError:
        return
    assert (first.casefold() == second.casefold()) == (one == other)


@given(TEXT)
def test_an_item_key_is_one_fact_key_and_back(key: str) -> None:
    try:
        name = fact_key(key)
    except InvalidInputError:
        return  # too long once quoted
    assert is_key(name) and item_key(name) == key


@given(TEXT, TEXT)
def test_two_item_keys_are_two_fact_keys(one: str, other: str) -> None:
    try:
        first, second = fact_key(one), fact_key(other)
    except InvalidInputError:
        return
    assert (first == second) == (one == other)


@pytest.mark.parametrize(
    ("label", "folder"),
    [
        ("ana", "ana"),
        ("Ana", "%41na"),
        ("memory", "%6Demory"),
        ("..", "%2E%2E"),
        ("a b", "a%20b"),
        ("ü", "%C3%BC"),
        ("%", "%25"),
        ("x/y", "x%2Fy"),
    ],
)
def test_folder_names(label: str, folder: str) -> None:
    assert label_folder(label) == folder


def test_names_nobody_made_are_not_labels() -> None:
    for name in ("My Notes", "Ana", "%41NA", "%zz", "%C3", "memory", ".git", ""):
        assert folder_label(name) is None, name


def test_the_root_must_exist_and_nothing_is_made_by_reading(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError):
        ItemStore(tmp_path / "missing")
    items = ItemStore(tmp_path)
    assert items.get(("memories", "ana"), "k") is None
    assert items.items(("memories",)) == [] and items.namespaces() == []
    items.delete(("memories", "ana"), "k")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InvalidInputError):
        items.get((), "k")
    with pytest.raises(InvalidInputError):
        items.put(("memories", ""), "k", {"content": "x"})
    with pytest.raises(InvalidInputError):
        ItemStore.check_index({"dims": 3})
    ItemStore.check_index(None)
    ItemStore.check_index(False)


def test_the_item_store_names_still_resolve_from_tools_with_a_warning() -> None:
    """The item store moved from ``memquill.tools`` to ``memquill.items``: the old names still
    work for a release, warn where they went, and are no longer listed."""
    import memquill.items
    import memquill.tools

    # The names memquill.tools had before the move (names added to memquill.items since never
    # lived in memquill.tools).
    for name in sorted(set(memquill.items.__all__) - {"ItemPut"}):
        with pytest.warns(DeprecationWarning, match=f"memquill.items.{name}"):
            old = getattr(memquill.tools, name)
        assert old is getattr(memquill.items, name)
        assert name not in memquill.tools.__all__
        assert name not in dir(memquill.tools)
    with pytest.raises(AttributeError):
        memquill.tools.NoSuchName  # noqa: B018 - the lookup is the test
