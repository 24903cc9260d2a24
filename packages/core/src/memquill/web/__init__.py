"""What memquill's HTTP servers (the MCP server, the management page) share.

- :func:`load_token`: the secret every request must carry; generated once into an owner-only
  file in memquill's user data folder when none is configured, and reused.
- :class:`TokenGuard`: ASGI middleware refusing (401) every request without it.

Imports nothing beyond the standard library and memquill's foundation: an adapter or the page
wraps its own ASGI application.
"""

from memquill.web._access import LOGIN_PARAMETER, TokenGuard
from memquill.web._token import TOKEN_FILE, default_token_path, load_token, read_token_file

__all__ = [
    "LOGIN_PARAMETER",
    "TOKEN_FILE",
    "TokenGuard",
    "default_token_path",
    "load_token",
    "read_token_file",
]
