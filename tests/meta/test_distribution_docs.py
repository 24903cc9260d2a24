"""The docs count and name every distribution the repository builds.

The list comes from ``packages/*/pyproject.toml``, so a new distribution fails here until the
README (Install and Development), CONTRIBUTING and the CHANGELOG say it.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
# "the five wheels", "all five distributions", "five sdists", "the five packages (editable)".
COUNTED = re.compile(rf"\b({'|'.join(NUMBERS)}|\d+) (wheels|distributions|packages|sdists)\b")


def distributions() -> dict[str, str]:
    """Each distribution's name and its folder under ``packages/``."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        found[tomllib.loads(path.read_text("utf-8"))["project"]["name"]] = path.parent.name
    return found


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def test_there_are_distributions() -> None:
    assert "memquill" in distributions() and len(distributions()) >= 5


@pytest.mark.parametrize("doc", ["README.md", "CHANGELOG.md", "CONTRIBUTING.md"])
def test_every_count_of_distributions_is_right(doc: str) -> None:
    count = len(distributions())
    text = (ROOT / doc).read_text("utf-8")
    for match in COUNTED.finditer(text):
        said = match.group(1)
        number = int(said) if said.isdigit() else NUMBERS.index(said)
        line = text.count("\n", 0, match.start()) + 1
        assert number == count, f"{doc}:{line} says {match.group(0)!r}; there are {count}"


@pytest.mark.parametrize("heading", ["Install", "Development"])
def test_the_readme_lists_every_distribution(heading: str) -> None:
    section = _section((ROOT / "README.md").read_text("utf-8"), heading)
    missing = [name for name in distributions() if f"`{name}`" not in section]
    assert not missing, f"README's {heading} leaves out {missing}"


def test_the_development_list_names_every_folder() -> None:
    section = _section((ROOT / "README.md").read_text("utf-8"), "Development")
    missing = [f for f in distributions().values() if f"`packages/{f}`" not in section]
    assert not missing, f"README's Development leaves out {missing}"


def test_the_changelog_names_every_distribution() -> None:
    head = (ROOT / "CHANGELOG.md").read_text("utf-8").split("\n## ", 1)[0]
    missing = [name for name in distributions() if name not in head]
    assert not missing, f"the CHANGELOG's opening leaves out {missing}"
