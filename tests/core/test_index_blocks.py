"""Postings blocks edited in place hold exactly what the notes hold, through any changes.

A term's postings are split into small blocks (:mod:`memquill.index._writer`) that a change
rewrites, splits or deletes one by one; whatever sequence of notes added, edited and removed,
reading the blocks back must give every (note, body count, field counts) of every term, and a
term no note holds any more must leave no block behind.
"""

from __future__ import annotations

import random
import sqlite3
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from memquill.index._build import BatchBuilder
from memquill.index._codec import (
    _HEAD,  # pyright: ignore[reportPrivateUsage]
    BLOCK,
    CorruptBlob,
    Postings,
    TermList,
    decode_block,
    decode_chunk_matrix,
    decode_term_list,
    encode_block,
    encode_term_list,
    join_blocks,
    pack,
    pack_term_counts,
    seal,
    seal_term_list,
    unseal,
)
from memquill.index._db import IndexDamaged, IndexDatabase
from memquill.index._view import (
    NoteTable,
    PostingsReader,
    _join,  # pyright: ignore[reportPrivateUsage]
    _narrowed,  # pyright: ignore[reportPrivateUsage]
    _wide,  # pyright: ignore[reportPrivateUsage]
    block_place,
    block_places,
)
from memquill.index._writer import BlockEditor, IndexWriter

TERMS = (11, 12, 13, 14, 15)


def term_list(rng: random.Random) -> TermList:
    terms = rng.sample(TERMS, rng.randint(1, len(TERMS)))
    bodies = array("I", [rng.choice([0, 1, 1, 2, 300]) for _ in terms])
    fields = {i: (1, 0, 0, 0, rng.randint(0, 2)) for i in range(len(terms)) if rng.random() < 0.2}
    return TermList(array("I", terms), bodies, fields, 1, array("B", [0] * len(terms)))


def stored(database: IndexDatabase) -> dict[int, dict[int, tuple[int, object]]]:
    found: dict[int, dict[int, tuple[int, object]]] = {}
    with database.reading() as connection:
        rows = connection.execute("SELECT term, lo, data FROM postings ORDER BY term, lo")
        for term, lo, blob in rows:
            block = decode_block(bytes(blob))
            assert block.ids[0] == lo and 0 < len(block.ids) <= BLOCK
            held = found.setdefault(int(term), {})
            for doc, body in zip(block.ids, block.bodies, strict=True):
                assert doc not in held
                held[doc] = (body, block.fields.get(doc))
    return found


def expected(notes: dict[int, TermList]) -> dict[int, dict[int, tuple[int, object]]]:
    found: dict[int, dict[int, tuple[int, object]]] = {}
    for doc, terms in notes.items():
        for position, (term, body) in enumerate(zip(terms.ids, terms.bodies, strict=True)):
            found.setdefault(term, {})[doc] = (body, terms.fields.get(position))
    return found


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1))
def test_edited_blocks_hold_exactly_the_notes_postings(seed: int) -> None:
    rng = random.Random(seed)
    database = IndexDatabase(None, "/w")
    notes: dict[int, TermList] = {}
    next_id = 0
    try:
        for generation in range(1, 12):
            with database.writing() as connection:
                editor = BlockEditor(connection, generation)
                touched: set[int] = set()  # an editor takes each note once (as the writer does)
                for _ in range(rng.choice([1, 3, 40, 300])):
                    choice = rng.random()
                    if not notes or choice < 0.5:
                        # Mostly new notes at the end; now and then an id below others.
                        doc = next_id if rng.random() < 0.9 else rng.randrange(next_id + 1)
                        if doc in notes or doc in touched:
                            continue
                        touched.add(doc)
                        next_id = max(next_id, doc + 1)
                        notes[doc] = term_list(rng)
                        editor.add(doc, notes[doc])
                        continue
                    doc = rng.choice(sorted(notes))
                    if doc in touched:
                        continue
                    touched.add(doc)
                    if choice < 0.8:
                        new = term_list(rng)
                        editor.replace(doc, notes[doc], new)
                        notes[doc] = new
                    else:
                        editor.remove(doc, notes.pop(doc))
                editor.apply()
            assert stored(database) == expected(notes)
    finally:
        database.close()


