"""What a lazy facade serves, read from its source: the imports under ``if TYPE_CHECKING:``.

A facade (:func:`memquill.lazy.lazy_exports`) writes each name once in that block, plainly when
it is public (and again in ``__all__``), ``Name as Name`` when it is the core's own; the tests
read the block with :mod:`ast`, the runtime from the compiled code, and the two must agree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
CALL = re.compile(r"lazy_exports\(\s*__name__")


class Served(NamedTuple):
    """One name a facade imports under ``if TYPE_CHECKING:``."""

    module: str
    public: bool  # imported plainly (``Name``), not re-exported as ``Name as Name``
    renamed: bool  # ``Name as Other``: the runtime does not serve it


def lazy_facades() -> dict[str, Path]:
    """Every package ``__init__`` under ``packages/`` that calls ``lazy_exports``, by name."""
    found: dict[str, Path] = {}
    for source in sorted(ROOT.glob("packages/*/src")):
        for init in sorted(source.rglob("__init__.py")):
            if CALL.search(init.read_text(encoding="utf-8")):
                found[".".join(init.parent.relative_to(source).parts)] = init
    return found


def type_checking_imports(path: Path) -> dict[str, Served]:
    """The names ``path`` imports under its top-level ``if TYPE_CHECKING:`` blocks."""
    served: dict[str, Served] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")):
            continue
        for statement in node.body:
            assert isinstance(statement, ast.ImportFrom), f"{path}: {ast.unparse(statement)}"
            assert statement.module and statement.level == 0, f"{path}: a relative import"
            for alias in statement.names:
                served[alias.name] = Served(
                    statement.module,
                    public=alias.asname is None,
                    renamed=alias.asname not in (None, alias.name),
                )
    return served
