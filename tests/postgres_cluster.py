"""A throwaway PostgreSQL cluster on loopback, for the tests and for ``.ci/run``.

``python -m tests.postgres_cluster start DIR`` creates a cluster in ``DIR`` (the Debian
``postgresql`` package's binaries; as root the server runs as the ``postgres`` user), starts it
on a free port of 127.0.0.1 with password authentication, creates a database, and prints the
shell ``export`` lines of ``MEMQUILL_TEST_POSTGRES`` (the connection URL),
``MEMQUILL_TEST_POSTGRES_DATA`` and ``MEMQUILL_TEST_POSTGRES_BIN`` (so tests can restart it).
``python -m tests.postgres_cluster stop DIR`` stops it. The test fixture uses the same code to
start its own cluster when no URL is given and the binaries exist.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

URL_ENV = "MEMQUILL_TEST_POSTGRES"
DATA_ENV = "MEMQUILL_TEST_POSTGRES_DATA"
BIN_ENV = "MEMQUILL_TEST_POSTGRES_BIN"
USER = "memquill"
DATABASE = "memquill_test"


@dataclass(frozen=True)
class Cluster:
    url: str
    data: Path
    bindir: Path

    def exports(self) -> str:
        return "\n".join(
            f"export {name}={shlex.quote(value)}"
            for name, value in (
                (URL_ENV, self.url),
                (DATA_ENV, str(self.data)),
                (BIN_ENV, str(self.bindir)),
            )
        )


def bindir() -> Path | None:
    """The newest installed server's binaries (``$MEMQUILL_TEST_POSTGRES_BIN`` first)."""
    given = os.environ.get(BIN_ENV)
    if given:
        return Path(given)
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_server_user(command: list[str]) -> list[str]:
    """Run as ``postgres`` when root (the server refuses to run as root)."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


def _server_owner(path: Path) -> None:
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _pg_ctl(binaries: Path, data: Path, *args: str) -> None:
    command = [str(binaries / "pg_ctl"), "-D", str(data), "-w", "-t", "60", *args]
    subprocess.run(_as_server_user(command), check=True, capture_output=True)


def start(directory: Path) -> Cluster:
    """Create and start a cluster in ``directory`` (which must be empty or missing)."""
    binaries = bindir()
    if binaries is None:
        raise RuntimeError("no PostgreSQL server binaries (apt-get install postgresql)")
    directory.mkdir(parents=True, exist_ok=True)
    _server_owner(directory)
    data = directory / "data"
    password = secrets.token_hex(16)
    secret = directory / "password"
    secret.write_text(password)
    _server_owner(secret)
    initdb = [
        str(binaries / "initdb"),
        "-D",
        str(data),
        "-U",
        USER,
        "--pwfile",
        str(secret),
        "--auth=scram-sha-256",
        "-E",
        "UTF8",
        "--no-sync",
    ]
    subprocess.run(_as_server_user(initdb), check=True, capture_output=True)
    secret.unlink()
    port = _free_port()
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={data} "
        "-c max_connections=100"
    )
    _pg_ctl(binaries, data, "-l", str(data / "server.log"), "-o", options, "start")
    url = f"postgresql://{USER}:{password}@127.0.0.1:{port}/{DATABASE}"
    import psycopg

    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE}")
    return Cluster(url, data, binaries)


def restart_immediately(data: Path, binaries: Path) -> None:
    """Crash-restart the server (``-m immediate``: no shutdown checkpoint, WAL recovery).

    The log option matters: without it the new server would keep this call's output pipe.
    """
    _pg_ctl(binaries, data, "-l", str(data / "server.log"), "-m", "immediate", "restart")


def stop(data: Path, binaries: Path) -> None:
    _pg_ctl(binaries, data, "-m", "fast", "stop")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m tests.postgres_cluster start|stop DIR", file=sys.stderr)
        return 2
    directory = Path(argv[1])
    if argv[0] == "start":
        print(start(directory).exports())
    else:
        binaries = bindir()
        if binaries is not None and (directory / "data").exists():
            stop(directory / "data", binaries)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
