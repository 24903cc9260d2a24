"""``load_embedder``: the embedder a ``MODULE:ATTRIBUTE`` spec names (``--embed``)."""

from __future__ import annotations

import importlib

from memquill.semantic._embedder import Embedder


def load_embedder(spec: str) -> Embedder:
    """The :class:`Embedder` at ``module:attribute`` (called first when it is a factory).

    Raises:
        ValueError: the spec is malformed, cannot be imported, or does not lead to an embedder.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"--embed takes MODULE:ATTRIBUTE, not {spec!r}")
    try:
        value: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"--embed {spec}: {error}") from None
    if not isinstance(value, Embedder) and callable(value):
        try:
            value = value()
        except TypeError as error:
            raise ValueError(f"{spec} could not be called without arguments: {error}") from None
    if not isinstance(value, Embedder):
        raise ValueError(
            f"{spec} is not an embedder (identity, dims and an async embed(texts, kind=...))"
        )
    return value
