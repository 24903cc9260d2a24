"""No control characters in facts, and none reach the terminal raw (issue 21, Why 9).

Every write surface refuses C0 controls but tab and newline, DEL and C1 as ``invalid``, naming
the character as ``U+XXXX``: the store, the tools, the CLI, the management page, the write path
extraction uses, and ``import``. A record saved before the rule stays readable (not corrupt)
and ``doctor`` names it. Text the ``memquill`` command prints (facts, notes, messages) shows
those characters as ``\\xNN``; ``export`` writes the exact bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.core.cli_helpers import cli_env, run_cli, tree
from tests.core.store_helpers import conversation, manual, raw, records_path
from tests.manage.manage_helpers import client, post, revision

from memquill import MemorySession, MemoryToolset, RecordStore, open_session
from memquill.errors import InvalidInputError, Messages
from memquill.foundation.controls import FORBIDDEN, escape_controls, first_control
from memquill.tools._writes import save_candidates

ESC = "\x1b"
ANSI = f"The user likes {ESC}[31mred{ESC}[0m and {ESC}]0;owned{chr(7)} titles."
REFUSED = ["\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\r", "\x1b", "\x1f", "\x7f", "\x80",
           "\x85", "\x9b", "\x9f"]  # fmt: skip
KEPT = ["\t", "\n", "\xa0", "é", "😀", "\u200b"]


def _message(character: str) -> str:
    if character == "\x00":
        return Messages.CONTENT  # NUL keeps the spec's message
    return Messages.CONTROL_CHARACTER.format(f"U+{ord(character):04X}")


def test_the_rule_covers_c0_but_tab_and_newline_del_and_c1() -> None:
    refused = {chr(code) for code in range(0x110000) if FORBIDDEN.fullmatch(chr(code))}
    expected = {chr(c) for c in range(0x20) if chr(c) not in "\t\n"} | {
        chr(c) for c in range(0x7F, 0xA0)
    }
    assert refused == expected
    assert first_control("ok\tstill\nok") is None
    assert first_control(f"a{ESC}b\x9b") == "U+001B"


@pytest.mark.parametrize("character", REFUSED, ids=lambda c: f"U+{ord(c):04X}")
def test_the_store_refuses_each_and_names_it(tmp_path: Path, character: str) -> None:
    store = RecordStore(tmp_path)
    with pytest.raises(InvalidInputError) as refused:
        store.save([manual(f"before{character}after")])
    assert refused.value.message == _message(character)
    assert not records_path(tmp_path).exists()


@pytest.mark.parametrize("character", KEPT, ids=repr)
def test_tab_newline_and_ordinary_characters_are_kept(tmp_path: Path, character: str) -> None:
    result = RecordStore(tmp_path).save([manual(f"before{character}after")])
    assert result.status == "saved"


def test_the_tools_refuse_remember_and_update(tmp_path: Path) -> None:
    tools = MemoryToolset(MemorySession(tmp_path, "chat-1"))
    refused = tools.call("memory_remember", {"content": ANSI})
    assert refused.is_error
    assert json.loads(refused.text) == {
        "type": "memory_write_error",
        "operation": "remember",
        "code": "invalid",
        "message": "Memory must not contain control characters other than tab and newline "
        "(found U+001B).",
    }
    saved = json.loads(tools.call("memory_remember", {"content": "The user likes red."}).text)
    before = raw(tmp_path)
    update = tools.call(
        "memory_update",
        {
            "id": saved["recordId"],
            "content": "The user likes red\x7f.",
            "expected_revision": saved["recordRevision"],
        },
    )
    assert update.is_error and json.loads(update.text)["code"] == "invalid"
    assert "U+007F" in json.loads(update.text)["message"]
    assert raw(tmp_path) == before


def test_the_write_path_of_extraction_refuses_them(tmp_path: Path) -> None:
    session = open_session(tmp_path, "chat-1")
    with pytest.raises(InvalidInputError, match=r"U\+009B"):
        save_candidates(session, [conversation("The user moved to Porto\x9b2J.", "job:0")])
    assert not records_path(tmp_path).exists()


def test_the_management_page_refuses_them(tmp_path: Path) -> None:
    RecordStore(tmp_path).save([manual("A fact.")])
    before = raw(tmp_path)
    response = post(
        client(tmp_path),
        {
            "action": "remember",
            "content": ANSI,
            "expectedRevision": revision(tmp_path),
            "idempotencyKey": "k",
        },
    )
    assert (response.status_code, response.json()["error"]) == (400, "invalid")
    assert "U+001B" in response.json()["message"]
    assert raw(tmp_path) == before


def test_the_cli_refuses_them_in_remember_and_update(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = cli_env(tmp_path)
    done = run_cli(env, "--workspace", str(workspace), "remember", ANSI)
    assert done.returncode == 11
    assert done.stderr == f"error[invalid]: {_message(ESC)}\n".encode()
    assert tree(workspace) == {}
    RecordStore(workspace).save([manual("A fact.")])
    snapshot = RecordStore(workspace).snapshot()
    (record,) = snapshot.records
    done = run_cli(
        env, "--workspace", str(workspace), "update", record.id[:8], "A fact\x85.", "--revision",
        snapshot.revision,
    )  # fmt: skip
    assert done.returncode == 11 and b"U+0085" in done.stderr


def _with_stored_controls(workspace: Path) -> str:
    """A store whose one record holds ANSI escapes, as a file written before the rule: the
    record is saved plain, then its bytes are edited (same length, so it stays valid)."""
    plain = ANSI.replace(ESC, "E").replace(chr(7), "B")
    RecordStore(workspace).save([manual(plain)])
    path = records_path(workspace)
    path.write_bytes(path.read_bytes().replace(plain.encode(), ANSI.encode()))
    (record,) = RecordStore(workspace).snapshot().records
    assert record.content == ANSI
    return record.id


def test_a_record_saved_before_the_rule_reads_and_doctor_names_it(tmp_path: Path) -> None:
    record_id = _with_stored_controls(tmp_path)
    report = RecordStore(tmp_path).doctor()
    assert report.error is None  # not corrupt: it reads
    assert [(f.record_id, f.character) for f in report.control_findings] == [(record_id, "U+001B")]
    assert not report.ok
    # An import that leaves that text as it is goes through; one that adds a control fails.
    store = RecordStore(tmp_path)
    exported = store.export()
    assert store.replace(exported, store.snapshot().revision).status == "duplicate"
    edited = exported.replace(b"titles.", b"title\x7f.")  # that text changed: checked
    with pytest.raises(InvalidInputError, match=r"control characters .*\(found U\+001B\)"):
        store.replace(edited, store.snapshot().revision)
    assert raw(tmp_path) == exported


def test_import_refuses_new_records_with_controls(tmp_path: Path) -> None:
    _with_stored_controls(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    RecordStore(other).save([manual("New\x1b[2J fact.".replace(ESC, "E"))])
    block = RecordStore(other).export().split(b"-->\n\n", 1)[1].replace(b"E[2J", b"\x1b[2J")
    store = RecordStore(tmp_path)
    before = store.export()
    with pytest.raises(InvalidInputError, match=r"U\+001B"):
        store.replace(before + block, store.snapshot().revision)
    assert raw(tmp_path) == before


def _clean(out: bytes) -> None:
    text = out.decode()
    assert not any(FORBIDDEN.search(line) for line in text.split("\n")), text


def test_the_cli_shows_stored_controls_escaped_and_exports_them_exactly(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    record_id = _with_stored_controls(workspace)
    env = cli_env(tmp_path)
    shown = escape_controls(ANSI)
    assert shown == "The user likes \\x1b[31mred\\x1b[0m and \\x1b]0;owned\\x07 titles."
    ws = ("--workspace", str(workspace))
    for command in (["list"], ["search", "likes"], ["get", f"memory/records/{record_id}.md"],
                    ["recent"]):  # fmt: skip
        done = run_cli(env, *ws, *command)
        assert done.returncode == 0, (command, done.stderr)
        _clean(done.stdout)
        assert shown.encode() in done.stdout, command
    doctor = run_cli(env, *ws, "doctor")
    _clean(doctor.stdout)
    assert f"control: record {record_id} holds U+001B".encode() in doctor.stdout
    listed = run_cli(env, *ws, "list", "--json")
    assert json.loads(listed.stdout)["records"][0]["content"] == ANSI  # JSON: the same text
    exported = run_cli(env, *ws, "export")
    assert exported.stdout == raw(workspace)  # a file, not a display: the exact bytes


def test_ansi_escapes_in_a_note_are_shown_escaped(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    note = f"# Colours\n\nThe {ESC}[5mblinking{ESC}[0m kiwi\rOVERWRITTEN\x9b6n.\r\nnext line\n"
    (workspace / "memory.md").write_text(note, "utf-8")
    env = cli_env(tmp_path)
    for command in (["get", "memory.md"], ["search", "kiwi"], ["recent"]):
        done = run_cli(env, "--workspace", str(workspace), *command)
        assert done.returncode == 0, done.stderr
        _clean(done.stdout.replace(b"\r\n", b"\n"))  # a CRLF line end cannot misuse the terminal
        assert b"\\x1b[5mblinking\\x1b[0m kiwi\\x0dOVERWRITTEN\\x9b6n." in done.stdout, command
    # JSON keeps the text exact: C0 as JSON escapes json.dumps writes, DEL and C1 as \\u too.
    done = run_cli(env, "--workspace", str(workspace), "get", "memory.md", "--json")
    assert b"\xc2\x9b" not in done.stdout and b"\\u009b" in done.stdout
    assert json.loads(done.stdout)["content"] == note


def test_error_messages_are_escaped_too(tmp_path: Path) -> None:
    missing = tmp_path / f"no{ESC}[2Jsuch"
    done = run_cli(cli_env(tmp_path), "--workspace", str(missing), "list")
    assert done.returncode == 11
    _clean(done.stderr)
    assert b"no\\x1b[2Jsuch" in done.stderr
