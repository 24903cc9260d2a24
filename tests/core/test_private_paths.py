"""``get`` serves notes only, and never a file that usually holds credentials (issue 11, item 3).

Every credential rule in ``memquill.private_paths`` is tested one by one, through ``get`` and
through search with scan settings that would otherwise read the file, and each is listed in
``docs/security.md`` (the one place they are documented).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.core.query_helpers import assert_no_leak, engine, write

from memquill import RecordStore
from memquill.errors import Messages
from memquill.private_paths import (
    CREDENTIAL_EXTENSIONS,
    CREDENTIAL_FOLDERS,
    CREDENTIAL_NAMES,
    CREDENTIAL_NESTED_FOLDERS,
    CREDENTIAL_PREFIXES,
    CREDENTIAL_STEMS,
    is_private,
    may_be_private,
    private_reason,
)
from memquill.store._results import Candidate

SECRET = "CREDENTIAL-CANARY-5519"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"
CREDENTIAL_DENIED = f"Memory read failed: {Messages.CREDENTIAL_FILE}"
NOT_A_NOTE = f"Memory read failed: {Messages.NOT_A_NOTE}"

# The files issue 11 found served, exactly as it lists them.
SERVED_BEFORE = [
    ".aws/credentials",
    ".netrc",
    ".npmrc",
    ".pgpass",
    ".git-credentials",
    ".ssh/id_ecdsa",
    "id_ecdsa",
    "id_dsa",
    "certs/client.p12",
    "certs/client.pfx",
    "putty/server.ppk",
    ".htpasswd",
    ".kube/config",
    ".docker/config.json",
    "infra/terraform.tfstate",
    ".envrc",
    "prod.env",
    "credentials.json",
    ".env/notes.md",
    ".env/secrets.txt",
]


def _rule_examples() -> list[tuple[str, str]]:
    """One path per rule, named after the rule, each a note type where the rule allows."""
    examples = [
        (f"folder {folder}/", f"{folder}/notes.md") for folder in sorted(CREDENTIAL_FOLDERS)
    ]
    examples += [
        (f"nested {folder}/", f"{folder}/notes.md") for folder in CREDENTIAL_NESTED_FOLDERS
    ]
    examples += [(f"name {name}", f"sub/{name}") for name in sorted(CREDENTIAL_NAMES)]
    examples += [(f"prefix {prefix}", f"{prefix}work.md") for prefix in CREDENTIAL_PREFIXES]
    examples += [
        (f"extension {extension}", f"keys/deploy.{extension}")
        for extension in sorted(CREDENTIAL_EXTENSIONS)
    ]
    examples += [
        (f"extension {extension} inside", f"keys/deploy.{extension}.md")
        for extension in sorted(CREDENTIAL_EXTENSIONS)
    ]
    examples += [(f"stem {stem}", f"{stem}.txt") for stem in sorted(CREDENTIAL_STEMS)]
    examples += [(f"stem {stem} folder", f"{stem}/notes.md") for stem in sorted(CREDENTIAL_STEMS)]
    return examples


RULES = _rule_examples()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    write(root, "note.md", "an ordinary note")
    # Scan settings that would read every extension used here, so only privacy keeps them out.
    extensions = [
        ".md",
        ".txt",
        ".json",
        ".env",
        ".p12",
        ".pfx",
        ".ppk",
        ".tfstate",
        ".key",
        ".pem",
        ".jks",
        ".kdbx",
        ".keystore",
        ".tfvars",
        ".backup",
        ".yml",
        ".markdown",
        "",
    ]
    write(root, ".assistant/config.json", json.dumps({"index": {"includeExtensions": extensions}}))
    return root


@pytest.mark.parametrize("path", SERVED_BEFORE)
def test_credential_files_are_never_served(workspace: Path, path: str) -> None:
    write(workspace, path, f"secret = {SECRET}\n")
    query = engine(workspace)
    response = query.get(path)
    assert response.text == CREDENTIAL_DENIED
    assert response.result.error_code == "access_denied"
    assert_no_leak(query.search(SECRET).text, workspace, SECRET)
    assert_no_leak(query.search("secret").text, workspace, SECRET)


@pytest.mark.parametrize(("rule", "path"), RULES, ids=[rule for rule, _ in RULES])
def test_each_credential_rule(workspace: Path, rule: str, path: str) -> None:
    assert private_reason(path) == Messages.CREDENTIAL_FILE, rule
    assert private_reason(path.upper()) == Messages.CREDENTIAL_FILE, "case is ignored"
    # The scan's cheap test never lets a private entry through.
    parents = path.split("/")
    for depth in range(1, len(parents) + 1):
        prefix = "/".join(parents[:depth])
        if is_private(prefix):
            assert may_be_private(prefix, parents[depth - 1]), prefix
            break
    write(workspace, path, f"token {SECRET}\n")
    query = engine(workspace)
    assert query.get(path).text == CREDENTIAL_DENIED
    assert_no_leak(query.search(SECRET).text, workspace, SECRET)


@pytest.mark.parametrize(
    "path",
    [
        "notes.md",
        "daily/2026-09-22.md",
        "keys.md",
        "passwords-policy.md",
        "ssh-notes.txt",
        "environment.md",
        "aws-notes.md",
        ".config/other/x.md",
        "tokens.markdown",
        "id.md",
    ],
)
def test_ordinary_notes_are_not_private(workspace: Path, path: str) -> None:
    assert private_reason(path) is None
    write(workspace, path, "an ordinary note about keys")
    assert engine(workspace).get(path).ok


def test_internal_paths_keep_their_message() -> None:
    for path in (".assistant/x.md", ".git/HEAD", ".memquill/x.md", "memory/records.md"):
        assert private_reason(path) == Messages.PRIVATE


def test_a_nested_workspaces_records_are_private_to_the_one_around_it(tmp_path: Path) -> None:
    # An item store keeps ("memories", "ana") in memories/ana/, inside the workspace of
    # ("memories",): a session on the outer folder must not read the inner one's records.
    outer = tmp_path / "memories"
    inner = outer / "ana"
    inner.mkdir(parents=True)
    RecordStore(inner).save([Candidate(f"ana's fact {SECRET}", {"kind": "manual"}, "k1")])
    for path in ("ana/memory/records.md", "ana/memory/.records-lock", "a/b/memory/records.md"):
        assert private_reason(path) == Messages.PRIVATE, path
        assert may_be_private(path, path.rsplit("/", 1)[1]), path
    assert private_reason("ana/records.md") is None
    query = engine(outer)
    assert query.get("ana/memory/records.md").result.error_code == "access_denied"
    assert_no_leak(query.search(SECRET).text, outer, SECRET)
    assert_no_leak(query.search("fact").text, outer, SECRET)


@pytest.mark.parametrize("path", ["config.json", "script.py", "data.csv", "Makefile", "a.md.bak"])
def test_get_reads_only_note_types(tmp_path: Path, path: str) -> None:
    write(tmp_path, path, f"not a note {SECRET}")
    response = engine(tmp_path).get(path)
    assert response.text == NOT_A_NOTE
    assert response.result.error_code == "access_denied"


def test_a_note_type_the_scan_settings_add_is_served(tmp_path: Path) -> None:
    write(tmp_path, "config.json", '{"theme": "dark"}')
    write(
        tmp_path, ".assistant/config.json", json.dumps({"index": {"includeExtensions": [".json"]}})
    )
    query = engine(tmp_path)
    assert query.get("config.json").ok
    # The settings replace the default list: .md is then not a note any more.
    write(tmp_path, "note.md", "hello")
    assert query.get("note.md").text == NOT_A_NOTE


def test_a_note_named_symlink_to_another_type_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "data.json", f'{{"key": "{SECRET}"}}')
    (tmp_path / "data.md").symlink_to(tmp_path / "data.json")
    assert engine(tmp_path).get("data.md").text == NOT_A_NOTE
    write(tmp_path, ".aws/credentials", SECRET)
    (tmp_path / "aws.md").symlink_to(tmp_path / ".aws" / "credentials")
    assert engine(tmp_path).get("aws.md").text == CREDENTIAL_DENIED


def test_every_rule_is_documented_in_one_place() -> None:
    text = DOCS.read_text("utf-8")
    rules = [
        *CREDENTIAL_FOLDERS,
        *CREDENTIAL_NESTED_FOLDERS,
        *CREDENTIAL_NAMES,
        *CREDENTIAL_PREFIXES,
        *CREDENTIAL_EXTENSIONS,
        *CREDENTIAL_STEMS,
    ]
    missing = [rule for rule in rules if f"`{rule}" not in text]
    assert not missing, f"docs/security.md does not list {missing}"


# Issue 21, Why 10: the rules matched `.pem`/`.env` only at the end of a name.
PRIVATE_BY_PART = [
    "secrets.txt",
    "key.pem.md",
    "secrets.env.txt",
    "prod.env.md",
    "deploy.key.txt",
    "notes/server.pem.txt",
    "credentials.backup.md",
    "id_rsa.pub.md",
    "secrets/db.md",
    "SECRETS.TXT",
    "backup.tfstate.md",
]
ORDINARY_BY_PART = [
    "keyboard.md",
    "monkey.md",
    "keynote.md",
    "api-design.md",
    "keys.md",
    "turnkey.md",
    "environment.md",
    "envoy.txt",
    "pemberton.md",
    "secret-santa.md",
    "passwords-policy.md",
    "key-ideas/summary.md",
]


@pytest.mark.parametrize("path", PRIVATE_BY_PART)
@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
def test_a_credential_part_anywhere_in_a_name_makes_it_private(
    workspace: Path, path: str, indexed: bool
) -> None:
    assert private_reason(path) == Messages.CREDENTIAL_FILE
    write(workspace, path, f"token {SECRET}\n")
    query = engine(workspace, indexed=indexed)
    response = query.get(path)
    assert (response.text, response.result.error_code) == (CREDENTIAL_DENIED, "access_denied")
    assert_no_leak(query.search(SECRET).text, workspace, SECRET)
    assert_no_leak(query.search("token").text, workspace, SECRET)


@pytest.mark.parametrize("path", ORDINARY_BY_PART)
@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
def test_a_name_that_only_contains_a_stem_stays_a_note(
    workspace: Path, path: str, indexed: bool
) -> None:
    assert private_reason(path) is None
    write(workspace, path, "kumquat marmalade recipe\n")
    query = engine(workspace, indexed=indexed)
    assert query.get(path).ok
    assert f"[{path}:1]" in query.search("kumquat").text


def test_every_credential_part_is_tested_as_a_middle_part() -> None:
    covered = {part for path in PRIVATE_BY_PART for part in path.lower().split("/")[-1].split(".")}
    assert {"pem", "env", "key", "secrets", "credentials", "id_rsa", "tfstate"} <= covered
