"""The host's say over a session: may its turns be extracted into this workspace, right now?

A :data:`SessionGate` answers for one session id: ``ready``; ``read_only`` (Plan mode or any
mode where nothing may be written: the turn is not counted, and a job waits with
``unavailable: policy_blocked``); or ``unbound`` (the session is not, or no longer, bound to
this workspace: the turn is not counted, and a job is ``skipped: binding_unavailable``). It is
asked when a turn is recorded, before a job runs and again after the model answered, so
switching to Plan mode during generation saves nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Literal

from memquill.tools import BindingBackend

__all__ = ["SessionGate", "SessionState", "always_ready", "binding_gate"]

SessionState = Literal["ready", "read_only", "unbound"]
SessionGate = Callable[[str], SessionState]
"""Takes a session id; answers ``ready``, ``read_only`` or ``unbound``. Keep it cheap."""


def always_ready(session_id: str) -> SessionState:
    """The gate of a host that scopes memory itself (every session it records is ready)."""
    return "ready"


def binding_gate(
    bindings: BindingBackend,
    workspace: str | os.PathLike[str],
    read_only: Callable[[str], bool] | None = None,
) -> SessionGate:
    """A gate from explicit bindings: ``unbound`` unless ``bindings`` binds the session to
    ``workspace``; ``read_only`` when ``read_only(session_id)`` says so (Plan mode)."""

    def gate(session_id: str) -> SessionState:
        if bindings.resolve(session_id, workspace) is None:
            return "unbound"
        if read_only is not None and read_only(session_id):
            return "read_only"
        return "ready"

    return gate
