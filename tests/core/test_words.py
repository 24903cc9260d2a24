"""Words a person reads (issue 23, item 6): counts agree with their nouns, ``doctor --json``
numbers records as its text does, ``enhance status`` describes each scene for what it is,
``recent`` has one heading over the remembered facts, a memory context keeps recent memory
apart from the hits, and a ``secret`` refusal names the kind of credential, never the text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.core.cli_helpers import cli_env, run_cli
from tests.core.store_helpers import manual, raw, records_path

from memquill import MemorySession, MemoryToolset, RecordStore
from memquill.store import BUILTIN_DETECTORS, SecretScanner
from memquill.store._secrets import KIND_WORDS, describe_kinds
from memquill.tools import memory_context
from memquill.tools._retrieval import HITS_HEADING


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _out(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def test_one_of_a_thing_is_singular(env: dict[str, str], workspace: Path) -> None:
    ws = ("--workspace", str(workspace))
    (workspace / "only.md").write_text("a single note\n")
    RecordStore(workspace).save([manual("a single fact")])
    size = RecordStore(workspace).snapshot().size_bytes
    listing = _out(run_cli(env, *ws, "list")).splitlines()[0]
    assert listing.endswith(f"(1 active, 1 version, {size:,} bytes)"), listing
    _out(run_cli(env, *ws, "search", "single"))  # builds the index: one note in it
    doctor = _out(run_cli(env, *ws, "doctor"))
    assert "search index: ok, 1 note (" in doctor, doctor
    assert " 1 notes" not in doctor and " 1 versions" not in listing
    RecordStore(workspace).save([manual("a second fact")])
    assert "(2 active, 2 versions, " in _out(run_cli(env, *ws, "list"))


def test_doctor_json_numbers_records_as_its_text_does(env: dict[str, str], workspace: Path) -> None:
    RecordStore(workspace).save([manual("first fact"), manual("second fact")])
    path = records_path(workspace)
    path.write_bytes(raw(workspace).replace(b"second fact", b"second fact!"))
    ws = ("--workspace", str(workspace))
    text = run_cli(env, *ws, "doctor").stdout.decode()
    assert "store: error[corrupt] in record 2 (id " in text
    report = json.loads(run_cli(env, *ws, "doctor", "--json").stdout)
    assert (report["error"]["record"], report["diagnosis"]["record"]) == (2, 2)
    assert (report["error"]["record_index"], report["diagnosis"]["record_index"]) == (1, 1)


def test_enhance_status_describes_extraction_as_extraction(env: dict[str, str]) -> None:
    out = _out(run_cli(env, "enhance", "status"))
    rerank = next(line for line in out.splitlines() if "memory_rerank:" in line)
    extract = next(line for line in out.splitlines() if "memory_extract:" in line)
    assert rerank.endswith("no model configured (plain keyword order)")
    assert "keyword order" not in extract
    assert extract.endswith("no model configured (no automatic extraction; facts are saved only "
                            "when asked)")  # fmt: skip


def test_recent_has_one_heading_over_every_remembered_fact(workspace: Path) -> None:
    tools = MemoryToolset(MemorySession(workspace, "chat-1"))
    for fact in ("First fact.", "Second fact.", "Third fact."):
        assert not tools.call("memory_remember", {"content": fact}).is_error
    text = tools.call("memory_recent", {}).text
    assert text.count("## Active Memory") == 1
    assert text.startswith("## Active Memory\nSource: memory/records/")
    assert text.count("Source: memory/records/") == 3
    blocks = text.split("\n\n")
    assert [block.splitlines()[-1] for block in blocks] == [
        "Third fact.",
        "Second fact.",
        "First fact.",
    ]


def test_a_memory_context_keeps_recent_memory_apart_from_the_hits(workspace: Path) -> None:
    tools = MemoryToolset(MemorySession(workspace, "chat-1"))
    tools.call("memory_remember", {"content": "The user drinks oolong tea."})
    recent, hits = memory_context(tools, "what tea does the user drink?")
    assert recent.startswith("## Active Memory\n")
    assert hits.startswith(f"{HITS_HEADING}\n1. [memory/records/")
    assert (
        hits.removeprefix(HITS_HEADING + "\n")
        == tools.call("memory_search", {"query": "what tea does the user drink?", "limit": 5}).text
    )


def test_every_built_in_detector_has_words() -> None:
    assert {detector.name for detector in BUILTIN_DETECTORS} == set(KIND_WORDS)
    assert describe_kinds(["jwt", "bearer_token", "jwt"]) == "a JSON Web Token and a bearer token"
    assert describe_kinds(["a", "jwt", "b"]) == (
        "what the a detector finds, a JSON Web Token and what the b detector finds"
    )


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("The deploy key is AKIAIOSFODNN7REALKEY.", "an AWS access key"),
        ("It was ghp_" + "a1B2" * 9, "a GitHub token"),
        ("db password = Blue-Heron-42!", "a password, token or key assigned a value"),
    ],
)
def test_a_secret_refusal_names_the_kind_never_the_text(
    env: dict[str, str], workspace: Path, content: str, words: str
) -> None:
    assert SecretScanner().findings(content)
    done = run_cli(env, "--workspace", str(workspace), "remember", content)
    assert done.returncode == 12
    message = (
        f"error[secret]: Remove credential material before saving memory: it looks like {words}.\n"
    )
    assert done.stderr.decode() == message
    secret = content.split()[-1].rstrip(".!")
    assert secret.encode() not in done.stderr
    tools = MemoryToolset(MemorySession(workspace, "chat-1"))
    refused = json.loads(tools.call("memory_remember", {"content": content}).text)
    assert refused["message"] == message.removeprefix("error[secret]: ").rstrip("\n")
