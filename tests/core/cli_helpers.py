"""Helpers for tests that run the ``memquill`` command as a user does: a real process, its own
data and cache folders, the environment stripped of memquill's variables."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from memquill.errors import ERRORS

MEMQUILL = str(Path(sys.executable).parent / "memquill")
MEMQUILL_MCP = str(Path(sys.executable).parent / "memquill-mcp")
ADDRESS_SPACE = 1 << 30
"""What a command process may map (1 GiB): a read without a bound fails fast instead of
growing until the machine runs out of memory."""


def cli_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a user whose home, data and cache folders are under ``tmp_path``."""
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("MEMQUILL_", "XDG_"))
    }
    environment.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    return environment


def _bounded() -> None:  # runs in the child, before memquill starts
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_cli(
    env: dict[str, str],
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
    program: str = MEMQUILL,
) -> subprocess.CompletedProcess[bytes]:
    """``memquill ARGS…`` in a process of its own (bytes in, bytes out), memory bounded."""
    return subprocess.run(
        [program, *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
        preexec_fn=_bounded,
    )


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (``None`` for folders and special files)."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        found[relative] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return found


def coded_failure(
    done: subprocess.CompletedProcess[bytes], code: str, message: str | None = None
) -> str:
    """``done`` failed in the one format: nothing on stdout, ``error[<code>]: <message>`` on
    stderr (exactly ``message`` when given), the code's exit status, no traceback; its stderr."""
    err = done.stderr.decode()
    assert done.returncode == ERRORS[code].exit_status, err
    assert err.startswith(f"error[{code}]: "), err
    assert "Traceback" not in err
    if message is not None:
        assert err == f"error[{code}]: {message}\n"
    assert done.stdout == b""
    return err


def without_driver(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``env`` for a host without psycopg: whether or not it is installed, a startup hook makes
    importing it fail, as on a host without the ``postgres`` extra."""
    hook = tmp_path / "no_driver"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text("import sys\nsys.modules['psycopg'] = None\n")
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(hook), env.get("PYTHONPATH")]))}
