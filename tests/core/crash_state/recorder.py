"""Record the file-system calls a store operation makes, at the ``os`` seam, in process.

Every ``os`` function that changes a file or a folder is wrapped while a :class:`Recorder` is
active (``os.open``, ``write``, ``pwrite``, ``writev``, ``ftruncate``, ``truncate``, ``fsync``,
``fdatasync``, ``replace``, ``rename``, ``link``, ``unlink``/``remove``, ``mkdir``, ``rmdir``,
``close``). The real call runs as usual; the recorder appends what it did to the trace, with the
bytes written and the offset they landed at (read from the real file just before: the position
of the descriptor, or the end of the file for ``O_APPEND``). Only calls on paths under the
recorded root are kept.

Writes the recorder cannot see are refused loudly rather than missed: a buffered ``open()`` /
``os.fdopen()`` for writing under the root, ``sendfile``/``copy_file_range`` into it. A write
path that starts using them makes the crash-state test fail with ``unmodelled`` until the
recorder learns them.

The recorder can also break the code under test on purpose (``drop``): a call it drops is
neither run nor recorded, which is how the tests show the checker catches a missing fsync.
"""

from __future__ import annotations

import builtins
import fcntl
import io
import os
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Call", "Recorder", "Unmodelled"]


class Unmodelled(AssertionError):
    """The code under test wrote in a way the file-system model does not know."""


