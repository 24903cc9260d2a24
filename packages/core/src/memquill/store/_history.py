"""How a store's history fills it: live facts, history depth, compacted versions, tombstones.

:func:`history_figures` computes every figure ``doctor`` and the management page show from the
records alone, so two readers of one file report the same numbers:

- **live facts**: ``active`` versions;
- **history depth**, per family of a fact that is not forgotten (every version sharing one
  ``rootId``): its number of versions; the report gives the deepest and the mean;
- **superseded versions**, of which **compacted** ones are those whose text was dropped (empty
  content that keeps a ``textHash``: automatic compaction or ``memquill compact``);
- **tombstones**: forgotten families (a family with a revoked version: forgetting revokes
  them all);
- **bytes**, as each record's block takes them in the file (marker line, text, blank line),
  split into live facts, retained history (superseded versions that still hold text),
  compacted versions and tombstones. With the header they add up to the file's size.

Every category is counted in one pass over the records (:func:`_category`), so a new kind of
record (a compact tombstone form, say) adds one branch there and its own count.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Literal

from memquill.store._codec import encode_block
from memquill.store._fingerprints import TEXT_HASH_FIELD
from memquill.store._record import Record

Category = Literal["live", "history", "compacted", "tombstone"]


@dataclass(frozen=True, slots=True)
class HistoryFigures:
    """What the records hold, by kind (see the module docstring).

    Attributes:
        live: active versions (live facts).
        superseded: superseded versions, compacted or not.
        compacted: superseded versions whose text was dropped (empty, with a ``textHash``).
        families: families of facts that are not forgotten.
        versions: the versions of those families.
        deepest: versions in the deepest such family (0 when there is none).
        tombstones: forgotten families.
        live_bytes: bytes the live facts' blocks take.
        history_bytes: bytes the superseded versions that still hold text take.
        compacted_bytes: bytes the compacted versions still take (their metadata).
        tombstone_bytes: bytes the forgotten families' versions take.
    """

    live: int = 0
    superseded: int = 0
    compacted: int = 0
    families: int = 0
    versions: int = 0
    deepest: int = 0
    tombstones: int = 0
    live_bytes: int = 0
    history_bytes: int = 0
    compacted_bytes: int = 0
    tombstone_bytes: int = 0

    @property
    def mean_depth(self) -> float:
        """Versions per family that is not forgotten, to two decimals (0 when none)."""
        return round(self.versions / self.families, 2) if self.families else 0.0

    def figures(self) -> dict[str, int | float]:
        """Every figure by its attribute's name, ``mean_depth`` after ``deepest``: the one
        mapping ``doctor --json`` and the management page show (each in its key style)."""
        found: dict[str, int | float] = {}
        for item in fields(self):
            found[item.name] = getattr(self, item.name)
            if item.name == "deepest":
                found["mean_depth"] = self.mean_depth
        return found


def history_figures(records: Iterable[Record]) -> HistoryFigures:
    """The figures of ``records`` (any order; the result depends only on the set)."""
    records = tuple(records)
    forgotten = {record.root_id for record in records if record.status == "revoked"}
    depth: Counter[str] = Counter()
    count: Counter[Category] = Counter()
    size: defaultdict[Category, int] = defaultdict(int)
    superseded = 0
    for record in records:
        category = _category(record, forgotten)
        count[category] += 1
        size[category] += len(encode_block(record).encode())
        if category != "tombstone":
            depth[record.root_id] += 1
            superseded += record.status == "superseded"
    return HistoryFigures(
        live=count["live"],
        superseded=superseded,
        compacted=count["compacted"],
        families=len(depth),
        versions=sum(depth.values()),
        deepest=max(depth.values(), default=0),
        tombstones=len(forgotten),
        live_bytes=size["live"],
        history_bytes=size["history"],
        compacted_bytes=size["compacted"],
        tombstone_bytes=size["tombstone"],
    )


def _category(record: Record, forgotten: set[str]) -> Category:
    if record.root_id in forgotten:
        return "tombstone"
    if record.status == "active":
        return "live"
    if not record.content and TEXT_HASH_FIELD in record.meta:
        return "compacted"
    return "history"
