"""Spike: memquill's analysis and ranking over postings kept in tantivy, beside today's index.

Usage::

    uv run python benchmarks/tantivy_spike.py [--sizes 1000,5000] [--queries 200]
        [--start 2] [--data ../shared/bench-data/locomo10.json] [--work DIR]

The design measured (issue 36): the index's storage format and pruning (``_codec``,
``_blocks``, ``_pages``, ``_term_lists``, ``_lexicon``, ``_postings``, ``_writer``, ``_batch``,
``_notes``, ``_verify``, ``_gains``, ``_prune``) give way to a tantivy index; freshness,
analysis and ranking stay memquill's.

- Build: every note is analysed by the index's own :func:`analyse_note` and written to tantivy
  as pre-tokenised terms (the ``whitespace`` tokenizer over memquill's terms): ``body`` holds
  each body term ``2 × count`` times, ``meta`` each field term ``ceil(2 F)`` times (``F``: the
  term's weighted field counts, ``Σ weight × count``), padded with a token memquill never yields
  to one length ``M`` for every note; ``figures`` (stored only) keeps what ranking reads of the
  note (length, tags, body and field counts, the chunk matrix).
- Candidates: tantivy's top ``n`` (block-max WAND; ``count=False`` keeps it pruning) for the
  query's terms over ``body`` and ``meta``, ``n`` starting at ``--start`` times ranking's
  re-scoring depth (50).
- Exactness: why a note tantivy leaves out cannot reach the re-scored set. tantivy's BM25 per
  term is ``idf' · tf (k + 1) / (tf + k n')`` with ``k = 1.2``, ``b = 0.75``; memquill's body
  part is ``idf · c (k1 + 1) / (c + k1 n)`` with ``k1 = 0.6``. With ``tf = 2 c`` the two differ
  by the factor ``1.375 · (2c + 1.2 n) / (2c + 1.2 n')``, at least ``1.375 · min(1, n / n')``;
  ``idf' ≥ idf`` (a field's holders are among all holders); the field part is bounded the same
  way (``n' ≤ 1``: every note's ``meta`` has the length ``M``), and saturation is subadditive,
  so ``memquill's score ≤ tantivy's score / α`` with ``α = 1.375 · min(1, min over notes of
  n / n')`` (computed at build). Decay never exceeds 1 and a named month adds at most its
  gain. A note outside tantivy's top ``n`` so scores at most ``s_n / α`` (plus month gains):
  when the ``depth``-th best candidate scores more than that, the candidates hold the whole
  re-scored set and ranking them gives today's hits exactly; else ``n`` doubles and
  tantivy is asked again. ``α`` and ``M`` hold for the notes built: a note written later with
  a smaller ``n / n'`` or a longer ``meta`` needs them recomputed (a real design would keep
  them as the index's figures, as ``_gains`` keeps its bounds today).
- Ranking: :func:`memquill.query.rank` itself over a corpus of the candidates (its ``size``,
  ``frequency`` and ``average_length`` those of the whole set).

Measured for each size, each in its own process, one after another in one run: memquill's
build (``memquill index``) and the spike's build (CPU time, index size, peak RSS), the warm
search p50 (CPU) of memquill's engine (``IndexSearcher.search``, what ``memory_search`` calls
after its arguments), of the spike, of the spike ranking tantivy's top 50 alone (one round, no
check: the speed such a design could reach, and how often it would be wrong) and of a raw
tantivy top-10 over the spike's index, the
first search in a fresh process, peak RSS, how many tantivy rounds the questions needed, and
whether the top-10 lists (paths and scores) of both variants are identical to the engine's on
every LoCoMo question. Dated paths (the month term) and filters are left out of the spike: the
generated vault has neither.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vault_scale import NOW, cpu_seconds, generate, note_files, questions

PAD = "\x1f"
"""The padding token of ``meta``: memquill's tokenizer never yields a control character."""
TANTIVY_K1 = 1.2
TANTIVY_B = 0.75
"""tantivy's BM25 constants (its Python binding cannot change them)."""
TOP = 10
"""The hits compared with today's engine."""
MEMO = 256
"""Decoded notes and hit documents kept (today's index keeps 256 hit documents)."""