@dataclass(frozen=True, slots=True)
class Call:
    """One recorded call.

    Attributes:
        op: ``open``, ``write``, ``truncate``, ``fsync``, ``rename``, ``link``, ``unlink``,
            ``mkdir``, ``rmdir``, ``close``, or ``mark`` (a point the test names, e.g. the
            moment an operation returned).
        path: the real path (``open``, ``unlink``, ``mkdir``, ``rmdir``; the source of
            ``rename``/``link``).
        target: the destination of ``rename``/``link``.
        fd: the descriptor (``open``'s result, and every call on a descriptor).
        flags: ``open``'s flags.
        offset: where ``write``'s bytes landed; ``truncate``'s new length.
        data: the bytes written.
        label: a mark's name.
    """

    op: str
    path: str | None = None
    target: str | None = None
    fd: int | None = None
    flags: int = 0
    offset: int = 0
    data: bytes = b""
    label: str = ""

    def describe(self) -> str:
        """One line for messages: ``write .records-1f2e.tmp @0 +812``."""

        def short(path: str | None) -> str:
            return os.path.basename(path or "") or "?"

        if self.op == "mark":
            return f"[{self.label}]"
        if self.op == "write":
            return f"write fd{self.fd} @{self.offset} +{len(self.data)}"
        if self.op == "truncate":
            return f"ftruncate fd{self.fd} to {self.offset}"
        if self.op in {"rename", "link"}:
            return f"{self.op} {short(self.path)} -> {short(self.target)}"
        if self.op in {"fsync", "close"}:
            return f"{self.op} fd{self.fd}"
        return f"{self.op} {short(self.path)}"


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@dataclass
class Recorder:
    """Wraps ``os`` for calls under ``root`` (a real, resolved path) and keeps the trace.

    Attributes:
        root: only calls on paths under it are recorded.
        drop: calls for which it answers true are neither run nor recorded (a deliberately
            broken write path).
        calls: the trace.
    """

    root: str
    drop: Callable[[Call], bool] = lambda call: False
    calls: list[Call] = field(default_factory=list[Call])
    _fds: dict[int, str] = field(default_factory=dict[int, str])

    def mark(self, label: str) -> None:
        """Note a point in the trace (an operation returned)."""
        self.calls.append(Call("mark", label=label))

    def path_of(self, fd: int) -> str | None:
        """The real path of a descriptor opened while recording (``None``: not ours)."""
        return self._fds.get(fd)

    def _ours(self, path: Any) -> str | None:
        if isinstance(path, int):
            return None
        real = os.path.realpath(os.fsdecode(path))
        return real if real == self.root or real.startswith(self.root + os.sep) else None

    def _entry(self, path: Any) -> str | None:
        """The real path of a folder entry itself (its final symlink not followed)."""
        if isinstance(path, int):
            return None
        text = os.fsdecode(path)
        parent = os.path.realpath(os.path.dirname(os.path.abspath(text)))
        real = os.path.join(parent, os.path.basename(text))
        return real if real == self.root or real.startswith(self.root + os.sep) else None

    @contextmanager
    def active(self) -> Generator[Recorder]:
        """Record from here to the end of the ``with`` block."""
        saved = {name: getattr(os, name) for name in _WRAPPED if hasattr(os, name)}
        saved_open = builtins.open
        wrappers = self._wrappers(saved)
        try:
            for name, wrapper in wrappers.items():
                setattr(os, name, wrapper)
            builtins.open = io.open = self._guard_open(saved_open)
            yield self
        finally:
            for name, original in saved.items():
                setattr(os, name, original)
            builtins.open = io.open = saved_open

    def _record(self, call: Call, run: Callable[[], Any]) -> Any:
        if self.drop(call):
            return None
        result = run()
        self.calls.append(call)
        return result

    def _wrappers(self, real: dict[str, Any]) -> dict[str, Callable[..., Any]]:
        recorder = self

        def fd_call(op: str, fd: int, **fields: Any) -> Call:
            return Call(op, path=recorder._fds.get(fd), fd=fd, **fields)

        def open_(path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
            if dir_fd is not None:
                raise Unmodelled("os.open with dir_fd")
            fd = real["open"](path, flags, mode)
            real_path = recorder._entry(path) if flags & os.O_CREAT else recorder._ours(path)
            if real_path is not None:
                recorder._fds[fd] = real_path
                recorder.calls.append(Call("open", path=real_path, fd=fd, flags=flags))
            else:
                recorder._fds.pop(fd, None)
            return fd

        def landing(fd: int) -> int:
            flags = _fd_flags(fd)
            if flags & os.O_APPEND:
                return os.fstat(fd).st_size
            return real["lseek"](fd, 0, os.SEEK_CUR)

        def write(fd: int, data: Any) -> int:
            if fd not in recorder._fds:
                return real["write"](fd, data)
            offset = landing(fd)
            count = real["write"](fd, data)
            recorder.calls.append(
                fd_call("write", fd, offset=offset, data=bytes(memoryview(data)[:count]))
            )
            return count

        def pwrite(fd: int, data: Any, offset: int) -> int:
            if fd not in recorder._fds:
                return real["pwrite"](fd, data, offset)
            count = real["pwrite"](fd, data, offset)
            recorder.calls.append(
                fd_call("write", fd, offset=offset, data=bytes(memoryview(data)[:count]))
            )
            return count

        def writev(fd: int, buffers: Any) -> int:
            if fd not in recorder._fds:
                return real["writev"](fd, buffers)
            offset = landing(fd)
            joined = b"".join(bytes(memoryview(buffer)) for buffer in buffers)
            count = real["writev"](fd, buffers)
            recorder.calls.append(fd_call("write", fd, offset=offset, data=joined[:count]))
            return count

        def ftruncate(fd: int, length: int) -> None:
            if fd not in recorder._fds:
                return real["ftruncate"](fd, length)
            return recorder._record(
                fd_call("truncate", fd, offset=length), lambda: real["ftruncate"](fd, length)
            )

        def truncate(path: Any, length: int) -> None:
            if recorder._ours(path) is not None:
                raise Unmodelled("os.truncate by path")
            return real["truncate"](path, length)

        def sync(name: str) -> Callable[[Any], None]:
            def run(fd: Any) -> None:
                number = fd if isinstance(fd, int) else fd.fileno()
                if number not in recorder._fds:
                    return real[name](fd)
                return recorder._record(fd_call("fsync", number), lambda: real[name](fd))

            return run

        def moving(name: str, op: str) -> Callable[..., None]:
            def run(source: Any, target: Any, *args: Any, **kwargs: Any) -> None:
                if args or kwargs:
                    raise Unmodelled(f"os.{name} with folder descriptors")
                ours, theirs = recorder._entry(source), recorder._entry(target)
                if ours is None and theirs is None:
                    return real[name](source, target)
                if ours is None or theirs is None:
                    raise Unmodelled(f"os.{name} across the recorded root")
                call = Call(op, path=ours, target=theirs)
                return recorder._record(call, lambda: real[name](source, target))

            return run

        def removing(name: str, op: str) -> Callable[..., None]:
            def run(path: Any, *args: Any, **kwargs: Any) -> None:
                ours = recorder._entry(path)
                if ours is None:
                    return real[name](path, *args, **kwargs)
                if args or kwargs:
                    raise Unmodelled(f"os.{name} with a folder descriptor")
                return recorder._record(Call(op, path=ours), lambda: real[name](path))

            return run

        def mkdir(path: Any, mode: int = 0o777, *, dir_fd: Any = None) -> None:
            ours = recorder._entry(path)
            if ours is None:
                return real["mkdir"](path, mode, dir_fd=dir_fd)
            if dir_fd is not None:
                raise Unmodelled("os.mkdir with dir_fd")
            return recorder._record(Call("mkdir", path=ours), lambda: real["mkdir"](path, mode))

        def close(fd: int) -> None:
            if fd in recorder._fds:
                recorder.calls.append(fd_call("close", fd))
                del recorder._fds[fd]
            return real["close"](fd)

        def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if fd in recorder._fds and any(flag in mode for flag in "wax+"):
                raise Unmodelled(f"os.fdopen({mode!r}) of {recorder._fds[fd]}: buffered write")
            handle = real["fdopen"](fd, mode, *args, **kwargs)
            recorder._fds.pop(fd, None)  # the file object closes it without os.close
            return handle

        def unseen(name: str) -> Callable[..., Any]:
            def run(out: int, *args: Any, **kwargs: Any) -> Any:
                if out in recorder._fds:
                    raise Unmodelled(f"os.{name} into {recorder._fds[out]}")
                return real[name](out, *args, **kwargs)

            return run

        wrappers: dict[str, Callable[..., Any]] = {
            "open": open_,
            "write": write,
            "pwrite": pwrite,
            "writev": writev,
            "ftruncate": ftruncate,
            "truncate": truncate,
            "fsync": sync("fsync"),
            "fdatasync": sync("fdatasync"),
            "replace": moving("replace", "rename"),
            "rename": moving("rename", "rename"),
            "link": moving("link", "link"),
            "unlink": removing("unlink", "unlink"),
            "remove": removing("remove", "unlink"),
            "rmdir": removing("rmdir", "rmdir"),
            "mkdir": mkdir,
            "close": close,
            "fdopen": fdopen,
            "sendfile": unseen("sendfile"),
            "copy_file_range": unseen("copy_file_range"),
        }
        return {name: wrapper for name, wrapper in wrappers.items() if name in real}

    def _guard_open(self, real_open: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def guarded(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            writing = any(flag in mode for flag in "wax+")
            if writing and not isinstance(file, int) and recorder._entry(file) is not None:
                raise Unmodelled(f"open({os.fsdecode(file)!r}, {mode!r}): buffered write")
            if isinstance(file, int) and file in recorder._fds and any(f in mode for f in "wax+"):
                raise Unmodelled(f"open(fd {file}, {mode!r}): buffered write")
            return real_open(file, mode, *args, **kwargs)

        return guarded


_WRAPPED = (
    "open",
    "write",
    "pwrite",
    "writev",
    "ftruncate",
    "truncate",
    "fsync",
    "fdatasync",
    "replace",
    "rename",
    "link",
    "unlink",
    "remove",
    "rmdir",
    "mkdir",
    "close",
    "fdopen",
    "sendfile",
    "copy_file_range",
    "lseek",
)


def _fd_flags(fd: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_GETFL)
