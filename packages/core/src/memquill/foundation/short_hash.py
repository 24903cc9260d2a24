"""SHA-256 of short inputs without loading OpenSSL.

Importing ``hashlib`` maps OpenSSL's libcrypto: about 3.5 MiB of a process's memory, paid by a
search that hashes only a few short texts (the workspace's path naming its index file, the scan
rules a folder listing depends on). CPython's own SHA-256 module gives the same digest without
it. It is about nine times slower on megabytes, so long inputs (a records file, its revision)
go through ``hashlib``, imported where they are hashed.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import Any, Final

_MODULE: Final = "_sha2" if sys.version_info >= (3, 12) else "_sha256"


def short_sha256(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``, a short input (see the module)."""
    return _sha256()(data).hexdigest()


@functools.cache
def _sha256() -> Callable[[bytes], Any]:
    try:
        module: Any = importlib.import_module(_MODULE)
        return module.sha256
    except (ImportError, AttributeError):  # an interpreter built without it
        import hashlib

        return hashlib.sha256
