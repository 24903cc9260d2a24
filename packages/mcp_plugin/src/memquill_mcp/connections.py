"""Which session a call runs in: the host's own, or one derived for each client connection.

A host that starts a server for one conversation passes that conversation's session id. When it
does not, the server derives one per connection, ``<client-name>-<12 hex digits>``, so receipts,
record provenance and idempotency keys stay tied to one connection:

- over streamable HTTP with sessions, the connection is the transport session (its
  ``Mcp-Session-Id``). The id is a salted hash of it, because that handle authorises requests
  and must never be written into ``records.md``;
- over stdio a server process serves one connection, so one fresh id is drawn per server;
- a stateless request (the 2026-07-28 protocol over HTTP) belongs to no connection. It gets the
  server's fresh id together with every client of the same name, so a retry carrying the same
  idempotency key is still recognised as one.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from collections import OrderedDict
from typing import Final

from memquill import MemorySession, MemoryToolset

__all__ = ["ConnectionSessions", "derive_session_id"]

_LOG = logging.getLogger(__name__)
_UNSAFE: Final = re.compile(r"[^a-z0-9._-]+")
_DEFAULT_CLIENT: Final = "mcp-client"


def derive_session_id(client_name: str | None, connection: str | None, salt: str) -> str:
    """``<client-name>-<12 hex digits>``: readable, and stable for one connection.

    Args:
        client_name: the name the client declared (``clientInfo.name``), if any.
        connection: the transport's connection id, or ``None`` for the server's own.
        salt: a secret drawn per server, so ids cannot be linked back to transport handles.
    """
    slug = _UNSAFE.sub("-", (client_name or "").lower()).strip("-._")[:40] or _DEFAULT_CLIENT
    digest = hashlib.sha256(f"{salt}\0{connection or ''}".encode()).hexdigest()
    return f"{slug}-{digest[:12]}"


class ConnectionSessions:
    """The toolsets a server runs calls in.

    Args:
        session: the host's session. Its toolset serves every call unless ``derive`` is set;
            then it is the template whose settings each derived session copies.
        derive: derive a session id per client connection (``session.session_id`` is ignored).
        capacity: derived toolsets kept; an evicted one is rebuilt with the same id on demand.
    """

    def __init__(
        self, session: MemorySession, *, derive: bool = False, capacity: int = 256
    ) -> None:
        self.toolset = MemoryToolset(session)
        """The host session's toolset (also the catalogue every derived toolset repeats)."""
        self.derive = derive
        """Whether calls run in per-connection sessions."""
        self._template = session
        self._salt = secrets.token_hex(16)
        self._capacity = capacity
        self._derived: OrderedDict[str, MemoryToolset] = OrderedDict()

    def toolset_for(self, client_name: str | None, connection: str | None) -> MemoryToolset:
        """The toolset of the session derived for this client and connection.

        Called on the server's event loop only, so the cache needs no lock.
        """
        session_id = derive_session_id(client_name, connection, self._salt)
        toolset = self._derived.get(session_id)
        if toolset is not None:
            self._derived.move_to_end(session_id)
            return toolset
        # One query engine for every connection: its document cache is per workspace.
        toolset = MemoryToolset(self._session(session_id), query=self.toolset.query)
        self._derived[session_id] = toolset
        if len(self._derived) > self._capacity:
            self._derived.popitem(last=False)
        _LOG.info("session %s for client %r", session_id, client_name)
        return toolset

    def _session(self, session_id: str) -> MemorySession:
        # Keeps the host's clock, lock timeout, secret scanner and write authorisation.
        return self._template.with_session_id(session_id)
