"""A deleted or edited note's words leave the index at the next search: every byte of it.

The unique word is looked for twice after the search that sees the change: through the
index's own forms (every postings term, every note's terms and figures, decoded) and in the
raw bytes of every file under the index folder (the database, its write-ahead log and shared
memory file), where SQLite keeps deleted content and old pages unless told otherwise. Both
with the change watcher (a long-lived process) and without (a walk per search, as on macOS).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.core.index_helpers import indexed
from tests.core.query_helpers import write

from memquill.index._codec import decode_page, decode_term_list
from memquill.index._location import index_path
from memquill.index._search_index import IndexSearcher
from memquill.index._sync import decode_listing
from memquill.query._tokens import fold, folded_terms

WORD = "zorblaxquinting"
TERMS = tuple(folded_terms(fold(WORD)))  # what the index stores: "zorblaxquint"
NOTES = {
    "keep/alpha.md": "# Alpha\n\nThe lighthouse keeper logs the weather every morning.\n",
    "keep/bravo.md": "# Bravo\n\nThe lighthouse lamp needs oil and the keeper's patience.\n",
}


def index_forms(folder: Path, root: Path) -> set[str]:
    """Every term, path and tag the index holds, decoded through its own codecs (pages are
    compressed: their raw bytes never show a word). Terms are text in the lexicon only;
    postings and term lists name them by id, so each id they use must be in the lexicon."""
    found: set[str] = set()
    with sqlite3.connect(f"file:{index_path(root, folder)}?mode=ro", uri=True) as connection:
        tables = {str(name) for (name,) in connection.execute("SELECT name FROM sqlite_master")}
        assert tables == {
            *("meta", "sqlite_autoindex_meta_1", "pages", "terms", "postings"),
            *("lexicon", "folders"),
        }
        lexicon = dict(connection.execute("SELECT id, term FROM lexicon").fetchall())
        found.update(str(term) for term in lexicon.values())
        used = {int(term) for (term,) in connection.execute("SELECT term FROM postings")}
        for (blob,) in connection.execute("SELECT data FROM terms"):
            used.update(decode_term_list(bytes(blob)).ids)
        assert used == set(lexicon), "postings or term lists name a term the lexicon lacks"
        for (blob,) in connection.execute("SELECT data FROM pages"):
            for row in decode_page(bytes(blob)):
                found.update((row.path, *row.tags.split("\n")))
        found.update(str(value) for (value,) in connection.execute("SELECT value FROM meta"))
        for path, blob in connection.execute("SELECT path, data FROM folders"):
            _, listing = decode_listing(bytes(blob))
            found.update((bytes(path).decode(), *(step for _, step in listing.steps)))
    return found


def kept_listings(folder: Path, root: Path) -> list[str]:
    """Every path in the folder listings the index keeps."""
    with sqlite3.connect(f"file:{index_path(root, folder)}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT data FROM folders").fetchall()
    return [step for (blob,) in rows for _, step in decode_listing(bytes(blob))[1].steps]


def files_holding(folder: Path, needle: bytes) -> list[str]:
    """Every file under ``folder`` whose bytes contain ``needle``."""
    return sorted(
        path.name for path in folder.rglob("*") if path.is_file() and needle in path.read_bytes()
    )


def holds_word(folder: Path, root: Path) -> tuple[bool, list[str]]:
    forms = index_forms(folder, root)
    in_forms = any(term in form for term in TERMS for form in forms)
    return in_forms, files_holding(folder, TERMS[0].encode())


def search(root: Path, searcher: IndexSearcher, query: str) -> list[str]:
    text = indexed(root, searcher).search(query=query, limit=20).text
    return [line.split("[")[1].split(":")[0] for line in text.splitlines() if "] (score:" in line]


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "walk"])
@pytest.mark.parametrize("change", ["deleted", "edited"])
def test_a_removed_notes_words_are_nowhere_under_the_index_folder(
    tmp_path: Path, watch: bool, change: str
) -> None:
    root, folder = (tmp_path / "vault").resolve(), tmp_path / "index"
    for name, text in NOTES.items():
        write(root, name, text)
    name = "keep/charlie.md" if change == "edited" else f"{WORD}-plans.md"
    secret = write(
        root,
        name,
        f"---\ntags: [{WORD}, lighthouse]\n---\n# The {WORD} plan\n\n"
        f"The lighthouse {WORD} happens on Tuesdays.\n",
    )
    searcher = IndexSearcher(folder, notice=None, watch=watch, racy_seconds=0)
    try:
        assert search(root, searcher, WORD) == [name]
        in_forms, in_files = holds_word(folder, root)
        assert in_forms and in_files, "the word is stored as the test looks for it"
        if change == "deleted":
            assert any(WORD in form for form in kept_listings(folder, root)), (
                "the note's name is in the folder listings the index keeps"
            )
        if change == "deleted":
            secret.unlink()
        else:
            secret.write_text("# Charlie\n\nThe lighthouse is painted red and white.\n")
        assert search(root, searcher, WORD) == []
        left = {*NOTES, *(["keep/charlie.md"] if change == "edited" else [])}
        assert set(search(root, searcher, "lighthouse")) == left
        in_forms, in_files = holds_word(folder, root)
        assert not in_forms, "the index still holds the note's terms"
        assert in_files == [], f"the word's bytes are still in {in_files}"
    finally:
        searcher.close()
    assert IndexSearcher(folder, notice=None).index(root).check() == []


def test_a_second_process_drops_the_note_it_had_cached(tmp_path: Path) -> None:
    """A process that read the old postings keeps answering right after another removed
    the note (the rewritten blobs only lose ids; its cache drops them by the gone list)."""
    root, folder = (tmp_path / "vault").resolve(), tmp_path / "index"
    for name, text in NOTES.items():
        write(root, name, text)
    secret = write(root, "charlie.md", f"The lighthouse {WORD} is secret.\n")
    first = IndexSearcher(folder, notice=None, watch=False, racy_seconds=0)
    second = IndexSearcher(folder, notice=None, watch=False, racy_seconds=0)
    try:
        assert search(root, first, "lighthouse") == search(root, second, "lighthouse")
        assert "charlie.md" in search(root, second, "lighthouse")
        secret.unlink()
        assert "charlie.md" not in search(root, first, "lighthouse")
        assert "charlie.md" not in search(root, second, "lighthouse")
        assert search(root, second, WORD) == []
    finally:
        first.close()
        second.close()
    assert files_holding(folder, TERMS[0].encode()) == []
