"""``memory_search`` with a model (spec 7 and 12.5, translated): the enhanced path end to end.

Real workspaces, the core's tools, a scripted model; every failure keeps the keyword results.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.core.query_helpers import NOW, make_unreadable, write

from memquill import MemorySession, MemoryToolset
from memquill.enhance import ModelIdentity, ModelRanker, Prompt, TextModel
from memquill.enhance._runner import AuxiliaryRunner
from memquill.testing._models import FAKE_SECRET, ScriptedTextModel, parse_script
from memquill.tools._toolset import ToolResult

NOTES = {
    "a.md": "# Alpha\n\nThe paella needs saffron and patience.\n",
    "b.md": "# Beta\n\nPaella pans are wide; saffron goes in early.\n",
    "c.md": "# Gamma\n\nA paella story with saffron threads, saffron rice, saffron everything.\n",
}


def _workspace(root: Path) -> Path:
    for name, text in NOTES.items():
        write(root, name, text)
    return root


def _tools(
    root: Path, model: TextModel | None, state: Path, *, timeout: float = 3.0
) -> MemoryToolset:
    ranker = None
    if model is not None:
        runner = AuxiliaryRunner(state_dir=state)
        ranker = ModelRanker(model, runner=runner, timeout=timeout)
    session = MemorySession(root, "s-1", "read", now=lambda: NOW, ranker=ranker)
    return MemoryToolset(session)


def _search(tools: MemoryToolset, **args: object) -> ToolResult:
    return tools.call("memory_search", {"query": "paella saffron", **args})


def _plain(root: Path, tmp_path: Path, **args: object) -> str:
    return _search(_tools(root, None, tmp_path / "plain"), **args).text


def _paths(text: str) -> list[str]:
    return [line.split("[")[1].split(":")[0] for line in text.splitlines() if "] (score:" in line]


def test_a_valid_ranking_reorders_and_renumbers(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    keyword = _paths(_plain(root, tmp_path))
    assert len(keyword) == 3
    model = ScriptedTextModel(parse_script(["[2, 0, 1]"]))
    result = _search(_tools(root, model, tmp_path / "state"))
    assert _paths(result.text) == [keyword[2], keyword[0], keyword[1]]
    assert result.text.startswith(f"1. [{keyword[2]}:")
    assert result.structured is not None and result.structured["reranked"] is True
    assert result.structured["ranking_notice"] is None
    sent = json.loads(model.prompts[0].user)
    assert sent["query"] == "paella saffron" and len(sent["candidates"]) == 3


def test_ranking_can_promote_a_hit_from_beyond_the_limit(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    keyword = _paths(_plain(root, tmp_path))
    model = ScriptedTextModel(parse_script(["[2, 1, 0]"]))
    result = _search(_tools(root, model, tmp_path / "state"), limit=1)
    assert _paths(result.text) == [keyword[2]]
    assert _paths(_plain(root, tmp_path, limit=1)) == [keyword[0]]


@pytest.mark.parametrize(
    ("reply", "line"),
    [
        ("not-json", "Memory ranking failed: invalid_response. Using keyword order."),
        ("[0]", "Memory ranking failed: invalid_response. Using keyword order."),
        ("[1, 1, 0]", "Memory ranking failed: invalid_response. Using keyword order."),
        ("[2, 0, 5]", "Memory ranking failed: invalid_response. Using keyword order."),
        ("", "Memory ranking failed: empty_response. Using keyword order."),
        (
            {"raise": "http_401"},
            "Memory ranking unavailable: credentials_missing. Using keyword order.",
        ),
        ({"raise": "http_500"}, "Memory ranking failed: request_failed. Using keyword order."),
    ],
)
def test_failures_prefix_one_line_and_keep_the_keyword_results(
    tmp_path: Path, reply: str | dict[str, str], line: str
) -> None:
    root = _workspace(tmp_path / "ws")
    model = ScriptedTextModel(parse_script([reply]))
    result = _search(_tools(root, model, tmp_path / "state"))
    assert result.text == line + "\n\n" + _plain(root, tmp_path)
    assert not result.is_error
    assert result.structured is not None and result.structured["ranking_notice"] == line
    assert FAKE_SECRET not in result.text and FAKE_SECRET not in json.dumps(result.structured)


def test_without_a_model_or_with_one_candidate_nothing_changes(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    model = ScriptedTextModel(())  # any call would fail loudly: the script is empty
    tools = _tools(root, model, tmp_path / "state")
    one = tools.call("memory_search", {"query": "patience"})
    assert one.text == _search(_tools(root, None, tmp_path), query="patience").text
    none = tools.call("memory_search", {"query": "nothing-matches-this"})
    assert none.text == "No matching memories found."
    assert model.calls == 0


def test_the_notice_comes_before_scan_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path / "ws")
    write(root, "broken.md", "# Broken\n\npaella\n")
    make_unreadable(monkeypatch, "broken.md")
    plain = _plain(root, tmp_path)
    assert plain.startswith("Skipped broken.md")
    model = ScriptedTextModel(parse_script(["prose"]))
    text = _search(_tools(root, model, tmp_path / "state")).text
    assert text == "Memory ranking failed: invalid_response. Using keyword order.\n\n" + plain


def test_a_hanging_model_answers_in_keyword_order_after_the_timeout(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    model = ScriptedTextModel(parse_script([{"hang": True}]))
    result = _search(_tools(root, model, tmp_path / "state", timeout=0.3))
    assert result.text == (
        "Memory ranking failed: timeout. Using keyword order.\n\n" + _plain(root, tmp_path)
    )


def test_repeated_failures_cool_down_per_scope(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    model = ScriptedTextModel(parse_script([{"raise": "http_429"}, "[2, 1, 0]"]))
    tools = _tools(root, model, tmp_path / "state")
    first = _search(tools).text.splitlines()[0]
    second = _search(tools).text.splitlines()[0]
    assert first == "Memory ranking failed: request_failed. Using keyword order."
    assert second == "Memory ranking cooldown: request_failed. Using keyword order."
    other = MemoryToolset(tools.session.with_session_id("s-2"))
    structured = _search(other).structured
    assert structured is not None and structured["reranked"] is True
    assert model.calls == 2


def test_an_unusable_install_key_is_reported_and_writes_still_work(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    state = tmp_path / "state"
    state.mkdir()
    (state / "install-key.v1").write_bytes(b"k" * 32)
    (state / "install-key.v1").chmod(0o644)
    model = ScriptedTextModel(parse_script(["[0, 1, 2]"]))
    runner = AuxiliaryRunner(state_dir=state)
    session = MemorySession(root, "s-1", now=lambda: NOW, ranker=ModelRanker(model, runner=runner))
    tools = MemoryToolset(session)
    text = tools.call("memory_search", {"query": "paella saffron"}).text
    assert text.startswith(
        "Memory ranking unavailable: identity_unavailable. Using keyword order.\n\n"
    )
    assert model.calls == 0
    saved = tools.call("memory_remember", {"content": "The user likes paella."})
    assert not saved.is_error


def test_an_identity_that_raises_never_breaks_search(tmp_path: Path) -> None:
    class Broken(ScriptedTextModel):
        @property
        def identity(self) -> ModelIdentity:
            raise RuntimeError(f"getter exploded {FAKE_SECRET}")

    root = _workspace(tmp_path / "ws")
    result = _search(_tools(root, Broken(()), tmp_path / "state"))
    assert result.text.startswith("Memory ranking unavailable: identity_unavailable.")
    assert FAKE_SECRET not in result.text


async def test_the_async_path_answers_exactly_as_the_sync_one(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    for script in (["[2, 0, 1]"], ["prose"], [{"raise": "timeout"}]):
        sync = _search(_tools(root, ScriptedTextModel(parse_script(script)), tmp_path / "a"))
        tools = _tools(root, ScriptedTextModel(parse_script(script)), tmp_path / "b")
        result = await tools["memory_search"].ainvoke({"query": "paella saffron"})
        assert (result.text, result.structured) == (sync.text, sync.structured)


async def test_a_loop_bound_model_runs_on_the_callers_loop_any_other_on_a_call_loop(
    tmp_path: Path,
) -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    class Recording(ScriptedTextModel):
        async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
            loops.append(asyncio.get_running_loop())
            return await super().generate(prompt, max_tokens=max_tokens)

    class Bound(Recording):
        loop_bound = True

    root = _workspace(tmp_path / "ws")
    for model, state in ((Bound, "a"), (Recording, "b"), (Recording, "c")):
        tools = _tools(root, model(parse_script(["[0, 1, 2]"])), tmp_path / state)
        await tools["memory_search"].ainvoke({"query": "paella saffron"})
    _search(_tools(root, Recording(parse_script(["[0, 1, 2]"])), tmp_path / "d"))  # sync
    here = asyncio.get_running_loop()
    assert loops[0] is here
    assert loops[1] is not here and loops[1] is loops[2] is loops[3]  # one call loop for all