def read_back(
    reader: PostingsReader, connection: sqlite3.Connection
) -> dict[int, dict[int, tuple[int, object]]]:
    found: dict[int, dict[int, tuple[int, object]]] = {}
    for term in TERMS:
        postings = reader.postings(connection, f"t{term}")
        assert list(postings.ids) == sorted(set(postings.ids))
        assert len(postings.bodies) == len(postings.ids)
        assert set(postings.fields) <= set(postings.ids)
        if postings.ids:
            found[term] = {
                doc: (body, postings.fields.get(doc))
                for doc, body in zip(postings.ids, postings.bodies, strict=True)
            }
    return found


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_reader_kept_across_changes_reads_exactly_the_notes_postings(seed: int) -> None:
    # A reader keeps each term's blocks joined and, after a change, cuts the blocks it kept
    # back out of them: whatever the changes, it must read what the notes hold (what a new
    # reader reads).
    rng = random.Random(seed)
    database = IndexDatabase(None, "/w")
    table = NoteTable()
    reader = PostingsReader(table)
    notes: dict[int, TermList] = {}
    next_id = 0
    try:
        with database.writing() as connection:
            connection.executemany(
                "INSERT INTO lexicon(id, term) VALUES (?, ?)", [(t, f"t{t}") for t in TERMS]
            )
        for generation in range(1, 12):
            with database.writing() as connection:
                editor = BlockEditor(connection, generation)
                touched: set[int] = set()
                for _ in range(rng.choice([1, 3, 40, 300, 700])):
                    if not notes or rng.random() < 0.5:
                        doc = next_id if rng.random() < 0.9 else rng.randrange(next_id + 1)
                        if doc in notes or doc in touched:
                            continue
                        next_id = max(next_id, doc + 1)
                        notes[doc] = term_list(rng)
                        editor.add(doc, notes[doc])
                    else:
                        doc = rng.choice(sorted(notes))
                        if doc in touched:
                            continue
                        if rng.random() < 0.7:
                            new = term_list(rng)
                            editor.replace(doc, notes[doc], new)
                            notes[doc] = new
                        else:
                            editor.remove(doc, notes.pop(doc))
                    touched.add(doc)
                editor.apply()
            database.set_meta("generation", generation)
            with database.reading() as connection:
                table.refresh(connection)
                assert read_back(reader, connection) == expected(notes)
                assert read_back(PostingsReader(table), connection) == expected(notes)
    finally:
        database.close()


@settings(max_examples=200)
@given(
    values=st.lists(
        st.sampled_from([0, 1, 255, 256, 65_535, 65_536, 2**24, 2**32 - 1]) | st.integers(0, 300),
        max_size=40,
    ),
    code=st.sampled_from(["B", "H", "I"]),
)
def test_postings_columns_are_narrowed_and_widened_without_changing_a_number(
    values: list[int], code: str
) -> None:
    fits = [value for value in values if value < 1 << (8 * array(code).itemsize)]
    column = array(code, fits)
    narrowed = _narrowed(column)
    top = max(fits, default=0)
    assert narrowed.tolist() == fits
    assert narrowed.typecode == (
        code if not fits or code == "B" else "B" if top < 256 else "H" if top < 65_536 else "I"
    )
    widened = _wide(narrowed)
    assert widened.typecode == "I" and widened.tolist() == fits


def test_a_reader_sees_each_change() -> None:
    database = IndexDatabase(None, "/w")
    table = NoteTable()
    reader = PostingsReader(table)
    only = TermList(array("I", [1]), array("I", [1]), {}, 1, array("B", [1]))
    try:
        with database.writing() as connection:
            connection.execute("INSERT INTO lexicon(id, term) VALUES (1, 'alpha')")
            editor = BlockEditor(connection, 1)
            for doc in range(3 * BLOCK):
                editor.add(doc, only)
            editor.apply()
            database.set_meta("generation", 1)
        with database.reading() as connection:
            table.refresh(connection)
            assert list(reader.postings(connection, "alpha").ids) == list(range(3 * BLOCK))
        with database.writing() as connection:
            editor = BlockEditor(connection, 2)
            editor.remove(5, only)
            changed = TermList(array("I", [1]), array("I", [4]), {}, 1, array("B", [4]))
            editor.replace(7, only, changed)
            editor.apply()
            database.set_meta("generation", 2)
        with database.reading() as connection:
            table.refresh(connection)
            postings = reader.postings(connection, "alpha")
            assert 5 not in postings.ids and len(postings.ids) == 3 * BLOCK - 1
            assert postings.bodies[list(postings.ids).index(7)] == 4
            assert reader.postings(connection, "bravo").ids == array("I")
    finally:
        database.close()


