"""What memquill's HTTP servers (the MCP server, the management page) share.

- :func:`load_token`: the secret every request must carry; generated once into an owner-only
  file in memquill's user data folder when none is configured, and reused.
- :class:`TokenGuard`: ASGI middleware refusing (401) every request without it.
- :func:`bounded_protocol`: uvicorn's h11 protocol with a deadline for each request and a cap on
  open connections (uvicorn is imported only when it is called).

Imports nothing beyond the standard library and memquill's foundation: an adapter or the page
wraps its own ASGI application.
"""

from memquill.web._access import (
    LOGIN_PARAMETER,
    TOKEN_FILE,
    TokenGuard,
    default_token_path,
    load_token,
    read_token_file,
)
from memquill.web._serving import DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT, bounded_protocol

__all__ = [
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_REQUEST_TIMEOUT",
    "LOGIN_PARAMETER",
    "TOKEN_FILE",
    "TokenGuard",
    "bounded_protocol",
    "default_token_path",
    "load_token",
    "read_token_file",
]
