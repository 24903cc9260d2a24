"""A worker process of a large index build: ``python -m memquill.index._worker``.

It reads batches from stdin and writes their results to stdout, each as a 4-byte length and a
pickle, until stdin closes. Only the index's own parent process talks to it.
"""

from __future__ import annotations

import pickle
import struct
import sys
from typing import IO, Final

from memquill.index._build import Batch, build_batch

__all__ = ["main", "read_message", "write_message"]

_LENGTH: Final = struct.Struct("<Q")


def read_message(stream: IO[bytes]) -> object | None:
    """One message, or ``None`` at the end of the stream."""
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return pickle.loads(payload)  # noqa: S301 - written by this program's parent process


def write_message(stream: IO[bytes], message: object) -> None:
    """Write one message and flush."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(payload)) + payload)
    stream.flush()


def main() -> int:
    """Serve batches until stdin closes."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        batch = read_message(source)
        if batch is None:
            return 0
        if not isinstance(batch, Batch):
            return 2
        write_message(sink, build_batch(batch))


if __name__ == "__main__":
    raise SystemExit(main())
