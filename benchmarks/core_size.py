"""The core's size: files and lines per part, and names per facade (issue 37's measure).

    uv run python benchmarks/core_size.py [TREE ...]

Each TREE is a checkout (default: this one); several are printed side by side, so a before
and an after (``git worktree add /tmp/before <rev>``) read as one table. Names per facade are
counted for this checkout only (they need its packages importable).
"""

from __future__ import annotations

import argparse
import importlib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).parents[1]


def facades(tree: Path) -> list[str]:
    """``memquill``, its subpackages and the adapters' packages: every package with a facade."""
    found: list[str] = []
    for source in sorted(tree.glob("packages/*/src")):
        for init in sorted(source.glob("*/__init__.py")) + sorted(
            source.glob("memquill/*/__init__.py")
        ):
            found.append(".".join(init.parent.relative_to(source).parts))
    return sorted(set(found))


def parts(tree: Path) -> tuple[Counter[str], Counter[str]]:
    """Files and lines per part of ``tree``'s core (``(top)``: modules beside ``__init__``)."""
    root = tree / "packages/core/src/memquill"
    files: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    for path in root.rglob("*.py"):
        relative = path.relative_to(root).parts
        part = relative[0] if len(relative) > 1 else "(top)"
        files[part] += 1
        lines[part] += len(path.read_text(encoding="utf-8").splitlines())
    return files, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("trees", nargs="*", type=Path, default=[ROOT])
    trees: list[Path] = parser.parse_args().trees
    measured = [parts(tree) for tree in trees]
    names = sorted({part for files, _ in measured for part in files})
    print("part".ljust(12) + "".join(f"{str(t)[-28:]:>30}" for t in trees))
    for part in [*names, "total"]:
        cells = []
        for files, lines in measured:
            f = sum(files.values()) if part == "total" else files[part]
            n = sum(lines.values()) if part == "total" else lines[part]
            cells.append(f"{f:>6} files {n:>8,} lines" if f else f"{'—':>30}")
        print(part.ljust(12) + "".join(f"{cell:>30}" for cell in cells))
    print()
    total = 0
    for facade in facades(ROOT):
        exported: list[str] | None = getattr(importlib.import_module(facade), "__all__", None)
        if exported is None:
            continue  # a package without a public list (the CLI, the page)
        count = len(exported)
        total += count
        print(f"{facade:<24}{count:>5}")
    print(f"{'names in all':<24}{total:>5}")


if __name__ == "__main__":
    main()
