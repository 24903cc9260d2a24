"""Review rules that ruff enforces, each shown to be in force where it applies.

``ruff check`` runs in CI over the whole tree; these tests prove the configuration still says
what the rules mean (a rule dropped from ``pyproject.toml`` would otherwise pass in silence):
JSON is parsed through the one bounded parser (``memquill.jsondoc``), and every public name in
``packages/`` has a docstring in the house form.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = "packages/core/src/memquill"
RUFF = (sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise")


def _findings(path: str, source: str) -> list[str]:
    """The rule codes ruff reports for ``source`` as if it were the file at ``path``."""
    done = subprocess.run(
        [*RUFF, "--stdin-filename", path, "-"],
        input=source,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return sorted(line.split()[1] for line in done.stdout.splitlines() if f"{path}:" in line)


UNBOUNDED = '"""Probe."""\n\nimport json\n\nVALUE = json.loads("[1]")\n'
FROM_IMPORT = '"""Probe."""\n\nfrom json import load\n\nREADER = load\n'


def test_json_is_parsed_only_through_the_bounded_parser_in_packages() -> None:
    assert _findings(f"{CORE}/_probe.py", UNBOUNDED) == ["TID251"]
    assert _findings("packages/mcp_plugin/src/memquill_mcp/_probe.py", FROM_IMPORT) == ["TID251"]
    assert _findings(f"{CORE}/jsondoc.py", UNBOUNDED) == []
    assert _findings("tests/core/test_probe.py", UNBOUNDED) == []


UNDOCUMENTED = '"""Probe."""\n\n\ndef visible(count: int) -> int:\n    return count\n'
HOUSE_FORM = (
    '"""Probe."""\n\n\ndef visible(count: int) -> int:\n'
    '    """memquill\'s probe: a summary sentence that runs on over a second line, closing\n'
    '    quotes on its last line, as the house writes them."""\n    return count\n'
)
ARGS_MISSING = (
    '"""Probe."""\n\n\ndef visible(count: int, limit: int) -> int:\n'
    '    """The smaller of two.\n\n    Args:\n        count: how many.\n    """\n'
    "    return min(count, limit)\n"
)


def test_public_names_in_packages_have_docstrings_in_the_house_form() -> None:
    assert _findings(f"{CORE}/probe.py", UNDOCUMENTED) == ["D103"]
    assert _findings(f"{CORE}/probe.py", HOUSE_FORM) == []
    assert _findings(f"{CORE}/probe.py", ARGS_MISSING) == ["D417"]
    assert _findings("tests/core/test_probe.py", UNDOCUMENTED) == []
