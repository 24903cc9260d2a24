"""The workspace walk: budgets, sorted order, ignore globs, privacy, symlinks, the cache."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.core.query_helpers import engine, make_unreadable, remember, write

from memquill.errors import Messages
from memquill.foundation.safe_read import HARD_LINKS_ENV
from memquill.paths import read_text_nofollow
from memquill.query import _scan as scan_module
from memquill.query._scan import ScanBudget, scan_workspace, walk_workspace
from memquill.query._scanconfig import glob_pattern, load_scan_config
from memquill.query._walk import (
    DocumentCache,
    Identity,
    PreviousWalk,
    WalkedFile,
    file_identity,
)


def scanned(root: Path, cache: DocumentCache | None = None) -> list[str]:
    return [document.path for document in scan_workspace(root, cache).documents]


def skipped(text: str) -> str:
    return f"Partial search: skipped {text}. Use memory_get for a known source path."


def test_default_limits_are_sized_for_100000_note_vaults() -> None:
    budget = ScanBudget.default()
    assert budget.files >= 100_000 and budget.entries >= 1_000_000
    assert budget.bytes >= 100_000 * 8 * 1024


def test_file_limit_counts_what_it_skips_and_records_are_still_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_module, "FILE_LIMIT", 512)
    for index in range(514):
        write(tmp_path, f"notes/n{index:03d}.md", f"filler note {index}")
    remember(tmp_path, "the managed zephyr fact")
    result = scan_workspace(tmp_path)
    assert len(result.documents) == 512
    assert result.warnings == (skipped("2 files past the 512-file limit"),)
    assert [d.path for d in result.documents][-1] == "notes/n511.md"  # sorted order
    for tools in (engine(tmp_path), engine(tmp_path, indexed=True)):
        text = tools.search("zephyr").text
        assert text.startswith(result.warnings[0] + "\n\n1. [memory/records/")


def test_text_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan_module, "TOTAL_BYTES_LIMIT", 8 * 1024 * 1024)
    for index in range(33):
        write(tmp_path, f"big{index:02d}.md", ("lorem ipsum " * 22_500)[:270_000])
    remember(tmp_path, "the managed quokka fact")
    result = scan_workspace(tmp_path)
    assert len(result.documents) == 31
    assert result.warnings == (skipped("2 files past the 8 MiB text limit"),)
    for tools in (engine(tmp_path), engine(tmp_path, indexed=True)):
        assert "memory/records/" in tools.search("quokka").text


def test_entry_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan_module, "ENTRY_LIMIT", 10_000)
    crowded = tmp_path / "attachments"
    crowded.mkdir()
    for index in range(10_001):
        (crowded / f"f{index:05d}.bin").touch()
    write(tmp_path, "zz.md", "after the crowd")
    remember(tmp_path, "the managed axolotl fact")
    result = scan_workspace(tmp_path)
    assert result.warnings == (skipped("every folder past the 10,000-entry limit"),)
    for tools in (engine(tmp_path), engine(tmp_path, indexed=True)):
        text = tools.search("axolotl").text
        assert text.startswith(result.warnings[0] + "\n\n") and "memory/records/" in text


def test_oversized_files_and_deep_folders_are_counted_in_one_line(tmp_path: Path) -> None:
    write(tmp_path, ".assistant/config.json", json.dumps({"index": {"maxDepth": 13}}))
    deep12 = "/".join(f"d{i}" for i in range(1, 13))
    write(tmp_path, f"{deep12}/twelve.md", "reachable")
    write(tmp_path, f"{deep12}/d13/thirteen.md", "unreachable")
    write(tmp_path, "huge.md", "x" * (512 * 1024 + 1))
    write(tmp_path, "also-huge.md", "y" * (512 * 1024 + 1))
    remember(tmp_path, "the managed okapi fact")
    result = scan_workspace(tmp_path)
    assert [d.path.rsplit("/", 1)[-1] for d in result.documents] == ["twelve.md"]
    expected = "2 files larger than 512 KiB, 1 folder deeper than 12 levels"
    assert result.warnings == (skipped(expected),)
    for tools in (engine(tmp_path), engine(tmp_path, indexed=True)):
        text = tools.search("okapi").text
        assert text.startswith(skipped(expected)) and "memory/records/" in text


def test_default_depth_is_8(tmp_path: Path) -> None:
    write(tmp_path, "/".join(f"d{i}" for i in range(1, 9)) + "/in.md", "x")
    write(tmp_path, "/".join(f"d{i}" for i in range(1, 10)) + "/out.md", "x")
    assert [p.rsplit("/", 1)[-1] for p in scanned(tmp_path)] == ["in.md"]


def test_private_ignored_symlinked_oversized_and_foreign_files_are_not_scanned(
    tmp_path: Path,
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    write(outside, "secret.md", "outside")
    for relative in (
        ".assistant/a.md",
        ".git/b.md",
        "x/.memquill/c.md",
        ".env",
        "notes/.env.local",
        "key.pem",
        "id_rsa.md",
        "memory/records.md",
        "memory/records/fake.md",
        "memory/.records-1.tmp",
        ".obsidian/d.md",
        "node_modules/e.md",
        "pic.png",
        "data.json",
    ):
        write(tmp_path, relative, "hidden")
    write(tmp_path, "big.md", "x" * (512 * 1024 + 1))
    write(tmp_path, "ok.md", "visible")
    write(tmp_path, "memory/notes.txt", "visible")
    (tmp_path / "link.md").symlink_to(outside / "secret.md")
    (tmp_path / "linkdir").symlink_to(outside, target_is_directory=True)
    assert scanned(tmp_path) == ["memory/notes.txt", "ok.md"]


def test_config_replaces_defaults_and_bad_values_fall_back(tmp_path: Path) -> None:
    config = {
        "ignore": ["drafts/**", "**/*.tmp.md"],
        "index": {"includeExtensions": [".MD", ".org"], "maxFileSizeKB": 1, "maxDepth": "x"},
    }
    write(tmp_path, ".assistant/config.json", json.dumps(config))
    write(tmp_path, "drafts/a.md", "x")
    write(tmp_path, "b.tmp.md", "x")
    write(tmp_path, "c.org", "x")
    write(tmp_path, "d.txt", "x")
    write(tmp_path, "e.md", "x" * 1025)
    write(tmp_path, ".obsidian/f.md", "no longer ignored")
    assert scanned(tmp_path) == [".obsidian/f.md", "c.org"]
    loaded = load_scan_config(tmp_path)
    assert loaded.max_depth == 8 and loaded.max_file_bytes == 1024
    write(tmp_path, ".assistant/config.json", "{not json")
    assert load_scan_config(tmp_path).ignore[0] == ".obsidian/**"


def test_glob_semantics() -> None:
    assert glob_pattern("**/*.png").fullmatch("a/b/c.png")
    assert glob_pattern("**/*.png").fullmatch("c.png")
    assert not glob_pattern("*.png").fullmatch("a/c.png")
    assert glob_pattern("a?c/**").fullmatch("abc/x/y")
    assert not glob_pattern("a+c").fullmatch("aac")  # regex characters are literal


def test_an_unreadable_file_is_skipped_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "a.md", "alpha")
    write(tmp_path, "b.md", "alpha bravo")
    make_unreadable(monkeypatch, "a.md")
    text = engine(tmp_path).search("alpha").text
    assert text.startswith("Skipped a.md: Memory source is not readable.\n\n1. [b.md:1]")


def test_cache_reuses_unchanged_files_and_rereads_changed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "a.md", "one")
    write(tmp_path, "b.md", "two")
    reads: list[str] = []
    real = read_text_nofollow

    def counting(path: Path, **kwargs: Any) -> str:
        reads.append(path.name)
        return real(path, **kwargs)

    monkeypatch.setattr(scan_module, "read_text_nofollow", counting)
    cache = DocumentCache(racy_seconds=0)
    first = scan_workspace(tmp_path, cache)
    second = scan_workspace(tmp_path, cache)
    assert reads == ["a.md", "b.md"]
    assert all(a is b for a, b in zip(first.documents, second.documents, strict=True))
    write(tmp_path, "b.md", "changed, and longer")
    (tmp_path / "a.md").unlink()
    third = scan_workspace(tmp_path, cache)
    assert reads == ["a.md", "b.md", "b.md"] and len(cache) == 1
    assert third.documents[0].content == "changed, and longer"


def test_cache_skips_files_changed_just_now(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "fresh")
    cache = DocumentCache()  # 2 s window: a file written this instant is not cached
    scan_workspace(tmp_path, cache)
    assert len(cache) == 0
    old = 1_600_000_000
    os.utime(tmp_path / "a.md", (old, old))
    scan_workspace(tmp_path, cache)
    assert len(cache) == 0  # ctime is still fresh


def test_a_walk_gives_back_each_note_with_its_identity_and_each_warning_in_walk_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk keeps its notes packed (paths in one tuple, identities as numbers in one array);
    reading its steps gives every note with the identity ``lstat`` gives, warnings in their
    places, as often as they are read, listed afresh, from a cached listing, or taken from a
    previous walk."""
    monkeypatch.delenv(HARD_LINKS_ENV, raising=False)
    root = tmp_path.resolve()
    for path in ("a.md", "b/c.md", "b/d.md", "e.md", "h/i.md", "z.md"):
        write(root, path, f"note {path}")
    os.link(root / "e.md", root / "f.md")  # e.md and f.md: skipped, with a warning each
    config = load_scan_config(root)
    skip = f"Skipped {{}}: {Messages.HARD_LINK}"

    def expected(known: dict[str, Identity] | None = None) -> list[WalkedFile | str]:
        def note(path: str) -> WalkedFile:
            found = (known or {}).get(path) or file_identity(os.lstat(root / path))
            return WalkedFile(path, found)

        return [
            note("a.md"),
            note("b/c.md"),
            note("b/d.md"),
            skip.format("e.md"),
            skip.format("f.md"),
            note("h/i.md"),
            note("z.md"),
        ]

    cache = DocumentCache(racy_seconds=0)
    # Listed afresh, then from the cache's listings.
    walks = [walk_workspace(root, config, cache, ScanBudget.default()) for _ in range(2)]
    for walk in walks:
        assert list(walk.steps) == expected()
        assert list(walk.steps) == expected()  # read again
        assert len(walk.numbers) == 5 * 5
    # Identities a change watcher vouches for come from the previous walk, not from ``lstat``.
    known = {"a.md": (1, 2, 3, 4, 5), "b/d.md": (6, 7, 8, 9, 10), "h/i.md": (11, 12, 13, 14, 15)}

    class Known:
        def identity(self, path: str, /) -> Identity | None:
            return known.get(path)

    previous = PreviousWalk(config, dict(walks[0].listings), Known(), set(), {"h/i.md"})
    walk = walk_workspace(root, config, cache, ScanBudget.default(), previous=previous)
    assert list(walk.steps) == expected({p: i for p, i in known.items() if p != "h/i.md"})