# -- build -------------------------------------------------------------------------------------


def schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", tokenizer_name="whitespace", index_option="freq")
    builder.add_text_field("meta", tokenizer_name="whitespace", index_option="freq")
    builder.add_bytes_field("figures", stored=True, indexed=False)
    return builder.build()


def field_frequency(counts: Sequence[int], weights: Sequence[float]) -> float:
    return sum(weight * count for weight, count in zip(weights, counts, strict=False))


def build(root: Path, store: Path) -> dict[str, Any]:
    import tantivy

    from memquill.index._analysis import analyse_note
    from memquill.query._rank import RankParams
    from memquill.query._walk import file_identity

    params = RankParams()
    figures = []
    for path in note_files(root):
        relative = path.relative_to(root).as_posix()
        text = path.read_text("utf-8")
        figures.append(analyse_note(relative, text, file_identity(path.stat())))
    average = statistics.fmean(note.length for note in figures) if figures else 0.0
    # tantivy's body length per note: every body term twice per occurrence.
    body_lengths = [2 * sum(note.body.values()) for note in figures]
    average_tokens = statistics.fmean(body_lengths) if figures else 0.0
    metas: list[list[str]] = []
    for note in figures:
        tokens: list[str] = []
        for term, counts in note.fields.items():
            tokens.extend([term] * math.ceil(2 * field_frequency(counts, params.field_weights)))
        metas.append(tokens)
    width = max((len(tokens) for tokens in metas), default=0) + 1
    alpha = 1.0
    b = params.b
    for note, written in zip(figures, body_lengths, strict=True):
        ours = 1.0 - b + b * note.length / average if average else 1.0
        theirs = 1.0 - TANTIVY_B + TANTIVY_B * written / average_tokens if average_tokens else 1.0
        alpha = min(alpha, ours / theirs)
    ratio = (TANTIVY_K1 + 1.0) / (params.k1 + 1.0)  # with tf = 2 c: 2.2 / 1.6 = 1.375
    alpha *= ratio
    store.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(schema(), path=str(store))
    writer = index.writer(heap_size=64_000_000, num_threads=1)
    dated = 0
    for note, meta in zip(figures, metas, strict=True):
        body = " ".join(" ".join([term] * (2 * count)) for term, count in note.body.items())
        meta.extend([PAD] * (width - len(meta)))
        dated += bool(note.day)
        writer.add_document(tantivy.Document(body=body, meta=" ".join(meta), figures=encode(note)))
    writer.commit()
    writer.wait_merging_threads()
    (store / "spike.json").write_text(
        json.dumps({"average": average, "alpha": alpha, "width": width, "dated": dated})
    )
    return {"notes": len(figures), "alpha": alpha, "width": width}


# -- search ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Note:
    """One candidate's figures, as the spike's index stores them."""

    path: str
    length: int
    tag_keys: frozenset[str]
    day: int
    counts: array[int]
    fields: dict[str, tuple[int, ...]]
    terms: bytes
    """The terms, each between NULs: a term's column is the NULs before it (found at C
    speed; a search asks about a few terms of a few hundred candidates)."""
    chunks: int
    matrix: array[int]

    @property
    def kind(self) -> Any:
        return "note"

    def column(self, term: str) -> int:
        found = self.terms.find(b"\0" + term.encode("utf-8") + b"\0")
        return -1 if found < 0 else self.terms.count(b"\0", 0, found)

    def body(self, term: str) -> int:
        column = self.column(term)
        return 0 if column < 0 else self.counts[column]

    def chunk_counts(self, term: str) -> tuple[int, ...]:
        column = self.column(term)
        if column < 0:
            return (0,) * max(1, self.chunks)
        return tuple(self.matrix[column :: len(self.counts)])


