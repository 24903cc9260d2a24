"""``plugins``: what the installed plugins contribute, and which ones failed to load."""

from __future__ import annotations

import argparse
from typing import Any

from memquill.cli.context import Context, add_common
from memquill.plugins import PluginReport, get_plugin_manager, plugin_report

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add this module's subcommands to ``memquill``."""
    plugins = subparsers.add_parser(
        "plugins",
        help="list installed plugins, their adapters and secret detectors, and load failures",
        description="List installed plugins, adapters and secret detectors. Exits 1 when a "
        "plugin failed to load or register (MEMQUILL_DISABLE_PLUGIN_AUTOLOAD=1 skips plugins).",
    )
    plugins.set_defaults(handler=_plugins)
    add_common(plugins)


def _plugins(args: argparse.Namespace, context: Context) -> int:
    report = plugin_report(get_plugin_manager())
    context.emit(_text(report), _json(report))
    # A broken plugin is a problem worth a status (like ``doctor``), though the listing ran.
    return 1 if report.failures else 0


def _text(report: PluginReport) -> str:
    lines = [f"plugins ({len(report.plugins)}):"]
    for plugin in report.plugins:
        origin = " ".join(part for part in (plugin.distribution, plugin.version) if part)
        lines.append(f"  {plugin.name}" + (f"  ({origin})" if origin else ""))
    lines.append(f"adapters ({len(report.adapters)}):")
    for entry in report.adapters:
        adapter = entry.adapter
        lines.append(
            f"  {adapter.name}  framework {adapter.framework}, "
            f"distribution {adapter.distribution} (plugin {entry.plugin})"
        )
    if not report.adapters:
        lines.append("  (none installed)")
    if report.integrations:
        lines.append(f"integrations ({len(report.integrations)}):")
    for registered in report.integrations:
        spec = registered.integration
        missing = spec.missing()
        state = (
            f"not installed: needs {', '.join(missing)} (pip install '{spec.distribution}')"
            if missing
            else "available"
        )
        lines.append(
            f"  {spec.name}  {spec.framework} {spec.entry}, distribution {spec.distribution} "
            f"(plugin {registered.plugin}): {state}"
        )
    lines.append(f"secret detectors ({len(report.detectors)}):")
    lines.extend(f"  {entry.detector.name}  (plugin {entry.plugin})" for entry in report.detectors)
    if report.failures:
        lines.append(f"failures ({len(report.failures)}):")
        lines.extend(f"  {failure.plugin}: {failure.message}" for failure in report.failures)
    return "\n".join(lines)


def _json(report: PluginReport) -> dict[str, object]:
    return {
        "plugins": [
            {"name": p.name, "distribution": p.distribution, "version": p.version}
            for p in report.plugins
        ],
        "adapters": [
            {
                "name": entry.adapter.name,
                "framework": entry.adapter.framework,
                "distribution": entry.adapter.distribution,
                "plugin": entry.plugin,
            }
            for entry in report.adapters
        ],
        "integrations": [
            {
                "name": entry.integration.name,
                "framework": entry.integration.framework,
                "distribution": entry.integration.distribution,
                "entry": entry.integration.entry,
                "plugin": entry.plugin,
                "missing": list(entry.integration.missing()),
            }
            for entry in report.integrations
        ],
        "secret_detectors": [
            {"name": entry.detector.name, "plugin": entry.plugin} for entry in report.detectors
        ],
        "failures": [{"plugin": f.plugin, "message": f.message} for f in report.failures],
    }
