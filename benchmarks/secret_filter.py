"""Secret filter: detection rate, false positives and time per check on the labelled corpus.

Usage::

    uv run python benchmarks/secret_filter.py [--repeat 200]
        [--detect-secrets-python /path/to/venv/bin/python] [--show-misses]

The corpus is ``tests/core/secret_corpus.py``: ``CREDENTIALS`` (shapes people paste, each must be
refused) and ``PROSE`` (notes that talk about credentials, placeholders, documentation examples,
code that names a secret, random-looking identifiers; none may be refused).

Rows:

* ``memquill``: the built-in detectors through :class:`memquill.store.SecretScanner` (text
  normalised first: NFKC, format characters removed, look-alike letters folded).
* ``detect-secrets`` (only with ``--detect-secrets-python``, an interpreter that has the
  ``detect-secrets`` package; it is never a memquill dependency): every default plugin over each
  line through ``detect_secrets.core.scan.scan_line``, the library's call for checking a string,
  once with all plugins and once without the two high-entropy plugins.

A held-out check: every paragraph of ``README.md`` and ``docs/`` (prose the detectors were not
written against) is scanned and the flagged ones are counted (``docs/security.md`` names
credential shapes only through placeholders, so it counts too).

Time per check: each round checks every corpus text once; the figure is the best of
``--repeat`` rounds of the mean time per text, measured in the process that runs the detector
(the best round, as ``timeit`` reports, because a busy machine only ever slows rounds down).
A 16,000-character note of prose (the content limit) is timed too: the slowest clean case.
This is a measurement, never a test.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.core.secret_corpus import CREDENTIALS, PROSE  # noqa: E402

from memquill.store import SecretScanner  # noqa: E402

# Runs inside the detect-secrets interpreter: reads the corpus on stdin, prints one JSON line.
_DETECT_SECRETS_CHILD = r"""
import json, sys, time
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import default_settings, get_settings

import statistics
texts, repeat, no_entropy = json.load(sys.stdin)
ENTROPY = ("Base64HighEntropyString", "HexHighEntropyString")

def flagged(text):
    return any(True for line in text.splitlines() for _ in scan_line(line))

with default_settings():
    if no_entropy:
        get_settings().disable_plugins(*ENTROPY)
    results = [flagged(text) for text in texts]
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            flagged(text)
        rounds.append((time.perf_counter() - start) / len(texts))
print(json.dumps({"flagged": results, "seconds": min(rounds)}))
"""


@dataclass(frozen=True)
class Row:
    name: str
    flagged: list[bool]
    micros: float

    def report(self, show_misses: bool) -> str:
        positives = self.flagged[: len(CREDENTIALS)]
        negatives = self.flagged[len(CREDENTIALS) :]
        caught = sum(positives)
        false = sum(negatives)
        line = (
            f"{self.name:<30} detected {caught:>3}/{len(CREDENTIALS)} "
            f"({100 * caught / len(CREDENTIALS):5.1f} %)   false positives {false:>3}/{len(PROSE)} "
            f"({100 * false / len(PROSE):5.1f} %)   {self.micros:8.1f} µs/check"
        )
        if not show_misses:
            return line
        misses = [shape for (shape, _), hit in zip(CREDENTIALS, positives, strict=True) if not hit]
        wrong = [text for text, hit in zip(PROSE, negatives, strict=True) if hit]
        details = [f"    missed: {shape}" for shape in misses]
        details += [f"    false positive: {text!r}" for text in wrong]
        return "\n".join([line, *details])


def memquill_row(texts: list[str], repeat: int) -> Row:
    scanner = SecretScanner()
    flagged = [bool(scanner.findings(text)) for text in texts]
    rounds: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            scanner.findings(text)
        rounds.append((time.perf_counter() - start) / len(texts))
    return Row("memquill (built-in detectors)", flagged, min(rounds) * 1e6)


def long_note_micros(repeat: int) -> tuple[int, float]:
    """One note of about 16,000 characters (the content limit) of prose: the slowest clean case."""
    note = "\n".join(PROSE)
    note = (note * (16_000 // len(note) + 1))[:16_000]
    scanner = SecretScanner()
    assert not scanner.findings(note)
    rounds: list[float] = []
    for _ in range(max(5, repeat // 10)):
        start = time.perf_counter()
        scanner.findings(note)
        rounds.append(time.perf_counter() - start)
    return len(note), min(rounds) * 1e6


def detect_secrets_row(python: str, texts: list[str], repeat: int, no_entropy: bool) -> Row:
    completed = subprocess.run(
        [python, "-c", _DETECT_SECRETS_CHILD],
        input=json.dumps([texts, repeat, no_entropy]),
        capture_output=True,
        text=True,
        check=True,
    )
    answer = json.loads(completed.stdout.strip().splitlines()[-1])
    name = "detect-secrets (no entropy)" if no_entropy else "detect-secrets (defaults)"
    return Row(name, answer["flagged"], answer["seconds"] * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="timed rounds over the corpus")
    parser.add_argument("--detect-secrets-python", metavar="PYTHON", help="compare with it")
    parser.add_argument("--show-misses", action="store_true", help="list misses and FPs")
    args = parser.parse_args()
    texts = [text for _, text in CREDENTIALS] + list(PROSE)
    print(f"python {platform.python_version()} on {platform.machine()} ({platform.system()})")
    print(f"corpus: {len(CREDENTIALS)} credentials, {len(PROSE)} prose notes")
    rows = [memquill_row(texts, args.repeat)]
    if args.detect_secrets_python:
        # Fewer rounds: the library is slower, and the mean settles quickly.
        rounds = max(1, args.repeat // 20)
        for no_entropy in (False, True):
            rows.append(detect_secrets_row(args.detect_secrets_python, texts, rounds, no_entropy))
    for row in rows:
        print(row.report(args.show_misses))
    size, micros = long_note_micros(args.repeat)
    print(f"memquill, one {size:,}-character prose note: {micros:,.0f} µs/check")
    held_out(args.show_misses)


def held_out(show: bool) -> None:
    """Prose the detectors were not written against: every paragraph of README.md and docs/."""
    scanner = SecretScanner()
    paragraphs = [
        (path.relative_to(ROOT), paragraph)
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for paragraph in re.split(r"\n\s*\n", path.read_text("utf-8"))
        if paragraph.strip()
    ]
    flagged = [(path, text) for path, text in paragraphs if scanner.findings(text)]
    print(f"held out: {len(flagged)} of {len(paragraphs)} paragraphs of README.md, docs/ flagged")
    for path, text in flagged if show else ():
        print(f"    {path}: {text[:120]!r}")


if __name__ == "__main__":
    main()
