"""The index's one retry rule: try again after a recoverable failure, then let it propagate."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)


def retried(
    attempt: Callable[[], T],
    *,
    on: type[E] | tuple[type[E], ...],
    times: int,
    recover: Callable[[E], object] = lambda error: None,
) -> T:
    """``attempt()``, run up to ``times`` times while it raises ``on``.

    After each failure but the last, ``recover(error)`` runs (set a damaged file aside, say);
    the last attempt's error reaches the caller unchanged.
    """
    for _ in range(times - 1):
        try:
            return attempt()
        except on as error:
            recover(error)
    return attempt()
