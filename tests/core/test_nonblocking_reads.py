"""No read ever blocks on a FIFO, socket or device (issue 11, item 5).

Each scenario runs in a child process: a reader that still opened a FIFO would wait for a writer
forever, and the ceiling turns that hang into a failure instead of a stuck suite.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path

import pytest
from tests.core.query_helpers import remember, write

from memquill.errors import Messages, SourceError
from memquill.paths import open_regular, read_text_nofollow

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")

HANG_CEILING = 30.0
"""Seconds a scenario may take before it counts as hung: a hang guard, not a speed test."""
NOT_REGULAR = Messages.NOT_REGULAR


def guarded(script: str, *args: str) -> str:
    """Run ``script`` in a child and return its stdout; fail (not hang) if it does not finish."""
    try:
        completed = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script), *args],
            capture_output=True,
            text=True,
            timeout=HANG_CEILING,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the read blocked for {HANG_CEILING} s")
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


QUERY = """
import json, sys
from memquill import MemorySession, MemoryToolset
tools = MemoryToolset(MemorySession(sys.argv[1], access="read"))
call = sys.argv[2]
if call == "get":
    result = tools.call("memory_get", {"file_path": sys.argv[3]})
elif call == "search":
    result = tools.call("memory_search", {"query": sys.argv[3]})
else:
    result = tools.call("memory_recent", {"days": 7})
print(json.dumps({"ok": not result.is_error, "text": result.text}))
"""


def query(root: Path, *args: str) -> dict[str, object]:
    return json.loads(guarded(QUERY, str(root), *args))


def test_get_refuses_a_fifo_note_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    answer = query(tmp_path, "get", "pipe.md")
    assert answer == {"ok": False, "text": f"Memory read failed: {NOT_REGULAR}"}


def test_the_cli_get_of_a_fifo_fails_with_source(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    script = """
    import sys
    from memquill.cli import main
    raise SystemExit(main(["--workspace", sys.argv[1], "get", "pipe.md"]))
    """
    try:
        completed = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script), str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=HANG_CEILING,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("memquill get blocked on a FIFO")
    assert completed.returncode == 19  # source
    assert completed.stderr == f"error[source]: {NOT_REGULAR}\n"


@pytest.mark.parametrize("fifo", ["memory.md", "memory/daily/{today}.md", "daily/{today}.md"])
def test_recent_skips_a_fifo_and_shows_the_rest(tmp_path: Path, fifo: str) -> None:
    today = date.today().isoformat()
    fifo = fifo.format(today=today)
    daily = "daily" if fifo.startswith("daily/") else "memory/daily"
    write(tmp_path, f"{daily}/2020-01-01.md", "an older daily note")
    if fifo != "memory.md":
        write(tmp_path, "memory.md", "the long-term memory")
    remember(tmp_path, "a managed fact")
    (tmp_path / fifo).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(tmp_path / fifo)
    answer = query(tmp_path, "recent")
    text = str(answer["text"])
    assert answer["ok"] is True
    assert f"Skipped {fifo}: {NOT_REGULAR}" in text
    assert "an older daily note" in text and "a managed fact" in text
    if fifo != "memory.md":
        assert "the long-term memory" in text


def test_search_with_a_fifo_as_scan_settings_uses_the_defaults(tmp_path: Path) -> None:
    write(tmp_path, "notes.md", "the kettle is in the left cupboard")
    (tmp_path / ".assistant").mkdir()
    os.mkfifo(tmp_path / ".assistant" / "config.json")
    answer = query(tmp_path, "search", "kettle")
    assert answer["ok"] is True and "notes.md" in str(answer["text"])


STORE = """
import json, sys
from memquill import MemquillError, RecordStore
from memquill.store._results import Candidate
store = RecordStore(sys.argv[1], lock_timeout=0.2)
out = {}
try:
    store.save([Candidate("a fact", {"kind": "manual"}, "k")])
    out["save"] = "saved"
