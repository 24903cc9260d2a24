"""The item store: items of nested namespaces, kept as named facts (a key-value store's core).

:class:`ItemStore` is what a key-value memory interface stands on (the LangGraph store; ADK's
per-user scopes use :func:`namespace_folder`): a namespace is a workspace folder under the
store's root, an item's key is its fact's key, and its value the fact's text plus extra JSON.
Every write goes through the one write path (:mod:`memquill.tools`), so items are facts like
any other: revisions, tombstones, secret refusal, history. :func:`expires_at` reads an item's
time to live from its record, for the CLI and the management page (:func:`expiry_text` as text).

Names are imported on first use (:func:`memquill.lazy.lazy_exports`).
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.items._paths import (
        check_folders as check_folders,
        namespace_folder as namespace_folder,
        validate_namespace as validate_namespace,
    )
    from memquill.items._space import StoredItem as StoredItem
    from memquill.items._store import ItemHit as ItemHit, ItemPut as ItemPut, ItemStore
    from memquill.items._values import expires_at as expires_at, expiry_text as expiry_text

__all__ = [
    "ItemStore",
]

__getattr__, __dir__ = _lazy_exports(__name__)
