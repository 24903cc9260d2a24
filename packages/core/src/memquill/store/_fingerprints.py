"""Forgotten-text fingerprints: what keeps a forgotten fact from being re-saved by an agent.

A forget erases a fact's text, key and extra metadata; its operation hashes and source keys
block a retry of the same write and re-extraction from the same message, but not the same
words arriving another way (another session, an update, a new message). So every version of a
forgotten family keeps, in its tombstone, ``textHash``: a keyed fingerprint of the text that
version held, normalised as duplicates are compared (:func:`same_words`: NFKC, case-folded,
whitespace runs as one space). Never the text itself: the fingerprint is
``hmac-v1:`` + HMAC-SHA256 under the record key (:mod:`memquill.store._record_key`), so a
copy of ``records.md`` does not let anyone test guesses of what was forgotten.

A save or correction whose source is ``tool`` or ``conversation`` (a model, an adapter,
extraction, the memory tool, the LangGraph store) whose normalised text matches a forgotten
version's fingerprint under any key this store recognises answers ``blocked``, naming when the
fact was forgotten. A person (source ``manual``) may save it again on purpose: the write is
``saved`` and says it was forgotten before. A superseded version that is compacted keeps the
fingerprint of the text it dropped, so forgetting its fact later still blocks that text;
fingerprints of a family that is not forgotten never block anything.
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
from typing import Final

from memquill.store._record import Record
from memquill.store._record_key import KEYED_PREFIX

TEXT_HASH_FIELD: Final = "textHash"
"""The metadata key holding a version's forgotten-text fingerprint."""
BLOCKING_KINDS: Final = frozenset({"tool", "conversation"})
"""The source kinds a forgotten text blocks (a person's ``manual`` write is never blocked)."""
_DOMAIN: Final = b"memquill:text-fingerprint:v1\0"


def same_words(content: str) -> str:
    """``content`` as duplicates are compared: NFKC, case-folded, whitespace runs as one space."""
    return " ".join(unicodedata.normalize("NFKC", content).casefold().split())


def text_fingerprint(key: bytes, content: str) -> str:
    """The keyed fingerprint of ``content``'s normalised text."""
    data = _DOMAIN + same_words(content).encode("utf-8")
    return KEYED_PREFIX + hmac.new(key, data, hashlib.sha256).hexdigest()


def with_fingerprint(record: Record, key: bytes | None) -> Record:
    """``record`` carrying the fingerprint of its text, before that text is dropped (unchanged
    when it holds no text, already has one, or no key is given)."""
    if key is None or not record.content or TEXT_HASH_FIELD in record.meta:
        return record
    return record.evolve(**{TEXT_HASH_FIELD: text_fingerprint(key, record.content)})
