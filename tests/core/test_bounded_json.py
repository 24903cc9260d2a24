"""Every JSON memquill reads is bounded in depth: deep nesting gets the reader's own code.

``[`` repeated 100,000 times made Python's parser raise ``RecursionError`` from the job ledger
(tracebacks in ``memquill jobs`` and ``extract``), a transcript line, the writer lock's
diagnostics, the session bindings, a conversation's tool receipts and the scan configuration.
Each now answers as it answers any other text that is not its format. Real files, real
processes for the commands.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from tests.core.lifecycle_helpers import ExtractModel, new_setup, write_transcript

from memquill import MemorySession, MemoryToolset, jsondoc
from memquill.errors import ERRORS, BindingError, Messages
from memquill.lifecycle import TranscriptSource
from memquill.lifecycle._host import ToolCall, ToolOutput
from memquill.lifecycle._ledger import LedgerFile
from memquill.lifecycle._turns import has_memory_write
from memquill.store._lock import lock_holder
from memquill.tools._binding import BindingStore

DEEP = "[" * 100_000
DEEP_BYTES = DEEP.encode()
MEMQUILL = Path(sys.executable).parent / "memquill"


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    return 0


# -- the shared reader ---------------------------------------------------------------------


def test_the_limit_is_counted_outside_strings_and_escapes() -> None:
    assert jsondoc.parse_json("[" * 64 + "]" * 64) == _nested(64)
    with pytest.raises(jsondoc.JSONDepthError):
        jsondoc.parse_json("[" * 65 + "]" * 65)
    with pytest.raises(ValueError, match="deeper than 64"):
        jsondoc.parse_json(DEEP)
    brackets = '["' + "[" * 200 + '", "\\"[[[[", "\\\\", {"a": "{{{{\\n"}]'
    assert jsondoc.parse_json(brackets)[1] == '"[[[['
    assert jsondoc.parse_json(json.dumps(["é[" * 100]).encode("utf-16")) == ["é[" * 100]
    with pytest.raises(jsondoc.JSONDepthError):
        jsondoc.parse_json(b"[" * 70 + b"]" * 70)


def _nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(alphabet='[]{}"\\ab\né')),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text('[]{}"\\a', max_size=3), inner)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.integers(0, 8))
def test_the_reader_agrees_with_the_parser_below_the_limit_and_refuses_above(
    value: object, limit: int
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    if _depth(value) > limit:
        with pytest.raises(jsondoc.JSONDepthError):
            jsondoc.parse_json(text, max_depth=limit)
    else:
        assert jsondoc.parse_json(text, max_depth=limit) == value


# -- the job ledger, through the commands and the API -------------------------------------

MODEL = textwrap.dedent(
    """
    from pathlib import Path
    from memquill.enhance import ModelIdentity

    class Counting:
        identity = ModelIdentity("custom", "counting", b"key")

        async def generate(self, prompt, *, max_tokens):
            Path(__file__).with_name("calls.log").open("a").write("call\\n")
            return "[]"
    """
)


def _cli(tmp_path: Path, workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMQUILL_")}
    env["MEMQUILL_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONPATH"] = str(tmp_path / "models")
    argv = [str(MEMQUILL), "--workspace", str(workspace), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.fixture
def deep_ledger(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    ledger = LedgerFile.of(workspace)
    ledger.directory.mkdir()
    ledger.path.write_text(DEEP)
    return workspace


def test_jobs_and_extract_answer_job_corrupt_for_a_deeply_nested_ledger(
    tmp_path: Path, deep_ledger: Path
) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "deep_models.py").write_text(MODEL)
    transcript = write_transcript(tmp_path / "chat.jsonl")
    status = ERRORS["job_corrupt"].exit_status
    state = ("--state-dir", str(tmp_path / "state"))
    for args in (
        ("jobs",),
        ("jobs", "--json"),
        ("jobs", "retry"),
        ("extract", str(transcript), "--model", "deep_models:Counting", *state),
    ):
        done = _cli(tmp_path, deep_ledger, *args)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        assert done.stderr.startswith(f"error[job_corrupt]: {Messages.JOBS_CORRUPT}"), args
        assert done.returncode == status, args
    assert (deep_ledger / ".assistant" / "memory-jobs.json").read_text() == DEEP
    assert not (tmp_path / "models" / "calls.log").exists()


def test_the_page_keeps_working_with_jobs_unavailable(deep_ledger: Path) -> None:
    from tests.manage.manage_helpers import client, post, revision

    from memquill.manage import LedgerJobs

    page = client(deep_ledger, LedgerJobs(deep_ledger))
    assert page.get("/").status_code == 200
    memory = page.get("/api/memory")
    assert memory.status_code == 200
    assert memory.json()["enhancement"] == {"error": "unavailable"}
    retry = post(page, {"action": "retry", "expectedRevision": revision(deep_ledger)})
    assert retry.status_code == 503
    assert retry.json() == {"error": "job_corrupt", "message": Messages.JOBS_CORRUPT}
    assert (deep_ledger / ".assistant" / "memory-jobs.json").read_text() == DEEP


# -- every other reader --------------------------------------------------------------------


def test_a_deep_transcript_line_is_not_a_message(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"id": "u1", "role": "user", "content": ' + DEEP + "}\n")
    with pytest.raises(ValueError, match="Transcript line 1 is not a message"):
        TranscriptSource(path, "s1").read()


def test_a_deep_tool_receipt_is_not_a_memory_write() -> None:
    calls = [ToolCall("c1", "memory_remember")]
    assert not has_memory_write(calls, [ToolOutput("c1", DEEP)])


def test_a_deep_lock_file_has_no_holder(tmp_path: Path) -> None:
    path = tmp_path / ".records-lock"
    path.write_bytes(b"[" * 4000)
    assert lock_holder(path) is None


def test_deep_bindings_are_invalid_and_bind_nothing(tmp_path: Path) -> None:
    store = BindingStore(tmp_path / "data" / "bindings.json", lock_timeout=5.0)
    store.path.parent.mkdir()
    store.path.write_bytes(b'{"version": 1, "bindings": ' + DEEP_BYTES + b"}")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert store.resolve("s1", workspace) is None
    with pytest.raises(BindingError) as refused:
        store.bind("s1", workspace)
    assert refused.value.message == Messages.BINDINGS_INVALID
    assert store.path.read_bytes().endswith(DEEP_BYTES + b"}")


def test_a_deep_scan_config_is_ignored_as_an_invalid_one(tmp_path: Path) -> None:
    (tmp_path / ".assistant").mkdir()
    (tmp_path / ".assistant" / "config.json").write_text('{"index": ' + DEEP + "}")
    (tmp_path / "notes.md").write_text("# Tea\n\nOolong at four.\n")
    result = MemoryToolset(MemorySession(tmp_path)).call("memory_search", {"query": "oolong"})
    assert not result.is_error and "notes.md" in result.text


async def test_a_deep_extraction_answer_is_invalid_and_saves_nothing(tmp_path: Path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(ExtractModel([DEEP]))
    setup.record_all(extraction)
    report = await extraction.aresume()
    assert report.error is None
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("failed", "extraction_or_storage_failed", 1)
    assert setup.records(active=False) == []


async def test_a_deep_rerank_answer_keeps_keyword_order(tmp_path: Path) -> None:
    from tests.core.enhance_helpers import make_runner

    from memquill.enhance._rerank import RerankCandidate, rerank
    from memquill.testing._models import ScriptedTextModel, parse_script

    model = ScriptedTextModel(parse_script([DEEP]))
    candidates = (RerankCandidate("A", "alpha"), RerankCandidate("B", "beta"))
    outcome: Any = await rerank(
        make_runner(tmp_path), model, scope="s", query="q", candidates=candidates
    )
    assert outcome.notice == "Memory ranking failed: invalid_response. Using keyword order."


async def test_a_deep_block_receipt_is_persistence_unavailable_and_calls_no_model(
    tmp_path: Path,
) -> None:
    from tests.core.enhance_helpers import FailingModel, ask, make_runner

    from memquill.testing._models import ScriptedProviderError

    model = FailingModel(ScriptedProviderError("denied", 401))
    await ask(make_runner(tmp_path), model)  # a credential block writes its receipt
    (receipt,) = tmp_path.glob("block-*.json")
    receipt.write_text('{"format": ' + "[" * 500 + "]" * 500 + "}")  # within its 1 KiB limit
    model.error = None
    result = await ask(make_runner(tmp_path), model)
    assert (result.status, result.reason) == ("unavailable", "persistence_unavailable")
    assert model.calls == 1
