"""A job's sources, resolved against the host's history, and the storage signature.

Both are facts a job is checked against before and after the model answers: which of its
source turns still stand (a human user message with text, before a completed assistant
reply), whether any changed while the model was answering, and whether the records storage
changed since it last failed (metadata only, never content).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memquill.lifecycle._host import SourceMessage
from memquill.lifecycle._model import Job, SourceRef


@dataclass(frozen=True, slots=True)
class UsableTurn:
    """A source turn that still stands: its reference and both messages."""

    ref: SourceRef
    user: SourceMessage
    assistant: SourceMessage


def usable_turns(job: Job, messages: Sequence[SourceMessage]) -> list[UsableTurn]:
    """The job's source turns that still stand in ``messages``, in the job's order."""
    index = {message.id: (position, message) for position, message in enumerate(messages)}
    usable: list[UsableTurn] = []
    for ref in job.refs:
        user = index.get(ref.user_message_id)
        reply = index.get(ref.assistant_message_id)
        if user is None or reply is None:
            continue
        (user_at, user_message), (reply_at, reply_message) = user, reply
        if (
            user_message.role == "user"
            and user_message.human
            and user_message.text.strip()
            and reply_message.role == "assistant"
            and reply_message.completed
            and user_at < reply_at
        ):
            usable.append(UsableTurn(ref, user_message, reply_message))
    return usable


def changed(used: Sequence[UsableTurn], job: Job, messages: Sequence[SourceMessage]) -> bool:
    """Whether any used source turn no longer stands exactly as it was read."""
    now = {turn.ref: turn for turn in usable_turns(job, messages)}
    for turn in used:
        again = now.get(turn.ref)
        if (
            again is None
            or again.user.text != turn.user.text
            or again.assistant.text != turn.assistant.text
        ):
            return True
    return False


def storage_signature(root: Path) -> str:
    """``[inode, size, mtime_ns, mode]`` of the workspace, ``memory/`` and ``records.md`` (or
    the error name for each), as compact JSON: it changes when someone repairs storage."""
    parts: list[object] = []
    for path in (root, root / "memory", root / "memory" / "records.md"):
        try:
            info = os.lstat(path)
        except OSError as error:
            parts.append(errno.errorcode.get(error.errno or 0, "error"))
        else:
            parts.append([info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode])
    return json.dumps(parts, separators=(",", ":"))
