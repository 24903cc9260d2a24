"""Issue 32, item 2, for the page: connections beyond the cap displace the oldest idle ones,
and a normal browser request keeps working (a real ``memquill manage``, real sockets)."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

from tests.manage.test_page_token import manage_page, page_get
from tests.slow_clients import all_closed

from memquill.web._serving import DEFAULT_MAX_CONNECTIONS


def test_idle_connections_beyond_the_cap_make_room(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with manage_page(tmp_path / "home", workspace) as printed:
        address = urlsplit(printed)
        token = address.query.removeprefix("token=")
        api = f"http://{address.netloc}/api/memory"
        status, _, _ = page_get(api, Authorization=f"Bearer {token}")
        assert status == 200
        port = address.port
        assert port is not None
        idle = [
            socket.create_connection(("127.0.0.1", port))
            for _ in range(DEFAULT_MAX_CONNECTIONS + 50)
        ]
        status, _, _ = page_get(api, Authorization=f"Bearer {token}")
        assert status == 200
        # The oldest connections, still waiting for a request, were closed to make room.
        assert all_closed(idle[:50])
        for connection in idle:
            connection.close()
