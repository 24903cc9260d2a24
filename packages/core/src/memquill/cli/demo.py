"""``memquill demo``: run the scripted scenario through the core and every installed adapter."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memquill.cli.context import Context, add_common

if TYPE_CHECKING:
    from memquill.testing import AdapterRun

__all__ = ["register"]

_INDENT = "    "


def register(subparsers: Any) -> None:  # argparse keeps its subparsers type private
    """Add ``demo`` to ``memquill``."""
    demo = subparsers.add_parser(
        "demo",
        help="remember, search, read, correct and forget a fact through every installed adapter",
    )
    demo.add_argument(
        "--adapter",
        action="append",
        metavar="NAME",
        help="only this adapter (repeatable; default: every installed adapter)",
    )
    demo.add_argument(
        "--keep", action="store_true", help="keep the temporary workspace and print where it is"
    )
    add_common(demo)  # --workspace DIR: run there (a sub-folder per adapter), not in a temp dir
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace, context: Context) -> int:
    # Imported here: loading every adapter is the demo's job, not the CLI's start-up cost.
    from memquill.plugins import get_plugin_manager, plugin_report
    from memquill.testing import SCENARIO, core_spec, run_adapter

    report = plugin_report(get_plugin_manager())
    specs = [core_spec(), *(entry.adapter for entry in report.adapters)]
    if args.adapter:
        specs = [spec for spec in specs if spec.name == "core" or spec.name in args.adapter]
    base = None if context.workspace_is_default else context.workspace
    root = base or Path(tempfile.mkdtemp(prefix="memquill-demo-"))
    runs: list[AdapterRun] = []
    try:
        for spec in specs:
            runs.append(run_adapter(spec.name, spec.open, root / spec.name))
    finally:
        if base is None and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    reference = runs[0].normalised()
    verdicts = {
        run.adapter: run.error is None and run.normalised() == reference for run in runs[1:]
    }
    core_ok = runs[0].error is None and len(runs[0].calls) == len(SCENARIO)
    ok = core_ok and all(verdicts.values())
    if context.as_json:
        context.out.write(json.dumps(_as_json(runs, verdicts, ok), ensure_ascii=False, indent=2))
        context.out.write("\n")
    else:
        context.out.write(_as_text(runs, verdicts, ok, root, kept=base is not None or args.keep))
        for failure in report.failures:
            context.err.write(f"warning: plugin {failure.plugin}: {failure.message}\n")
    return 0 if ok else 1


def _as_text(
    runs: list[AdapterRun], verdicts: dict[str, bool], ok: bool, root: Path, *, kept: bool
) -> str:
    where = f"in {root}" if kept else "in a temporary workspace (removed afterwards)"
    lines = [f"memquill demo: one scenario, {len(runs)} adapters, {where}", ""]
    core = runs[0]
    for step, arguments, result in core.calls:
        flag = "  [error]" if result.is_error else ""
        lines.append(f"{step.tool} {json.dumps(arguments, ensure_ascii=False)}{flag}")
        lines.extend(textwrap.indent(result.text, _INDENT).splitlines() or [_INDENT])
        lines.append("")
    if core.error:
        lines.append(f"core failed: {core.error}")
    lines.append("Every adapter ran the same six calls in its own fresh workspace:")
    width = max(len(run.adapter) for run in runs)
    lines.append(f"  {'core'.ljust(width)}  reference ({len(core.calls)} calls)")
    for run in runs[1:]:
        if run.error is not None:
            status = f"FAILED: {run.error}"
        elif verdicts[run.adapter]:
            status = "identical to the core"
        else:
            status = "DIFFERS from the core: " + _first_difference(core, run)
        lines.append(f"  {run.adapter.ljust(width)}  {status}")
    lines.append("")
    if ok:
        lines.append(f"Parity: all {len(runs) - 1} adapters returned exactly the core's results.")
    else:
        lines.append("Parity: FAILED (see above).")
    return "\n".join(lines) + "\n"


def _first_difference(core: AdapterRun, run: AdapterRun) -> str:
    for index, (ours, theirs) in enumerate(zip(core.normalised(), run.normalised(), strict=False)):
        if ours != theirs:
            return f"step {index + 1} ({core.calls[index][0].tool})"
    return "a different number of calls"


def _as_json(runs: list[AdapterRun], verdicts: dict[str, bool], ok: bool) -> dict[str, Any]:
    return {
        "ok": ok,
        "adapters": [
            {
                "name": run.adapter,
                "identical_to_core": True if run.adapter == "core" else verdicts[run.adapter],
                "error": run.error,
                "calls": [
                    {
                        "tool": step.tool,
                        "arguments": arguments,
                        "text": result.text,
                        "is_error": result.is_error,
                    }
                    for step, arguments, result in run.calls
                ],
            }
            for run in runs
        ],
    }
