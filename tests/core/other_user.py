"""HTTP requests from another local user: ``nobody`` through ``setpriv`` when this test runs as
root, else this user (the request still crosses a real loopback socket).

Loopback is shared by every user of a host; these requests are what one of them can send.
"""

from __future__ import annotations

import http.client
import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass
from email.parser import Parser
from typing import Final

ANSWER_TIMEOUT: Final = 60.0
"""A hang guard for one request, not a speed target."""


@dataclass(frozen=True)
class Answer:
    """An HTTP response: status, headers (lower-case names, the last of each) and body."""

    status: int
    headers: dict[str, str]
    body: bytes


def other_user_prefix() -> list[str]:
    """The command prefix that runs a command as ``nobody`` (empty when that is impossible)."""
    setpriv = shutil.which("setpriv")
    if os.name != "posix" or os.geteuid() != 0 or setpriv is None:
        return []
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        return []
    return [
        setpriv,
        f"--reuid={nobody.pw_uid}",
        f"--regid={nobody.pw_gid}",
        "--clear-groups",
        "--",
    ]


def request(
    method: str, url: str, headers: dict[str, str] | None = None, body: bytes | None = None
) -> Answer:
    """Send one request as another user when possible (curl as ``nobody``), else as this one."""
    curl = shutil.which("curl")
    prefix = other_user_prefix()
    if curl is None or not prefix:
        return _here(method, url, headers or {}, body)
    command = [*prefix, curl, "-sS", "-i", "-X", method, "--max-time", str(int(ANSWER_TIMEOUT))]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    if body is not None:
        command += ["--data-binary", "@-"]
    done = subprocess.run(
        [*command, url], input=body or b"", capture_output=True, check=True, timeout=ANSWER_TIMEOUT
    )
    head, _, rest = done.stdout.partition(b"\r\n\r\n")
    status_line, _, fields = head.decode("latin-1").partition("\r\n")
    parsed = Parser().parsestr(fields, headersonly=True)
    return Answer(int(status_line.split()[1]), {k.lower(): v for k, v in parsed.items()}, rest)


def _here(method: str, url: str, headers: dict[str, str], body: bytes | None) -> Answer:
    rest = url.removeprefix("http://")
    authority, _, path = rest.partition("/")
    host, _, port = authority.rpartition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=ANSWER_TIMEOUT)
    try:
        connection.request(method, "/" + path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
    finally:
        connection.close()
