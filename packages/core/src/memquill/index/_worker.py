"""A worker process of a large index build, started as ``python -m memquill.index._worker``.

It reads a :class:`._build.Start`, then units to analyse, from stdin, and answers each unit with
its count (after a batch of analysed notes, when one filled up); told to finish, it sends what
it gathered and exits. Every message is an 8-byte length and a pickle. Only the index's own
parent process talks to it.
"""

from __future__ import annotations

import gc
import pickle
import struct
import sys
from typing import IO, Final

from memquill.index._build import Analyser, Finish, Start, Unit

_LENGTH: Final = struct.Struct("<Q")
PROGRAM: Final = ("-m", "memquill.index._worker")
"""The worker's command line after the interpreter. The package facades are lazy, so it imports
only this module and what analysis needs."""


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
    """Analyse units until told to finish (or until stdin closes)."""
    # Analysis makes no reference cycles, and this process lives for one build: the cycle
    # collector would only walk the growing postings again and again.
    gc.disable()
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    start = read_message(source)
    if not isinstance(start, Start):
        return 2
    analyser = Analyser(start)
    while True:
        message = read_message(source)
        if isinstance(message, Unit):
            done, batch = analyser.analyse(message)
            if batch is not None:
                write_message(sink, batch)
            write_message(sink, done)
        elif isinstance(message, Finish):
            batch = analyser.flush()
            if batch is not None:
                write_message(sink, batch)
            write_message(sink, Finish())
            return 0
        else:
            return 0 if message is None else 2


if __name__ == "__main__":
    raise SystemExit(main())
