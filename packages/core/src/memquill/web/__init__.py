"""What memquill's HTTP servers (the MCP server, the management page) share.

- :func:`load_token`: the secret every request must carry; generated once into an owner-only
  file in memquill's user data folder when none is configured, and reused.
- :class:`TokenGuard`: ASGI middleware refusing (401) every request without it.
- :func:`bounded_protocol`: uvicorn's h11 protocol with a deadline for each request and a cap on
  open connections (uvicorn is imported only when it is called).

Imports nothing beyond the standard library and memquill's foundation: an adapter or the page
wraps its own ASGI application.
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports
from memquill.web._access import load_token

if typing.TYPE_CHECKING:
    from memquill.web._access import (
        LOGIN_PARAMETER as LOGIN_PARAMETER,
        TOKEN_FILE as TOKEN_FILE,
        TokenGuard as TokenGuard,
        default_token_path as default_token_path,
        read_token_file as read_token_file,
    )
    from memquill.web._serving import (
        DEFAULT_MAX_CONNECTIONS as DEFAULT_MAX_CONNECTIONS,
        DEFAULT_REQUEST_TIMEOUT as DEFAULT_REQUEST_TIMEOUT,
        bounded_protocol as bounded_protocol,
    )

__all__ = [
    "load_token",
]

__getattr__, __dir__ = _lazy_exports(__name__)
