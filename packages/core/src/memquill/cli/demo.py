"""``memquill demo``: run the scripted scenario through the core and every installed adapter."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from memquill.cli.context import Context, add_common, counted
from memquill.errors import InvalidInputError
from memquill.plugins import DISABLE_AUTOLOAD_ENV

if TYPE_CHECKING:
    from memquill.plugins import PluginReport
    from memquill.testing import AdapterRun

__all__ = ["register"]

_INDENT = "    "
# The adapters memquill's own distributions ship, so a missing one can be named for install.
_FIRST_PARTY: Final = {
    "adk": "memquill-adk",
    "anthropic": "memquill-anthropic",
    "langchain": "memquill-langchain",
    "llamaindex": "memquill-llamaindex",
    "mcp": "memquill-mcp",
    "mcp-stdio": "memquill-mcp",
    "openai-agents": "memquill-openai-agents",
    "pydantic-ai": "memquill-pydantic-ai",
}


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
        _require_installed(args.adapter, report)
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


def _require_installed(wanted: list[str], report: PluginReport) -> None:
    """Refuse names no installed plugin registers, saying how to install them.

    Raises:
        InvalidInputError: an adapter asked for is not installed.
    """
    installed = [entry.adapter.name for entry in report.adapters]
    missing = [name for name in dict.fromkeys(wanted) if name not in {"core", *installed}]
    if not missing:
        return
    names = ", ".join(repr(name) for name in missing)
    verb = "is" if len(missing) == 1 else "are"
    lines = [
        f"adapter{'s' if len(missing) > 1 else ''} {names} {verb} not installed "
        f"(installed: {', '.join(installed) or 'none'})."
    ]
    hints = sorted({_FIRST_PARTY[name] for name in missing if name in _FIRST_PARTY})
    if hints:
        lines.append(f"Install with: pip install {' '.join(hints)}")
    if any(name not in _FIRST_PARTY for name in missing):
        lines.append(
            "memquill ships the adk, anthropic, langchain, llamaindex, mcp, mcp-stdio, "
            "openai-agents and pydantic-ai adapters; "
            "others come from third-party plugins (`memquill plugins` lists what is installed)."
        )
    if os.environ.get(DISABLE_AUTOLOAD_ENV):
        lines.append(f"{DISABLE_AUTOLOAD_ENV} is set: installed plugins may not have loaded.")
    lines.extend(f"Plugin {f.plugin} failed to load: {f.message}" for f in report.failures)
    raise InvalidInputError(" ".join(lines))


def _as_text(
    runs: list[AdapterRun], verdicts: dict[str, bool], ok: bool, root: Path, *, kept: bool
) -> str:
    where = f"in {root}" if kept else "in a temporary workspace (removed afterwards)"
    adapters = _count(len(runs) - 1, "adapter") if len(runs) > 1 else "no adapter"
    lines = [f"memquill demo: one scenario, the core and {adapters}, {where}", ""]
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
    lines.append(f"  {'core'.ljust(width)}  reference ({counted(len(core.calls), 'call')})")
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
        lines.append(f"Parity: {_verdict(len(runs) - 1)}")
    else:
        lines.append("Parity: FAILED (see above).")
    return "\n".join(lines) + "\n"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _verdict(adapters: int) -> str:
    if adapters == 0:
        return "no adapter is installed; the core ran the scenario on its own."
    if adapters == 1:
        return "the adapter returned exactly the core's results."
    return f"all {adapters} adapters returned exactly the core's results."


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
