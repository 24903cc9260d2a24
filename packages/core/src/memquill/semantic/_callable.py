"""An :class:`Embedder` from a plain function, and what to tell a person who passed another thing.

Hosts often hold an embedding *function* rather than an object: LangGraph's ``IndexConfig``
takes ``embed`` as a callable of a list of texts, sync or async. :class:`FunctionEmbedder`
wraps one; its identity names the function (module and qualified name), so two different
functions never share cached vectors.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence

from memquill.enhance import ModelIdentity
from memquill.semantic._embedder import EmbedKind

EmbedFunction = Callable[
    [list[str]], "Sequence[Sequence[float]] | Awaitable[Sequence[Sequence[float]]]"
]


class FunctionEmbedder:
    """An embedder calling ``function(texts)`` (sync or async) for queries and documents alike.

    Args:
        function: the embedding function.
        dims: the vectors' length, if known.
        family: the identity's family (``langgraph`` for an ``IndexConfig``'s ``embed``).
        name: the identity's name (default: the function's module and qualified name).
    """

    def __init__(
        self,
        function: EmbedFunction,
        *,
        dims: int | None = None,
        family: str = "function",
        name: str | None = None,
    ) -> None:
        self.function = function
        self._dims = dims
        label = name or _name_of(function)
        self._identity = ModelIdentity.from_settings(family, label, {"dims": dims})

    @property
    def identity(self) -> ModelIdentity:
        """The function's family and name."""
        return self._identity

    @property
    def dims(self) -> int | None:
        """The vectors' length, if given."""
        return self._dims

    async def embed(self, texts: Sequence[str], *, kind: EmbedKind) -> Sequence[Sequence[float]]:
        """``function(list(texts))``, awaited when it is a coroutine."""
        del kind  # one function for both
        answer = self.function(list(texts))
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

    def __repr__(self) -> str:
        return f"FunctionEmbedder({self._identity.name!r})"


def _name_of(function: object) -> str:
    module = getattr(function, "__module__", None) or type(function).__module__
    qualified = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}.{qualified}"
