"""Baselines for ``retrieval_locomo.py``, measured in the same run on the same texts.

- ``bm25_ranker``: ``rank_bm25.BM25Okapi`` (k1 1.5, b 0.75) over lowercased ``[a-z0-9]+``
  tokens minus a common English stop list (the protocol of ``bench-data/README.md``).
- ``substring_ranker``: the original system's substring scorer (spec 6.3).
- ``reference_excerpt``: the plain excerpt of ``bench-data/README.md``: the line sharing the
  most query tokens (ties: the earliest), grown with its neighbours (next, then previous,
  alternating) while the excerpt stays within the per-hit budget; a longer line is cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rank_bm25 import BM25Okapi

# A common English stop list (NLTK's), for the BM25 baseline protocol of bench-data/README.md.
_BASELINE_STOP_TEXT = (
    "i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself "
    "yourselves he him his himself she she's her hers herself it it's its itself they them "
    "their theirs themselves what which who whom this that that'll these those am is are was "
    "were be been being have has had having do does did doing a an the and but if or because "
    "as until while of at by for with about against between into through during before after "
    "above below to from up down in out on off over under again further then once here there "
    "when where why how all any both each few more most other some such no nor not only own "
    "same so than too very s t can will just don don't should should've now d ll m o re ve y "
    "ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven "
    "haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn "
    "shouldn't wasn wasn't weren weren't won won't wouldn wouldn't "
)
BASELINE_STOP = frozenset(_BASELINE_STOP_TEXT.split())
_SPEC_STOP_TEXT = (
    "the a an is are was were be been being have has had do does did will would shall should "
    "may might can could of at by for with about against between through during before after "
    "above below to from up down in out on off over under again further then once and but or "
    "nor not so if this that these those it its i me my we our you your he his she her they "
    "their what which who whom "
)
SPEC_STOP = frozenset(_SPEC_STOP_TEXT.split())
_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\u3000-\u303f\uf900-\uffaf]")


def tokens(text: str) -> list[str]:
    """The baseline protocol's tokens."""
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in BASELINE_STOP]


def bm25_ranker(docs: Sequence[tuple[str, str]]) -> Callable[[str], list[str]]:
    index = BM25Okapi([tokens(text) for _, text in docs], k1=1.5, b=0.75)

    def run(query: str) -> list[str]:
        scores = index.get_scores(tokens(query))
        order = sorted(range(len(docs)), key=lambda i: (-scores[i], docs[i][0]))
        return [docs[i][0] for i in order[:20] if scores[i] > 0]

    return run


def substring_ranker(docs: Sequence[tuple[str, str]]) -> Callable[[str], list[str]]:
    """Spec 6.3: substring counts, title/path boosts, best 1200-unit chunk, no idf."""

    def run(query: str) -> list[str]:
        keywords = _spec_tokens(query)
        scored: list[tuple[float, str]] = []
        for key, text in docs:
            lowered = text.lower()
            meta = sum(10 + 3 for k in keywords if k in key.lower())
            best = max((sum(c.count(k) for k in keywords) for c in _windows(lowered)), default=0)
            if meta + best > 0:
                scored.append((meta + best, key))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [key for _, key in scored[:20]]

    return run


def reference_excerpt(text: str, query: str, budget: int) -> str:
    """The best line by query-token overlap, grown with its neighbours within ``budget``."""
    wanted = set(tokens(query))
    lines = text.split("\n")
    overlap = [len(wanted.intersection(tokens(line))) for line in lines]
    best = max(range(len(lines)), key=lambda i: (overlap[i], -i)) if lines else 0
    if len(lines[best]) >= budget:
        return lines[best][:budget]
    first, last, size = best, best, len(lines[best])
    grew = True
    while grew:
        grew = False
        for candidate in (last + 1, first - 1):
            if 0 <= candidate < len(lines) and size + 1 + len(lines[candidate]) <= budget:
                size += 1 + len(lines[candidate])
                first, last = min(first, candidate), max(last, candidate)
                grew = True
    return "\n".join(lines[first : last + 1])


def _windows(text: str) -> list[str]:
    if len(text) <= 1200:
        return [text]
    return [text[i : i + 1200] for i in range(0, len(text) - 150, 1050)]


def _spec_tokens(query: str) -> list[str]:
    words = re.split(r"[\s\W]+", query.lower())
    seen: dict[str, None] = {}
    for word in words:
        if word and word not in SPEC_STOP and not _CJK.search(word):
            seen[word] = None
    return list(seen)
