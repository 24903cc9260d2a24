"""The repository's ``Dockerfile`` read as instructions, and the container commands its docs give.

Only what the tests need: instructions with their continuation lines joined and comments
dropped, grouped by build stage; ``ENTRYPOINT`` and ``VOLUME`` in their JSON form; and the
``docker`` commands of ``docs/adapters/mcp.md`` ("In a container") as argument lists.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.doc_blocks import ROOT, Block, blocks

DOCKERFILE = ROOT / "Dockerfile"
DOC = "docs/adapters/mcp.md"
SECTION = "In a container"


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction: its keyword (upper case) and the rest of it, continuations joined."""

    keyword: str
    value: str

    def json(self) -> list[str]:
        """The exec (JSON array) form's items."""
        parsed = json.loads(self.value)
        assert isinstance(parsed, list) and all(isinstance(item, str) for item in parsed)
        return [str(item) for item in parsed]


def stages(path: Path = DOCKERFILE) -> list[list[Instruction]]:
    """The instructions of each stage, in order (a stage starts at ``FROM``)."""
    found: list[list[Instruction]] = []
    pending = ""
    for raw in path.read_text("utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        pending = f"{pending} {line}" if pending else line
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        keyword, _, value = pending.partition(" ")
        pending = ""
        if keyword.upper() == "FROM":
            found.append([])
        assert found, "the Dockerfile must start with FROM"
        found[-1].append(Instruction(keyword.upper(), value.strip()))
    return found


def only(stage: list[Instruction], keyword: str) -> Instruction:
    """The one ``keyword`` instruction of ``stage``."""
    picked = [i for i in stage if i.keyword == keyword]
    assert len(picked) == 1, f"expected one {keyword}, found {len(picked)}"
    return picked[0]


def env(stage: list[Instruction]) -> dict[str, str]:
    """The ``ENV`` settings of ``stage`` (``NAME=value`` form; ``$PATH`` left as written)."""
    settings: dict[str, str] = {}
    for instruction in stage:
        if instruction.keyword == "ENV":
            for item in shlex.split(instruction.value):
                name, _, value = item.partition("=")
                settings[name] = value
    return settings


def doc_blocks() -> list[Block]:
    """The shell blocks of the MCP page's container section."""
    return [b for b in blocks(DOC) if b.heading == SECTION and b.lang == "sh"]


def commands(block: Block) -> list[list[str]]:
    """The block's commands as argument lists (continuations joined, comments dropped)."""
    return [
        shlex.split(line, comments=True)
        for line in block.text.replace("\\\n", " ").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def docker_runs() -> list[list[str]]:
    """Every ``docker run`` command of the container section."""
    return [c for b in doc_blocks() for c in commands(b) if c[:2] == ["docker", "run"]]


def image_arguments(run: list[str], image: str) -> list[str]:
    """What a ``docker run`` passes after the image name: arguments added to the entry point."""
    return run[run.index(image) + 1 :]
