"""The local management page: see, correct and forget what the agent remembers, in a browser.

Needs the ``web`` extra (``pip install 'memquill[web]'``): Starlette for the app, uvicorn to
serve it. ``memquill manage`` is the command; this facade is what it (and a host that wants to
embed the page) uses::

    from memquill import open_session
    from memquill.manage import Backend, ManageServer
    from memquill.web import load_token

    server = ManageServer(Backend.open(open_session("/path/to/workspace")), token=load_token())
    print(server.login_url)
    server.serve()

The page serves one workspace, chosen here and never by a request, on 127.0.0.1 only, answers
only requests that carry the token (a cookie the browser gets from :attr:`login_url`, or a
bearer token), and refuses cross-site requests (see ``docs/manage.md``).
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports
from memquill.manage._app import ManageServer, create_app
from memquill.manage._state import Backend, JobsSource, JobsView, JobView, LedgerJobs

if typing.TYPE_CHECKING:
    from memquill.manage._app import (
        LOOPBACK_HOSTS as LOOPBACK_HOSTS,
        MAX_BODY_BYTES as MAX_BODY_BYTES,
    )

__all__ = [
    "Backend",
    "JobView",
    "JobsSource",
    "JobsView",
    "LedgerJobs",
    "ManageServer",
    "create_app",
]

__getattr__, __dir__ = _lazy_exports(__name__)