def test_a_batch_numbers_its_terms_and_notes_from_zero() -> None:
    from memquill.index._analysis import analyse_note

    builder = BatchBuilder(blocks_from=2)
    texts = ("# Title\n\nalpha bravo\n\n## Part\n\nbravo charlie bravo\n", "alpha delta")
    for index, text in enumerate(texts):
        builder.add(analyse_note(f"n{index}.md", text, (1, 2, 3, 4, 5)), 0)
    batch = builder.build()
    assert list(batch.vocabulary) == sorted(batch.vocabulary)
    number = batch.vocabulary.index
    mapping = [100 + index for index in range(len(batch.vocabulary))]
    blob = batch.notes[0].term_list(mapping)
    for first in (decode_term_list(blob), decode_chunk_matrix(blob)):
        assert first.chunk_counts(100 + number("bravo")) == (1, 2)
        assert first.chunk_counts(100 + number("delta")) == (0, 0)
    alpha = decode_block(batch.postings[number("alpha")][0])
    assert list(alpha.ids) == [0, 1] and list(alpha.bodies) == [1, 1]


def test_a_small_batch_brings_no_blocks_and_its_notes_are_stored_all_the_same(
    tmp_path: Path,
) -> None:
    from memquill.index._analysis import analyse_note

    builder = BatchBuilder(blocks_from=3)
    for index, text in enumerate(("alpha bravo", "alpha delta")):
        builder.add(analyse_note(f"n{index}.md", text, (1, 2, 3, 4, 5)), 0)
    small = builder.build()
    assert small.postings == () and len(small.notes) == 2
    database = IndexDatabase(tmp_path / "index.sqlite3", "workspace")
    notes = NoteTable()
    IndexWriter(database, notes).store(small)
    reader = PostingsReader(notes)
    with database.reading() as connection:
        notes.refresh(connection)
        alpha = reader.postings(connection, "alpha")
        delta = reader.postings(connection, "delta")
    assert list(alpha.ids) == [0, 1] and list(alpha.bodies) == [1, 1]
    assert list(delta.ids) == [1]
    database.close()


@settings(max_examples=200)
@given(
    ids=st.lists(st.integers(0, 2**32 - 1), unique=True, max_size=40),
    chunks=st.integers(1, 4),
    data=st.data(),
)
def test_a_term_list_keeps_its_ids_in_any_order_and_relabelled(
    ids: list[int], chunks: int, data: st.DataObject
) -> None:
    """Ids are stored as steps from the one before: up, down, across every width."""
    width = len(ids)
    top = data.draw(st.sampled_from([3, 300, 70_000]))
    matrix = array(
        "I",
        data.draw(st.lists(st.integers(0, top), min_size=chunks * width, max_size=chunks * width)),
    )
    bodies = data.draw(st.lists(st.integers(0, 2**31), min_size=width, max_size=width))
    fields = {column: (1, 2, 3, 4, 5) for column in range(0, width, 3)}
    # As analysis numbers them (a batch's own numbers), then as the index does (any ids).
    local = data.draw(st.permutations(range(width)))
    direct = encode_term_list(ids, bodies, fields, chunks, matrix)
    mapping = ids_by_local(local, ids)
    relabelled = seal_term_list(
        [mapping[number] for number in local], pack_term_counts(bodies, fields, chunks, matrix)
    )
    assert relabelled == direct
    for stored in (direct, relabelled):
        whole, matrix_only = decode_term_list(stored), decode_chunk_matrix(stored)
        assert list(whole.ids) == ids
        assert list(whole.bodies) == bodies and whole.fields == fields
        for column, term in enumerate(ids):
            counts = tuple(matrix[column::width])
            assert whole.chunk_counts(term) == counts == matrix_only.chunk_counts(term)
        assert matrix_only.chunk_counts(2**32 + 5) == (0,) * chunks


def ids_by_local(local: list[int], ids: list[int]) -> list[int]:
    """The mapping that relabels column ``c``'s number ``local[c]`` to ``ids[c]``."""
    mapping = [0] * len(local)
    for number, term in zip(local, ids, strict=True):
        mapping[number] = term
    return mapping


def test_a_term_list_whose_ids_fall_below_zero_is_damage() -> None:
    # Steps of -1 from 0: no id is negative, so the blob is damaged (its CRC is sound).
    view = unseal(encode_term_list([5, 3], [1, 1], {}, 1, array("B", [1, 1])))
    head = list(_HEAD.unpack_from(view))
    steps = pack(array("b", [-1, -1]).tobytes())
    head[3] = len(steps)
    rest = bytes(view[_HEAD.size + _HEAD.unpack_from(view)[3] :])
    blob = seal(_HEAD.pack(*head) + steps + rest)
    for decode in (decode_term_list, decode_chunk_matrix):
        with pytest.raises(CorruptBlob):
            decode(blob)


