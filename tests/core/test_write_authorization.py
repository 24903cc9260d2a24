"""One authorisation rule for every write: a batch of candidates passes the same rule as a
single fact (the session may write now; a ``tool`` or ``conversation`` source names its
session), and a refused write changes nothing on disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.store_helpers import conversation, tree

from memquill import MemorySession, WriteSource, remember
from memquill.errors import InvalidInputError, Messages
from memquill.store._results import Candidate
from memquill.tools._session import Access
from memquill.tools._writes import save_candidates

NO_SESSION_SOURCES = [
    pytest.param({"kind": "tool"}, id="tool"),
    pytest.param({"kind": "tool", "sessionId": ""}, id="tool-empty"),
    pytest.param({"kind": "conversation", "messageId": "m-1"}, id="conversation"),
]


def _refused(root: Path, message: str, write: object) -> None:
    before = tree(root)
    with pytest.raises(InvalidInputError) as info:
        assert callable(write)
        write()
    assert info.value.message == message
    assert tree(root) == before


@pytest.mark.parametrize("source", NO_SESSION_SOURCES)
def test_a_candidate_without_a_session_is_refused_by_the_write_rule(
    tmp_path: Path, source: dict[str, str]
) -> None:
    session = MemorySession(tmp_path, "chat-1")
    batch = [conversation("A good fact.", "job:0"), Candidate("A fact.", source, "job:1")]
    # The same refusal, in the same words, as a single write with that source.
    _refused(tmp_path, Messages.NO_SESSION, lambda: save_candidates(session, batch))
    kind = source["kind"]
    assert kind in ("tool", "conversation")
    single = WriteSource(kind, session_id=source.get("sessionId"), message_id="m-1")
    _refused(tmp_path, Messages.NO_SESSION, lambda: remember(session, "A fact.", source=single))


@pytest.mark.parametrize(
    ("access", "agrees"), [("read", True), ("read_write", False)], ids=["read-only", "host-says-no"]
)
def test_a_session_that_may_not_write_saves_no_candidate(
    tmp_path: Path, access: Access, agrees: bool
) -> None:
    session = MemorySession(tmp_path, "chat-1", access, lambda: agrees)
    batch = [conversation("A fact.", "job:0")]
    _refused(tmp_path, Messages.WRITE_UNAUTHORIZED, lambda: save_candidates(session, batch))


def test_candidates_naming_their_session_are_saved(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-1")
    result = save_candidates(
        session,
        [conversation("A fact.", "job:0"), Candidate("Another.", {"kind": "manual"}, "job:1")],
    )
    assert result.status == "saved" and len(result.records) == 2