def encode(note: Any) -> bytes:
    """A note's figures in one blob: a JSON header line (path, length, tags, day, chunks, the
    field counts, the arrays' types), the terms joined by NUL, then the body counts (one per
    term, 0 for a term only fields hold) and the chunk matrix as machine arrays. tantivy's
    document store compresses it."""
    counts = array("I", [note.body.get(term, 0) for term in note.terms])
    if max(counts, default=0) < 1 << 16:
        counts = array("H", counts)
    header = {
        "p": note.path,
        "l": note.length,
        "g": list(note.tags),
        "d": note.day,
        "c": note.chunks,
        "f": note.fields,
        "b": counts.typecode,
        "m": note.matrix.typecode,
        "n": len(counts) * counts.itemsize,
    }
    terms = "\0".join(note.terms).encode("utf-8")
    data = counts.tobytes() + note.matrix.tobytes()
    return b"\n".join([json.dumps(header).encode("utf-8"), terms, data])


def decode(blob: bytes) -> Note:
    head, terms, rest = blob.split(b"\n", 2)
    found = json.loads(head)
    counts = array(found["b"])
    counts.frombytes(rest[: found["n"]])
    matrix = array(found["m"])
    matrix.frombytes(rest[found["n"] :])
    return Note(
        path=found["p"],
        length=found["l"],
        tag_keys=frozenset(found["g"]),
        day=found["d"],
        counts=counts,
        fields={term: tuple(values) for term, values in found["f"].items()},
        terms=b"\0" + terms + b"\0",
        chunks=found["c"],
        matrix=matrix,
    )


class SpikeIndex:
    """The spike's index, open for searching."""

    def __init__(self, root: Path, store: Path) -> None:
        import tantivy

        self.tantivy = tantivy
        self.root = root
        self.index = tantivy.Index.open(str(store))
        self.schema = self.index.schema
        self.searcher = self.index.searcher()
        figures = json.loads((store / "spike.json").read_text("utf-8"))
        self.average: float = figures["average"]
        self.alpha: float = figures["alpha"]
        if figures["dated"]:
            raise NotImplementedError("the spike leaves the month term out: no dated paths")
        self.size: int = self.searcher.num_docs
        self.holders: dict[str, int] = {}
        self.notes: OrderedDict[tuple[int, int], Note] = OrderedDict()
        self.documents: OrderedDict[str, Any] = OrderedDict()
        self.rounds: list[int] = []

    def term_query(self, term: str) -> Any:
        tantivy = self.tantivy
        return tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "body", term)),
                (tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "meta", term)),
            ]
        )

    def frequency(self, term: str) -> int:
        found = self.holders.get(term)
        if found is None:
            result = self.searcher.search(self.term_query(term), 1, count=True)
            found = getattr(result, "count", 0) or 0
            self.holders[term] = found
        return found

    def query(self, terms: Sequence[str]) -> Any:
        tantivy = self.tantivy
        return tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(self.schema, field, term))
                for term in terms
                for field in ("body", "meta")
            ]
        )

    def note(self, address: Any) -> Note:
        key = (address.segment_ord, address.doc)
        found = self.notes.get(key)
        if found is None:
            found = self.notes[key] = decode(self.searcher.doc(address)["figures"][0])
            if len(self.notes) > MEMO:
                self.notes.popitem(last=False)
        else:
            self.notes.move_to_end(key)
        return found

    def document(self, path: str) -> Any:
        """The note read from its file (kept, as the index keeps its hit documents)."""
        from memquill.query._documents import note_document

        found = self.documents.get(path)
        if found is None:
            found = note_document(path, (self.root / path).read_text("utf-8"))
            self.documents[path] = found
            if len(self.documents) > MEMO:
                self.documents.popitem(last=False)
        else:
            self.documents.move_to_end(path)
        return found

    def search(
        self, question: str, candidates: int, start: float, *, checked: bool = True
    ) -> list[Any]:
        """memquill's hits for ``question``: exact when ``checked`` (see the module), else
        ranked over tantivy's top ``start × depth`` alone."""
        from memquill.query._rank import RankParams, rank
        from memquill.query._tokens import query_terms

        params = RankParams()
        terms = query_terms(question)
        if not terms:
            return []
        query = self.query(terms)
        depth = max(params.rerank_depth, candidates)
        wanted = math.ceil(start * depth)
        rounds = 0
        while True:
            rounds += 1
            hits = self.searcher.search(query, wanted, count=False).hits
            corpus = SpikeCorpus(self, [self.note(address) for _, address in hits])
            if len(hits) < wanted or not checked:
                break  # every note holding a term is a candidate (or no check asked)
            # float32 scores: a hair of slack.
            bound = hits[-1][0] * (1 + 1e-5) / self.alpha
            scores = sorted(base_scores(corpus, terms, params), reverse=True)
            if len(scores) >= depth and scores[depth - 1] > bound:
                break
            wanted *= 2
        self.rounds.append(rounds)
        return rank(corpus, question, now=NOW, params=params, candidates=candidates)