@settings(max_examples=200)
@given(
    blocks=st.lists(
        st.dictionaries(
            st.integers(0, 400),
            st.tuples(*(st.integers(0, 300) for _ in range(5))),
            max_size=12,
        ),
        max_size=4,
    ),
    asked=st.lists(st.integers(-1, 2000), max_size=30),
    data=st.data(),
)
def test_joined_field_counts_read_as_the_blocks_dicts(
    blocks: list[dict[int, tuple[int, int, int, int, int]]],
    asked: list[int],
    data: st.DataObject,
) -> None:
    # A reader packs the field counts of a term's blocks (FieldTable): read by note id, in
    # bulk and a block's range at a time, they must be the blocks' own, number for number.
    parts: list[Postings] = []
    whole: dict[int, tuple[int, int, int, int, int]] = {}
    for number, held in enumerate(blocks):
        base = 500 * number  # blocks hold ascending, disjoint ranges of note ids
        ids = sorted({base + doc for doc in held} | {base + 450})
        fields = {base + doc: held[doc] for doc in sorted(held)}
        parts.append(Postings(array("I", ids), array("I", [1] * len(ids)), fields))
        whole.update(fields)
    joined = _join(parts)
    table = joined.fields
    assert list(table) == sorted(whole) and len(table) == len(whole)
    assert dict(table.items()) == whole
    for doc in [*asked, *whole]:
        assert table.get(doc) == whole.get(doc) and (doc in table) == (doc in whole)
    places, entries = table.among(asked)
    assert [asked[place] for place in places] == [doc for doc in asked if doc in whole]
    assert [table.at(entry) for entry in entries] == [whole[doc] for doc in asked if doc in whole]
    low = data.draw(st.integers(0, 2000))
    high = data.draw(st.integers(low, 2001))
    part = table.part(low, high)
    assert dict(part.items()) == {doc: c for doc, c in whole.items() if low <= doc < high}


def test_field_counts_out_of_note_order_are_damage() -> None:
    # The reader finds a note's counts by binary search: a block whose rows are out of order
    # (a valid checksum, a wrong order) must be refused as damage, never read as no counts.
    block = Postings(
        array("I", [3, 7]), array("I", [1, 1]), {7: (1, 0, 0, 0, 0), 3: (0, 1, 0, 0, 0)}
    )
    with pytest.raises(IndexDamaged, match="field counts out of order"):
        _join([block])


@settings(max_examples=200)
@given(
    blocks=st.lists(
        st.tuples(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(0, 600)), max_size=12
    ),
    strangers=st.lists(st.integers(-5, 2**40 + 5), max_size=5),
)
def test_block_places_answer_as_the_dict_of_places_did(
    blocks: list[tuple[int, int, int]], strangers: list[int]
) -> None:
    """Where each block of a term lies in its joined postings, kept in one array, reads back as
    the dict of (generation, start, end) by first note id it replaces."""
    firsts = sorted({lo for lo, _, _ in blocks})
    ordered = [(lo, gen, length) for lo, (_, gen, length) in zip(firsts, blocks, strict=False)]
    expected: dict[int, tuple[int, int, int]] = {}
    start = 0
    for lo, gen, length in ordered:
        expected[lo] = (gen, start, start + length)
        start += length
    places = block_places(ordered)
    assert len(places) == 3 * len(expected)
    for lo, place in expected.items():
        assert block_place(places, lo, start) == place
    for lo in strangers:
        assert block_place(places, lo, start) == expected.get(lo)


def postings_of(data: st.DataObject, low: int, size: int) -> Postings:
    """Postings of ``size`` notes from ``low`` on, some with field counts, counts of any width."""
    draw = data.draw
    ids = sorted(draw(st.sets(st.integers(low, low + 3 * size), min_size=size, max_size=size)))
    top = draw(st.sampled_from([3, 300, 70_000]))
    bodies = draw(st.lists(st.integers(0, top), min_size=size, max_size=size))
    held = draw(st.sets(st.sampled_from(ids))) if ids else set[int]()
    five = st.tuples(*(st.integers(0, top) for _ in range(5)))
    return Postings(array("I", ids), array("I", bodies), {doc: draw(five) for doc in held})


@settings(max_examples=200)
@given(data=st.data(), sizes=st.tuples(st.integers(1, 300), st.integers(1, 300)))
def test_two_blocks_joined_are_the_block_of_both(
    data: st.DataObject, sizes: tuple[int, int]
) -> None:
    first = postings_of(data, 0, sizes[0])
    second = postings_of(data, first.ids[-1] + 1, sizes[1])
    both = Postings(
        first.ids + second.ids, first.bodies + second.bodies, first.fields | second.fields
    )
    joined = join_blocks(encode_block(first), encode_block(second))
    assert joined == encode_block(both)
    assert decode_block(joined) == both
