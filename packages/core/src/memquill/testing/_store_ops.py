"""What the store suites share: sample values, and LangGraph's own classes read from the store.

memquill never imports LangGraph: the operation classes a batch takes (``GetOp``, ``PutOp``,
…) and ``InvalidNamespaceError`` are read from the module of the store's own ``BaseStore``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime
from types import ModuleType
from typing import Any

import pytest

Store = Any
"""A LangGraph ``BaseStore`` (typed loosely: memquill does not import LangGraph)."""

VALUES: dict[str, dict[str, Any]] = {
    "text": {"content": "Ana drinks her coffee black."},
    "fields": {"content": "Ana's timezone", "zone": "Europe/Lisbon", "confirmed": True},
    "json": {"theme": "dark", "size": 3, "ratio": 0.25, "none": None, "tags": ["a", "b"]},
    "nested": {"profile": {"name": "Ana Ü", "langs": ["pt", "en"], "n": {"deep": [1, 2.5]}}},
    "empty": {},
    "blank content": {"content": "   ", "other": 1},
    "content not text": {"content": {"kind": "note", "text": "x"}},
}


def base_module(store: Store) -> ModuleType:
    for cls in type(store).__mro__:
        if cls.__name__ == "BaseStore":
            return sys.modules[cls.__module__]
    raise TypeError(f"{type(store).__name__} is not a LangGraph BaseStore")


def operation(store: Store, name: str) -> Callable[..., Any]:
    operation: Callable[..., Any] = getattr(base_module(store), name)
    return operation


def refused(store: Store, call: Callable[[], object]) -> None:
    """``call`` raises LangGraph's ``InvalidNamespaceError``."""
    error_type: type[BaseException] = base_module(store).InvalidNamespaceError
    with pytest.raises(error_type):
        call()


def keys_of(found: list[Any]) -> list[tuple[tuple[str, ...], str]]:
    return [(tuple(item.namespace), item.key) for item in found]


def aware(moment: object) -> bool:
    return isinstance(moment, datetime) and moment.utcoffset() is not None