def base_scores(corpus: SpikeCorpus, terms: Sequence[str], params: Any) -> list[float]:
    """Each candidate's score before its best chunk (no decay: no dated paths)."""
    from memquill.query._rank import idf

    scores: dict[int, float] = {}
    average = corpus.average_length["note"]
    b = params.b
    for term in terms:
        postings = corpus.postings(term)
        if not postings:
            continue
        weight = idf(corpus.size, corpus.frequency(term))
        for slot, body, fields in postings:
            length = corpus.notes[slot].length
            frequency = body / (1.0 - b + (b * length / average if average else b))
            if fields is not None:
                frequency += field_frequency(fields, params.field_weights)
            gain = weight * frequency * (params.k1 + 1.0) / (frequency + params.k1)
            scores[slot] = scores.get(slot, 0.0) + gain
    return list(scores.values())


class SpikeCorpus:
    """The candidates as :func:`memquill.query.rank` reads a corpus (the whole set's figures)."""

    def __init__(self, index: SpikeIndex, notes: list[Note]) -> None:
        self._index = index
        self.notes = notes
        self.size = index.size
        self.average_length = {"note": index.average, "record": 0.0}

    def postings(self, term: str) -> list[tuple[int, int, tuple[int, ...] | None]]:
        found: list[tuple[int, int, tuple[int, ...] | None]] = []
        for slot, note in enumerate(self.notes):
            body = note.body(term)
            fields = note.fields.get(term)
            if body or fields:
                found.append((slot, body, fields))
        return found

    def frequency(self, term: str) -> int:
        return self._index.frequency(term)

    def stats(self, index: int) -> Note:
        return self.notes[index]

    def day(self, index: int) -> date | None:
        day = self.notes[index].day
        return date.fromordinal(day) if day else None

    def path_key(self, index: int) -> bytes:
        from memquill.foundation.text import path_key

        return path_key(self.notes[index].path)

    def month_holders(self, key: Any) -> tuple[int, Sequence[int]]:
        return 0, ()

    def rescoring(self, indexes: Sequence[int]) -> None:
        return None

    def chunk_counts(self, index: int, term: str) -> tuple[int, ...]:
        return self.notes[index].chunk_counts(term)

    def document(self, index: int) -> Any:
        return self._index.document(self.notes[index].path)


# -- the children ------------------------------------------------------------------------------


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def searching(kind: str, root: Path, store: Path, asked: list[str], start: float) -> dict[str, Any]:
    """Open, search the first question (timed apart), then every question warm."""
    started = time.perf_counter()
    started_cpu = cpu_seconds()
    from memquill.query._rank import CANDIDATES

    spike: SpikeIndex | None = None
    if kind == "memquill":
        from memquill.index._search_index import IndexSearcher
        from memquill.query._rank import RankParams

        engine = IndexSearcher(store, notice=None)
        params = RankParams()

        def search(question: str) -> list[tuple[str, float]]:
            hits, _ = engine.search(
                root,
                question,
                records=(),
                now=NOW,
                tags=(),
                file_type="all",
                params=params,
                candidates=CANDIDATES,
            )
            return [(hit.document.path, hit.score) for hit in hits[:TOP]]

    elif kind in ("spike", "spike-top"):
        spike = SpikeIndex(root, store)

        def search(question: str) -> list[tuple[str, float]]:
            assert spike is not None
            hits = spike.search(question, CANDIDATES, start, checked=kind == "spike")
            return [(hit.document.path, hit.score) for hit in hits[:TOP]]

    else:  # raw tantivy: the same terms, its own top 10, nothing more
        from memquill.query._tokens import query_terms

        raw = SpikeIndex(root, store)

        def search(question: str) -> list[tuple[str, float]]:
            terms = query_terms(question)
            if not terms:
                return []
            hits = raw.searcher.search(raw.query(terms), TOP, count=False).hits
            return [(str(address.doc), score) for score, address in hits]

    opened = time.perf_counter()
    search(asked[0])
    first = time.perf_counter() - opened
    first_cpu = cpu_seconds() - started_cpu
    lists: list[list[tuple[str, float]]] = []
    warm: list[float] = []
    for question in asked:
        began = cpu_seconds()
        lists.append(search(question))
        warm.append(cpu_seconds() - began)
    result: dict[str, Any] = {
        "open_and_first": first + (opened - started),
        "first_cpu": first_cpu,
        "first": first,
        "warm_cpu": warm,
        "lists": lists,
        "rss": rss_mib(),
    }
    if spike is not None and kind == "spike":
        result["rounds"] = spike.rounds
    return result


