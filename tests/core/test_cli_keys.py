"""Named facts from a shell: ``remember --key``, ``list`` with keys, ``get --key``, and
``update``/``forget`` taking a key or an id in one argument."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_cli_records import as_json, env, fails, memquill, workspace

from memquill import RecordStore
from memquill.errors import Messages

__all__ = ["env", "workspace"]  # the fixtures, shared with test_cli_records


def test_a_fact_named_by_its_key_from_remember_to_forget(
    workspace: Path, env: dict[str, str]
) -> None:
    saved = memquill(env, "remember", "--key", "deploy/day", "Deploys happen on Tuesdays").stdout
    first_id = saved.split()[1]
    assert saved.startswith(f"saved {first_id} key deploy/day (record revision ")
    memquill(env, "remember", "An unnamed fact")

    listing = memquill(env, "list").stdout.splitlines()
    assert listing[1].endswith("  deploy/day  Deploys happen on Tuesdays")
    assert listing[2].endswith("  -           An unnamed fact")
    (named, unnamed) = as_json(env, "list")["records"]
    assert (named["key"], unnamed["key"]) == ("deploy/day", None)

    got = memquill(env, "get", "--key", "deploy/day").stdout
    assert got.startswith(f"Source: memory/records/{first_id}.md:1 (memory-record; key:deploy/day;")
    assert got.endswith("\nDeploys happen on Tuesdays\n")

    # By key, no revision is needed: the command reads the current one, so twice in a row works
    # although every correction changes the id.
    once = as_json(env, "update", "deploy/day", "Deploys happen on Wednesdays")
    twice = as_json(env, "update", "deploy/day", "Deploys happen on Thursdays")
    assert once["record_id"] != first_id and twice["record_id"] != once["record_id"]
    assert once["key"] == twice["key"] == "deploy/day"
    assert "Thursdays" in memquill(env, "get", "--key", "deploy/day").stdout
    # An explicit revision still guards the write: the one read before the second update is stale.
    fails(
        env,
        "conflict",
        Messages.STALE,
        "update",
        "deploy/day",
        "x",
        "--revision",
        once["record_revision"],
    )

    forgotten = memquill(env, "forget", "deploy/day").stdout
    assert forgotten.startswith(f"forgotten {twice['record_id']} key deploy/day")
    fails(env, "not_found", Messages.KEY_NOT_FOUND.format(key="deploy/day"), "forget", "deploy/day")
    fails(
        env,
        "not_found",
        Messages.KEY_NOT_FOUND.format(key="deploy/day"),
        "get",
        "--key",
        "deploy/day",
    )
    assert b"deploy/day" not in (workspace / "memory" / "records.md").read_bytes()
    # The key is free again.
    assert memquill(
        env, "remember", "--key", "deploy/day", "Deploys are on Mondays"
    ).stdout.startswith("saved ")


def test_ids_still_need_their_revision_and_arguments_are_told_apart(
    workspace: Path, env: dict[str, str]
) -> None:
    saved = as_json(env, "remember", "The port is 5434.")
    record_id = saved["record_id"]
    revision = RecordStore(workspace).snapshot().revision
    needed = (
        "--revision is required when the fact is named by its id (the revision you read it at, "
        "from list, search or get); a fact named by its key may leave it out."
    )
    fails(env, "invalid", needed, "update", record_id[:8], "The port is 15434.")
    fails(env, "invalid", needed, "forget", record_id)
    fails(env, "invalid", Messages.KEY_FORMAT, "update", "notes/../x", "y")
    fails(env, "invalid", Messages.KEY_FORMAT, "remember", "--key", "UPPER ok?", "y")
    get_what = "Give a workspace-relative path, or --key with a fact's key (not both)."
    fails(env, "invalid", get_what, "get")
    fails(env, "invalid", get_what, "get", "memory.md", "--key", "a/b")
    updated = as_json(env, "update", record_id[:8], "The port is 15434.", "--revision", revision)
    assert updated["status"] == "saved" and updated["key"] is None


def test_remember_with_a_key_in_use_names_the_fact(workspace: Path, env: dict[str, str]) -> None:
    saved = as_json(env, "remember", "--key", "prefs/tea", "Green tea")
    assert as_json(env, "remember", "--key", "prefs/tea", "Green tea")["status"] == "duplicate"
    message = Messages.KEY_IN_USE.format(
        key="prefs/tea", id=saved["record_id"], revision=saved["record_revision"][:16]
    )
    fails(env, "conflict", message, "remember", "--key", "prefs/tea", "Black tea")
    # The same text without the key is another fact.
    assert as_json(env, "remember", "Green tea")["record_id"] != saved["record_id"]
