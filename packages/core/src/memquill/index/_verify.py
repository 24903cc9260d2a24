"""Reading every stored blob back, as ``doctor`` does: checksums and parses, nothing else."""

from __future__ import annotations

from memquill.index._codec import CorruptBlob, decode_block
from memquill.index._db import IndexDatabase
from memquill.index._folders import decode_listing
from memquill.index._pages import PAGE, decode_page
from memquill.index._term_lists import decode_term_list


def verify_blobs(database: IndexDatabase) -> list[str]:
    """Problems with any postings block, term list, page or kept folder listing (empty: all
    sound).

    Every note on a page must have its term list, on the page its id names, and no note may
    have a term list without being on a page; every term with postings must be in the
    lexicon, and every term of the lexicon must have postings.
    """
    problems: list[str] = []
    with database.reading() as connection:
        held: set[int] = set()
        for term, lo, blob in connection.execute("SELECT term, lo, data FROM postings"):
            held.add(int(term))
            try:
                block = decode_block(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"postings of term {term} from note {lo}: {error}")
                continue
            if block.ids[0] != lo:
                problems.append(f"postings of term {term} from note {lo}: start elsewhere")
        known = {int(term) for (term,) in connection.execute("SELECT id FROM lexicon")}
        problems.extend(f"term {term}: not in the lexicon" for term in sorted(held - known))
        problems.extend(f"term {term}: held by no note" for term in sorted(known - held))
        listed: set[int] = set()
        for doc_id, blob in connection.execute("SELECT id, data FROM terms"):
            try:
                decode_term_list(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"term list of note {doc_id}: {error}")
            listed.add(int(doc_id))
        paged: set[int] = set()
        for page, blob in connection.execute("SELECT page, data FROM pages"):
            try:
                rows = decode_page(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"page {page}: {error}")
                continue
            for row in rows:
                if row.id // PAGE != page:
                    problems.append(f"note {row.path!r}: on page {page}")
                paged.add(row.id)
        for path, blob in connection.execute("SELECT path, data FROM folders"):
            try:
                decode_listing(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"listing of folder {bytes(path)!r}: {error}")
        problems.extend(f"note {doc_id}: no term list" for doc_id in sorted(paged - listed))
        problems.extend(f"note {doc_id}: on no page" for doc_id in sorted(listed - paged))
    return problems[:20]
