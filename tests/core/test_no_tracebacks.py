"""Property: whatever comes in, memquill answers with success or a coded error, never another
exception. Random bytes and random structures go to the records decoder (and ``doctor``'s
diagnosis and repair planner), random arguments to every tool, random words to the CLI."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from tests.core.store_helpers import manual

from memquill import MemorySession, MemoryToolset, RecordStore
from memquill.cli import main
from memquill.errors import ERRORS, MemquillError
from memquill.store import SecretScanner
from memquill.store._codec import HEADER
from memquill.store._diagnose import diagnose
from memquill.store._hand_edits import plan_repair
from memquill.store._memo import decode_snapshot
from memquill.tools import CATALOGUE

ODD = st.sampled_from(["\udce9", "\ud800", "\u200b", "\x00", "\r\n", "-->", "\n\n", "😀", "é"])
TEXT = st.lists(st.one_of(st.text(max_size=12), ODD), max_size=4).map("".join)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)
CODED = {info.exit_status for info in ERRORS.values()} | {0, 1, 2}
FIELDS = sorted({name for spec in CATALOGUE for name in spec.args.model_fields})
PROFILE = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def block(meta: Any, content: str, length: Any) -> str:
    if isinstance(meta, dict):
        meta = {**meta, "contentLength": length}
    try:
        encoded = json.dumps(meta, separators=(",", ":"), ensure_ascii=False)
    except ValueError:  # a NaN, say: write it as Python would
        encoded = repr(meta)
    return f"<!-- memory-record {encoded} -->\n{content}\n\n"


STRUCTURED = st.builds(
    lambda blocks, crlf: (HEADER + "".join(blocks)).replace("\n", "\r\n" if crlf else "\n"),
    st.lists(st.builds(block, JSONISH, TEXT, st.one_of(st.integers(-2, 40), SCALARS)), max_size=3),
    st.booleans(),
).map(lambda text: text.encode("utf-8", "surrogatepass"))


NESTED = st.integers(1, 3000).map(
    lambda depth: f"{HEADER}<!-- memory-record {'[' * depth}{']' * depth} -->\nx\n\n".encode()
)


@PROFILE
@given(st.one_of(st.binary(max_size=300), STRUCTURED, NESTED))
def test_the_decoder_diagnosis_and_repair_plan_never_raise_anything_else(data: bytes) -> None:
    try:
        decode_snapshot(b"/workspace", data)
    except MemquillError as error:
        assert error.code in ERRORS
    diagnose(data)
    plan = plan_repair(data, now=_now(), secrets=SecretScanner())
    assert (plan.refused is None) == (plan.data is not None)


@pytest.fixture(scope="module")
def toolset(tmp_path_factory: pytest.TempPathFactory) -> MemoryToolset:
    root = tmp_path_factory.mktemp("tools")
    (root / "memory.md").write_text("# Notes\n\nTea at four.\n", "utf-8")
    RecordStore(root).save([manual("The user prefers tea.")])
    return MemoryToolset(MemorySession(root, "property-session"))


@PROFILE
@given(
    st.sampled_from([spec.name for spec in CATALOGUE]),
    st.one_of(
        st.dictionaries(st.one_of(st.sampled_from(FIELDS), TEXT), JSONISH, max_size=5),
        JSONISH,
    ),
)
def test_every_tool_answers_random_arguments(toolset: MemoryToolset, name: str, args: Any) -> None:
    if not isinstance(args, dict):
        args = {"value": args}
    result = toolset.call(name, args)
    assert isinstance(result.text, str) and result.text
    if result.is_error and name in {"memory_remember", "memory_update", "memory_forget"}:
        assert json.loads(result.text)["code"] in ERRORS


COMMANDS = ["remember", "list", "search", "get", "recent", "update", "forget", "compact"]
COMMANDS += ["doctor", "where", "plugins"]
# Never another workspace: an abbreviation of --workspace could point anywhere.
WORDS = st.one_of(
    TEXT.filter(lambda word: not word.startswith("--w")),
    ODD,
    st.sampled_from(["--json", "--all", "--fix", "--revision", "--key", "--lines", "--limit"]),
    st.sampled_from(["--tag", "--type", "--days", "1:2", "0" * 8, "-1", "--help", "--version"]),
)


@settings(PROFILE, max_examples=300)
@given(st.sampled_from(COMMANDS), st.lists(WORDS, max_size=5))
def test_the_cli_answers_random_words_with_a_status(
    tmp_path_factory: pytest.TempPathFactory, command: str, words: list[str]
) -> None:
    root = tmp_path_factory.mktemp("cli")
    (root / "memory.md").write_text("# Notes\n\nTea at four.\n", "utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(["--workspace", str(root), command, *words])
        except SystemExit as stop:  # argparse: --help, --version, usage errors
            status = stop.code if isinstance(stop.code, int) else 2
    assert status in CODED, (status, err.getvalue())
    assert "Traceback" not in err.getvalue()


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime(2026, 11, 30, tzinfo=UTC)
