"""Regenerate the parity cases' expected texts from the core, never by hand.

Usage::

    uv run python -m memquill.testing.regenerate          # rewrite changed expected texts
    uv run python -m memquill.testing.regenerate --check  # only report; exit 1 if any differ

Every case runs through the core harness (as the parity suite does), and each step that states
an exact ``text`` gets the core's normalised text. Only the body of that ``text = \"\"\"…\"\"\"``
string changes in ``cases/*.toml``; comments, arguments and every other key stay as written,
and steps checked with ``contains``/``absent`` are left alone. Review the diff (``git diff``)
before committing it: a changed expected text is a changed contract.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from memquill.testing._cases import Case, load_cases
from memquill.testing._runner import CoreHarness, run_case

__all__ = ["main", "regenerate_file", "toml_text"]

CASES_DIR: Final = Path(__file__).with_name("cases")
_STEP_HEADER: Final = "[[case.step]]"
_CASE_HEADER: Final = "[[case]]"


def toml_text(value: str) -> str:
    """``value`` as a TOML multi-line basic string body (between the ``\"\"\"`` delimiters)."""
    out: list[str] = []
    for char in value:
        if char == "\\":
            out.append("\\\\")
        elif char in "\n\t":
            out.append(char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    body = "".join(out).replace('"""', '""\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    return body


def _expected_texts(cases: Sequence[Case], scratch: Path) -> list[list[str | None]]:
    """Per case (in file order), per step, the core's normalised text (``None``: no tool)."""
    texts: list[list[str | None]] = []
    for number, case in enumerate(cases):
        outcomes = iter(run_case(case, CoreHarness, scratch / f"case-{number}", store="file"))
        texts.append([None if step.tool is None else next(outcomes).text for step in case.steps])
    return texts


def regenerate_file(source: str, texts: list[list[str | None]]) -> str:
    """``source`` with the ``text`` of every step that has one replaced, in order."""
    parts: list[str] = []
    position = 0
    case_index = -1
    step_index = -1
    for match in re.finditer(r"^\[\[case(?:\.step)?\]\]$|^text = \"\"\"\n?", source, re.MULTILINE):
        token = match.group()
        if token == _CASE_HEADER:
            case_index, step_index = case_index + 1, -1
            continue
        if token == _STEP_HEADER:
            step_index += 1
            continue
        end = _closing(source, match.end())
        new = texts[case_index][step_index]
        if new is None:  # pragma: no cover - an action step has no text to compare
            continue
        parts.append(source[position : match.start()])
        parts.append('text = """\n' + toml_text(new) + '"""')
        position = end + 3
    parts.append(source[position:])
    return "".join(parts)


def _closing(source: str, start: int) -> int:
    """Offset of the ``\"\"\"`` that closes the string starting at ``start``."""
    index = start
    while True:
        index = source.index('"""', index)
        backslashes = len(source[:index]) - len(source[:index].rstrip("\\"))
        if backslashes % 2 == 0:
            # Up to two quotes may end the value right before the delimiter.
            while source.startswith('"', index + 3):
                index += 1
            return index
        index += 1


def _verify(updated: str, cases: Sequence[Case], texts: list[list[str | None]], name: str) -> None:
    """The rewritten file parses back to exactly the core's texts."""
    parsed = tomllib.loads(updated).get("case", [])
    for raw, case, expected in zip(parsed, cases, texts, strict=True):
        for step, text in zip(raw["step"], expected, strict=True):
            if "text" in step and step["text"] != text:
                raise AssertionError(f"{name}: {case.id}: the rewritten text does not parse back")


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite each parity case file's expected texts from a run of the core, printing the
    diff (``--check``: print it and write nothing); the exit status is 1 when ``--check``
    finds a difference."""
    parser = argparse.ArgumentParser(description="Regenerate the parity expected texts.")
    parser.add_argument("--check", action="store_true", help="report differences, write nothing")
    args = parser.parse_args(argv)
    cases = load_cases()
    changed = 0
    with tempfile.TemporaryDirectory(prefix="memquill-parity-") as scratch:
        for path in sorted(CASES_DIR.glob("*.toml")):
            if path.name == "fixtures.toml":
                continue
            source = path.read_text("utf-8")
            ids = [raw["id"] for raw in tomllib.loads(source).get("case", [])]
            own = [case for case in cases if case.id in ids]
            texts = _expected_texts(own, Path(scratch) / path.stem)
            updated = regenerate_file(source, texts)
            _verify(updated, own, texts, path.name)
            if updated == source:
                continue
            changed += 1
            diff = difflib.unified_diff(
                source.splitlines(), updated.splitlines(), path.name, path.name, lineterm=""
            )
            print("\n".join(diff))
            if not args.check:
                path.write_text(updated, "utf-8")
    verb = "differ" if args.check else "rewritten"
    print(f"{changed} case file(s) {verb}", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
