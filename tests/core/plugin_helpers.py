"""Helpers for the plugin tests: a throwaway plugin distribution on a temporary path entry.

``importlib.metadata`` finds ``*.dist-info/entry_points.txt`` in any ``sys.path`` entry, so a
folder holding a dist-info and a module is an installed plugin for as long as it is on the path
(or on ``PYTHONPATH`` of a child process). Nothing is built or installed.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

DEMO_DISTRIBUTION = "memquill-tmp-demo"
DEMO_VERSION = "1.0"

GOOD_PLUGIN = """
import re

from memquill.plugins import AdapterSpec, RegexDetector
from memquill import hookimpl


def _open(session):
    raise NotImplementedError("listing only")


@hookimpl
def memquill_register_adapters(register):
    register(AdapterSpec("tmp-demo", "Demo framework", "memquill-tmp-demo", _open))


@hookimpl
def memquill_register_secret_detectors(register):
    register(RegexDetector("tmp_demo_key", re.compile(r"\\bdemo_key_[0-9]{6}\\b")))
"""

BROKEN_PLUGIN = """
import memquill_tmp_no_such_dependency  # fails, as a plugin with a missing dependency does
"""

UNKNOWN_HOOK_PLUGIN = """
from memquill import hookimpl


@hookimpl
def memquill_register_time_machines(register):
    register("never called")
"""

DEMO_MODULES: Mapping[str, str] = {
    "memquill_tmp_good": GOOD_PLUGIN,
    "memquill_tmp_broken": BROKEN_PLUGIN,
    "memquill_tmp_unknown_hook": UNKNOWN_HOOK_PLUGIN,
}
"""Module name → source of the demo distribution's plugins."""

DEMO_ENTRY_POINTS: Mapping[str, str] = {
    "tmp-demo": "memquill_tmp_good",
    "tmp-broken": "memquill_tmp_broken",
    "tmp-unknown-hook": "memquill_tmp_unknown_hook",
}
"""Entry-point name → module, in the ``memquill`` group."""


def write_distribution(
    site: Path,
    modules: Mapping[str, str] = DEMO_MODULES,
    entry_points: Mapping[str, str] = DEMO_ENTRY_POINTS,
    *,
    name: str = DEMO_DISTRIBUTION,
    version: str = DEMO_VERSION,
) -> Path:
    """Write modules and a dist-info declaring them as ``memquill`` plugins into ``site``."""
    site.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = ["[memquill]", *(f"{ep} = {target}" for ep, target in entry_points.items())]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return site
