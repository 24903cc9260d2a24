"""Private paths: what a query never serves, and what a note is.

Private: memquill's own bookkeeping (any ``.assistant``, ``.git`` or ``.memquill`` segment, the
records file, its lock, staging and backup files, the conflict copies file-sync tools leave
beside it, and record projections, and the same files of a workspace nested inside this one)
and the files and folders that usually hold credentials, whatever their extension and whatever
the scan settings say.

A name (of a file, or of a folder on the way) is judged by its dot-separated parts, not by how
it ends: ``secrets.txt``, ``key.pem.md`` and ``secrets.env.txt`` are private because one of
their parts is a credential extension (:data:`CREDENTIAL_EXTENSIONS`) or a credential stem
(:data:`CREDENTIAL_STEMS`), and so is everything in a ``secrets/`` folder; a part must equal
one, so ``keyboard.md``, ``monkey.md`` and ``api-design.md`` are notes.
A file in the records format (an export, a copy of ``records.md`` under any name) is
memquill's own too, wherever it lies: :func:`is_records_text` tells it by its opening, and the
note reader (:func:`memquill.foundation.safe_read.read_regular_stat`) refuses it.
The credential lists below are the complete rule set; ``docs/security.md`` shows them as a
table and ``tests/core/test_private_paths.py`` tests each entry.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection
from typing import Final

from memquill.errors import Messages

__all__ = [
    "CREDENTIAL_EXTENSIONS",
    "CREDENTIAL_FOLDERS",
    "CREDENTIAL_NAMES",
    "CREDENTIAL_NESTED_FOLDERS",
    "CREDENTIAL_PARTS",
    "CREDENTIAL_PREFIXES",
    "CREDENTIAL_STEMS",
    "NOTE_EXTENSIONS",
    "RECORDS_MARKERS",
    "SUSPECT_NAMES",
    "SUSPECT_STARTS",
    "is_managed_record_path",
    "is_note",
    "is_private",
    "is_records_conflict_copy",
    "is_records_text",
    "may_be_private",
    "private_reason",
]

NOTE_EXTENSIONS: Final = (".md", ".txt", ".markdown")
"""What a note is when the scan settings do not say otherwise: the only files ``get`` serves."""

_PRIVATE_SEGMENTS: Final = frozenset({".assistant", ".git", ".memquill"})

# Files and folders that usually hold credentials: never served, searched or listed, whatever
# their extension and whatever the scan settings say. Names compare case-insensitively.
CREDENTIAL_FOLDERS: Final = frozenset(
    {
        ".aws",  # credentials, config with keys
        ".azure",
        ".docker",  # config.json holds registry auth
        ".env",  # a folder named .env (and the file)
        ".gnupg",
        ".kube",  # config holds cluster tokens and client keys
        ".password-store",
        ".ssh",
    }
)
"""A path with any of these folders (or files) in it is private."""
CREDENTIAL_NESTED_FOLDERS: Final = (".config/gcloud", ".config/gh")
"""Folders two levels deep that hold tokens (Google Cloud SDK, GitHub CLI)."""
CREDENTIAL_NAMES: Final = frozenset(
    {
        ".boto",
        ".dockercfg",
        ".envrc",
        ".git-credentials",
        ".htpasswd",
        ".netrc",
        "_netrc",
        ".npmrc",
        ".pgpass",
        ".pypirc",
        ".s3cfg",
        ".yarnrc.yml",
        "client_secret.json",
        "credentials",
        "credentials.json",
        "kubeconfig",
    }
)
"""File names that usually hold credentials."""
CREDENTIAL_PREFIXES: Final = (
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_rsa",
    "client_secret_",
)
"""File name starts: SSH private keys (``id_ed25519``, ``id_rsa_work``), Google OAuth client
files."""
CREDENTIAL_EXTENSIONS: Final = frozenset(
    {
        "env",  # prod.env, .env.local, secrets.env.txt
        "jks",
        "kdbx",  # KeePass
        "key",
        "keystore",
        "p12",
        "pem",
        "pfx",
        "ppk",  # PuTTY
        "tfstate",  # Terraform state holds every secret it manages (and .tfstate.backup)
        "tfvars",
    }
)
"""Extensions of keys, certificates with keys, key stores, env files, Terraform state and
variables: a name in the path with any of these among its dot-separated parts is private,
wherever the part stands (``key.pem.md``, ``deploy.key``, ``prod.env.txt``)."""
CREDENTIAL_STEMS: Final = frozenset(
    {
        "client_secret",
        "credential",
        "credentials",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_rsa",
        "private_key",
        "secret",
        "secrets",
    }
)
"""Names of files and folders that hold credentials: a name in the path with any of these among
its dot-separated parts is private (``secrets.txt``, ``credentials.backup.md``,
``id_rsa.pub.md``, ``secrets/db.md``)."""
CREDENTIAL_PARTS: Final = CREDENTIAL_EXTENSIONS | CREDENTIAL_STEMS
"""Every dot-separated part of a file name that makes it private."""


# The names file-sync tools give the copy of ``records.md`` they could not reconcile: Syncthing
# (``records.sync-conflict-20260301-120000-ABCDEFG.md``), Dropbox (``records (laptop's
# conflicted copy 2026-03-01).md``), Nextcloud and ownCloud (``records (conflicted copy
# 2026-03-01 120000).md``; older ownCloud ``records_conflict-20260301-120000.md``) and OneDrive
# (``records-LAPTOP.md``). Compared in lower case.
_CONFLICT_COPY: Final = re.compile(
    r"records(?:"
    r"\.sync-conflict-[0-9]{8}-[0-9]{6}-[a-z0-9]+"
    r"| \([^/]*conflicted copy[^/]*\)"
    r"|_conflict-[0-9]{8}-[0-9]{6}"
    r"|-[a-z0-9][a-z0-9_-]{0,62}"
    r")\.md"
)


def is_records_conflict_copy(name: str) -> bool:
    """Whether the file name ``name`` is one a file-sync tool gives a conflict copy of
    ``records.md`` (it lies beside it in ``memory/``; ``docs/sync.md`` lists the tools)."""
    return _CONFLICT_COPY.fullmatch(name.lower()) is not None


def is_managed_record_path(path: str) -> bool:
    """Whether ``path`` names the records file, its lock, temp or backup files, a conflict copy
    a file-sync tool left beside it, or a projection."""
    lowered = path.lower().replace("\\", "/")
    lowered = lowered.removeprefix("./")
    beside = lowered.startswith("memory/") and lowered.count("/") == 1
    if beside and is_records_conflict_copy(lowered[len("memory/") :]):
        return True
    return lowered == "memory/records.md" or lowered.startswith(
        ("memory/records/", "memory/.records-")
    )


def is_private(path: str) -> bool:
    """Whether a workspace-relative path must never be served as query content.

    Private: any ``.assistant``, ``.git`` or ``.memquill`` segment, memquill's managed record
    paths, and the files and folders that usually hold credentials (``CREDENTIAL_*``; a name
    in the path with a credential part anywhere among its dot-separated parts).
    """
    return private_reason(path) is not None


def private_reason(path: str) -> str | None:
    """Why a workspace-relative path is private (the refusal's message), or ``None``."""
    lowered = path.lower().replace("\\", "/")
    segments = lowered.split("/")
    if any(segment in _PRIVATE_SEGMENTS for segment in segments):
        return Messages.PRIVATE
    if is_managed_record_path(lowered) or _nested_records(lowered):
        return Messages.PRIVATE
    name = segments[-1]
    nested = "/" + lowered + "/"
    if (
        any(segment in CREDENTIAL_FOLDERS for segment in segments)
        or any(f"/{folder}/" in nested for folder in CREDENTIAL_NESTED_FOLDERS)
        or name in CREDENTIAL_NAMES
        or name.startswith(CREDENTIAL_PREFIXES)
        or any(not CREDENTIAL_PARTS.isdisjoint(segment.split(".")) for segment in segments)
    ):
        return Messages.CREDENTIAL_FILE
    return None


def _nested_records(lowered: str) -> bool:
    """Whether ``lowered`` is one of the managed record paths of a workspace inside this one
    (its records file, lock, staging, backup or conflict copies): an item store keeps a
    namespace's children in its folder."""
    segments = lowered.split("/")
    return any(
        segment == "memory" and is_managed_record_path("/".join(segments[index:]))
        for index, segment in enumerate(segments)
        if index > 0
    )


SUSPECT_STARTS: Final = (".", "_", "id_", "client_secret")
"""Lowercased names starting so may be private (see :func:`may_be_private`)."""
SUSPECT_NAMES: Final = (
    CREDENTIAL_NAMES
    | frozenset(folder.rsplit("/", 1)[1] for folder in CREDENTIAL_NESTED_FOLDERS)
    | {"records.md"}
)
"""Lowercased names that may be private (see :func:`may_be_private`): credentials, and the
records file of a workspace nested in this one."""


def may_be_private(path: str, name: str) -> bool:
    """A cheap necessary condition of :func:`is_private` for ``path`` (last segment ``name``)
    whose parent folders are not private: a scan asks it of every entry it lists."""
    lowered = name.lower()
    return (
        lowered.startswith(SUSPECT_STARTS)
        or not CREDENTIAL_PARTS.isdisjoint(lowered.split("."))
        or lowered in SUSPECT_NAMES
        or path[:7].lower() == "memory/"
        or "\\" in path
    )


def is_note(path: str, extensions: Collection[str] = NOTE_EXTENSIONS) -> bool:
    """Whether ``path`` has one of the note ``extensions`` (lowercase, with the dot)."""
    return posixpath.splitext(path.replace("\\", "/"))[1].lower() in extensions


RECORDS_MARKERS: Final = (b"<!-- memory-records:v1 -->", b"<!-- memory-records:v2 -->")
"""The lines that open a records file after its title (``docs/record-format.md``; v2: its
corrections may be appended)."""
_RECORDS_OPENING: Final = 512
"""Bytes of a file's start in which the marker is looked for: the title and the marker."""


def is_records_text(data: bytes) -> bool:
    """Whether ``data`` (a file's bytes, or its start) is in memquill's records format: one of
    its first three non-blank lines is exactly one of :data:`RECORDS_MARKERS` (after the title,
    as ``records.md`` and ``memquill export`` write it). Such a file is memquill's own, never a
    note: its old versions and markup would otherwise be served as notes."""
    lines = [line.strip() for line in data[:_RECORDS_OPENING].splitlines() if line.strip()]
    return any(marker in lines[:3] for marker in RECORDS_MARKERS)
