"""The folders the docs name for Linux, macOS and Windows are the ones the code computes.

Each platform is simulated (``sys.platform``, ``HOME``, and the variables the code reads, set
to their own names, so the computed paths come out spelled as the docs spell them; the home
folder is written ``~``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from memquill.index._location import index_dir
from memquill.paths import choose_workspace, user_data_dir

DOCS = Path(__file__).resolve().parents[2] / "docs"
PLATFORMS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}


def computed(
    monkeypatch: pytest.MonkeyPatch, platform: str, *, xdg: bool
) -> tuple[str, str, str, str]:
    """(user data folder, memquill's data folder, the index folder, the default workspace)."""
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setenv("HOME", "/HOME")
    for name in ("MEMQUILL_INDEX_DIR", "MEMQUILL_WORKSPACE", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCALAPPDATA", "%LOCALAPPDATA%")
    if xdg:
        monkeypatch.setenv("XDG_DATA_HOME", "$XDG_DATA_HOME")
        monkeypatch.setenv("XDG_CACHE_HOME", "$XDG_CACHE_HOME")
    found = (
        user_data_dir(),
        user_data_dir() / "memquill",
        index_dir(),
        choose_workspace(None).path,
    )
    spelled = ["~" + text[5:] if text.startswith("/HOME") else text for text in map(str, found)]
    if platform == "win32":
        spelled = [text.replace("/", "\\") for text in spelled]
    return spelled[0], spelled[1], spelled[2], spelled[3]


def _text(name: str) -> str:
    return " ".join((DOCS / name).read_text("utf-8").split())


def _table_row(text: str, starts: str) -> list[str]:
    row = next(line for line in text.splitlines() if line.startswith(f"| {starts}"))
    return [cell.strip() for cell in row.strip("|").split(" | ")]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_security_page_table_is_what_the_code_computes(
    monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    table = (DOCS / "security.md").read_text("utf-8").split("### Where memquill keeps its files")[1]
    column = [*PLATFORMS].index(platform) + 1
    data_cell = _table_row(table, "user data folder")[column]
    cache_cell = _table_row(table, "user cache folder")[column]
    _, data, cache, workspace = computed(monkeypatch, platform, xdg=False)
    assert re.findall(r"`([^`]+)`", data_cell)[-1] == data
    assert re.findall(r"`([^`]+)`", cache_cell)[-1] == cache
    assert workspace.removeprefix(data).lstrip("/\\") == "workspace"
    if platform == "linux":
        _, data, cache, _ = computed(monkeypatch, platform, xdg=True)
        assert f"`{data}`" in data_cell and f"`{cache}`" in cache_cell


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_page_that_names_a_folder_names_the_code_s(
    monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    base, data, cache, _ = computed(monkeypatch, platform, xdg=False)
    slash = "\\" if platform == "win32" else "/"
    label = PLATFORMS[platform]
    assert f"`{cache}{slash}` on {label}" in _text("search-index.md")
    assert f"`{data}{slash}model-assistance{slash}` on {label}" in _text("model-assistance.md")
    assert f"`{base}` on {label}" in _text("security.md")
    if platform == "linux":
        xdg_base, _, xdg_cache, _ = computed(monkeypatch, platform, xdg=True)
        assert f"`{xdg_cache}/` or `{cache}/` on Linux" in _text("search-index.md")
        assert f"`{xdg_base}` or `{base}` on Linux" in _text("security.md")