def child(kind: str, root: Path, store: Path, asked: list[str], start: float) -> dict[str, Any]:
    started_cpu = cpu_seconds()
    if kind == "spike-build":
        found = build(root, store)
        return {**found, "cpu": cpu_seconds() - started_cpu, "rss": rss_mib()}
    return searching(kind, root, store, asked, start)


def spawn(
    kind: str, root: Path, store: Path, asked: list[str], start: float = 1.0
) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(root), str(store)],
        input=json.dumps({"asked": asked, "start": start}),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def memquill_build(root: Path, folder: Path) -> dict[str, Any]:
    """``memquill index`` in its own process: CPU (its workers included) and peak RSS."""
    script = Path(sys.executable).with_name("memquill")
    env = {**os.environ, "MEMQUILL_INDEX_DIR": str(folder)}
    process = subprocess.Popen(
        [str(script), "--workspace", str(root), "index", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("memquill index failed")
    # Workers of a parallel build are the child's children: its rusage holds them.
    return {"cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


# -- the run -----------------------------------------------------------------------------------


def measure(size: int, args: argparse.Namespace, asked: list[str]) -> dict[str, Any]:
    root = args.work / f"vault-{size}"
    generate(root, size, args.data)
    time.sleep(2.1)  # a note changed in the last 2 s is read again by memquill
    index_folder = args.work / f"index-{size}"
    spike_folder = args.work / f"spike-{size}"
    for folder in (index_folder, spike_folder):
        shutil.rmtree(folder, ignore_errors=True)
    load = [os.getloadavg()[0]]
    row: dict[str, Any] = {"size": size}
    row["memquill_build"] = memquill_build(root, index_folder)
    row["spike_build"] = spawn("spike-build", root, spike_folder, [])
    row["memquill_mb"] = size_mb(index_folder)
    row["spike_mb"] = size_mb(spike_folder)
    row["memquill"] = spawn("memquill", root, index_folder, asked)
    row["spike"] = spawn("spike", root, spike_folder, asked, args.start)
    row["spike_top"] = spawn("spike-top", root, spike_folder, asked, 1.0)
    row["tantivy"] = spawn("tantivy", root, spike_folder, asked)
    ours = row["memquill"]["lists"]
    for kind in ("spike", "spike_top"):
        theirs = row[kind]["lists"]
        row[kind]["same_paths"] = sum(
            [path for path, _ in a] == [path for path, _ in b]
            for a, b in zip(ours, theirs, strict=True)
        )
        row[kind]["same_scores"] = sum(
            len(a) == len(b)
            and all(
                pa == pb and math.isclose(sa, sb, rel_tol=1e-9)
                for (pa, sa), (pb, sb) in zip(a, b, strict=True)
            )
            for a, b in zip(ours, theirs, strict=True)
        )
    row["questions"] = len(asked)
    load.append(os.getloadavg()[0])
    row["load"] = load
    for kind in ("memquill", "spike", "spike_top", "tantivy"):
        del row[kind]["lists"]
    return row


def report(rows: list[dict[str, Any]]) -> None:
    def ms(value: float) -> str:
        return f"{value * 1000:,.2f} ms"

    def p50(row: dict[str, Any], kind: str) -> float:
        return statistics.median(row[kind]["warm_cpu"])

    def same(row: dict[str, Any], kind: str) -> str:
        found, asked = row[kind], row["questions"]
        return f"{found['same_paths']}/{asked} / {found['same_scores']}/{asked}"

    table: list[tuple[str, Any]] = [
        ("memquill build CPU", lambda r: f"{r['memquill_build']['cpu']:.1f} s"),
        ("spike build CPU", lambda r: f"{r['spike_build']['cpu']:.1f} s"),
        ("memquill index size", lambda r: f"{r['memquill_mb']:.1f} MB"),
        ("spike index size (tantivy)", lambda r: f"{r['spike_mb']:.1f} MB"),
        ("memquill engine warm p50 CPU", lambda r: ms(p50(r, "memquill"))),
        ("spike warm p50 CPU", lambda r: ms(p50(r, "spike"))),
        ("spike, top 50 unchecked, warm p50 CPU", lambda r: ms(p50(r, "spike_top"))),
        ("raw tantivy top-10 warm p50 CPU", lambda r: ms(p50(r, "tantivy"))),
        (
            "memquill engine ÷ raw tantivy (warm)",
            lambda r: f"{p50(r, 'memquill') / p50(r, 'tantivy'):.1f}×",
        ),
        ("spike ÷ raw tantivy (warm)", lambda r: f"{p50(r, 'spike') / p50(r, 'tantivy'):.1f}×"),
        (
            "open + first search, fresh process, CPU (memquill / spike)",
            lambda r: f"{ms(r['memquill']['first_cpu'])} / {ms(r['spike']['first_cpu'])}",
        ),
        (
            "peak RSS warm (memquill / spike / raw tantivy)",
            lambda r: (
                " / ".join(f"{r[k]['rss']:.0f}" for k in ("memquill", "spike", "tantivy")) + " MiB"
            ),
        ),
        (
            "peak RSS build (memquill / spike)",
            lambda r: f"{r['memquill_build']['rss']:.0f} / {r['spike_build']['rss']:.0f} MiB",
        ),
        (
            "top-10 identical to memquill's (paths / paths and scores)",
            lambda r: same(r, "spike"),
        ),
        (
            "top 50 unchecked: top-10 identical (paths / paths and scores)",
            lambda r: same(r, "spike_top"),
        ),
        (
            "tantivy rounds per question (1 / 2 / 3+)",
            lambda r: " / ".join(
                str(n)
                for n in (
                    r["spike"]["rounds"].count(1),
                    r["spike"]["rounds"].count(2),
                    sum(x >= 3 for x in r["spike"]["rounds"]),
                )
            ),
        ),
        (
            "α (bound factor) / meta length M",
            lambda r: f"{r['spike_build']['alpha']:.3f} / {r['spike_build']['width']}",
        ),
        ("load average (start / end)", lambda r: f"{r['load'][0]:.1f} / {r['load'][1]:.1f}"),
    ]
    print("| figure | " + " | ".join(f"{r['size']:,} notes" for r in rows) + " |")
    print("|" + "---|" * (len(rows) + 1))
    for label, render in table:
        print(f"| {label} | " + " | ".join(render(r) for r in rows) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    repo = Path(__file__).resolve().parents[1]
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument(
        "--data", type=Path, default=repo.parent / "shared" / "bench-data" / "locomo10.json"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/memquill-tantivy-spike"))
    parser.add_argument("--queries", type=int, default=200, help="LoCoMo questions")
    parser.add_argument(
        "--start",
        type=float,
        default=2.0,
        help="tantivy's first top n, as a multiple of the re-scoring depth (doubled per round)",
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, root, store = args.child
        payload = json.loads(sys.stdin.read())
        found = child(kind, Path(root), Path(store), payload["asked"], payload["start"])
        print(json.dumps(found))
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    asked = questions(args.data, args.queries)
    rows: list[dict[str, Any]] = []
    for size in (int(value) for value in args.sizes.split(",")):
        rows.append(measure(size, args, asked))
        (args.work / "results.json").write_text(json.dumps(rows))
        print(f"measured {size:,} notes", file=sys.stderr, flush=True)
    report(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