except MemquillError as error:
    out["save"] = error.code
try:
    out["lock_held"] = store.doctor().lock_held
except MemquillError as error:
    out["doctor"] = error.code
print(json.dumps(out))
"""


def test_a_fifo_as_the_writer_lock_fails_busy_and_doctor_answers(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    os.mkfifo(tmp_path / "memory" / ".records-lock")
    answer = json.loads(guarded(STORE, str(tmp_path)))
    assert answer == {"save": "busy", "lock_held": True}


def test_a_fifo_as_the_records_file_is_an_unsafe_path(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    os.mkfifo(tmp_path / "memory" / "records.md")
    answer = json.loads(guarded(STORE, str(tmp_path)))
    assert answer == {"save": "unsafe_path", "doctor": "unsafe_path"}
    recent = query(tmp_path, "recent")
    assert recent["ok"] is True
    assert f"Managed memory unavailable: {Messages.MEMORY_PATH}" in str(recent["text"])


def test_a_fifo_as_the_bindings_file_binds_nothing(tmp_path: Path) -> None:
    bindings = tmp_path / "bindings.json"
    os.mkfifo(bindings)
    script = """
    import sys
    from pathlib import Path
    from memquill import MemquillError
    from memquill.tools import BindingStore
    store = BindingStore(Path(sys.argv[1]))
    print(store.resolve("chat-1"))
    try:
        store.bind("chat-1", sys.argv[2])
    except MemquillError as error:
        print(error.code)
    """
    out = guarded(script, str(bindings), str(tmp_path)).split()
    assert out == ["None", "storage"]


def test_the_reader_refuses_non_regular_files(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        for path in (tmp_path / "pipe", tmp_path / "sock", Path(os.devnull), tmp_path):
            with pytest.raises(SourceError) as info:
                read_text_nofollow(path)
            assert info.value.message == NOT_REGULAR, path


def test_the_type_is_checked_on_the_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A FIFO swapped in after the name was checked: the open does not block and the descriptor
    # says what it really is.
    os.mkfifo(tmp_path / "pipe.md")
    regular = os.stat(__file__)
    monkeypatch.setattr(os, "lstat", lambda path: regular)
    with pytest.raises(SourceError) as info:
        open_regular(tmp_path / "pipe.md")
    assert info.value.message == NOT_REGULAR
    # A FIFO writer's open would block too; nothing must be left open either way.
    assert open_regular(write(tmp_path, "note.md", "x")) >= 0


def test_a_fifo_transcript_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "chat.jsonl")
    (tmp_path / "linked.jsonl").symlink_to(tmp_path / "chat.jsonl")
    script = """
    import sys
    from pathlib import Path
    from memquill.errors import InvalidInputError
    from memquill.lifecycle._host import read_transcript
    for name in ("chat.jsonl", "linked.jsonl"):
        try:
            read_transcript(Path(sys.argv[1], name))
        except InvalidInputError as error:
            print(error.message)
    """
    assert (
        guarded(script, str(tmp_path)).splitlines() == ["The transcript is not a regular file."] * 2
    )


def test_a_fifo_swapped_in_as_the_job_ledger_is_unsafe_at_once(tmp_path: Path) -> None:
    (tmp_path / ".assistant").mkdir()
    os.mkfifo(tmp_path / ".assistant" / "memory-jobs.json")
    script = """
    import sys
    from memquill.errors import JobUnsafePathError
    from memquill.lifecycle._ledger import LedgerFile
    # The FIFO appears after the path check (which would refuse it at once): only the type of
    # the open descriptor can tell.
    LedgerFile._check_paths = lambda self: None
    try:
        LedgerFile.of(sys.argv[1]).read()
    except JobUnsafePathError as error:
        print(error.code)
    """
    assert guarded(script, str(tmp_path)).strip() == "job_unsafe_path"
