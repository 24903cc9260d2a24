"""Build-time metadata: the adapter's dependencies, with ``memquill`` pinned to this version.

memquill and its adapters are released together under one version, written once as
``memquill.__version__`` (``[tool.hatch.version]`` reads it). This hook adds the dependency
``memquill==<that version>`` to the ones listed under ``[tool.hatch.metadata.hooks.custom]``, so
an adapter always runs on the core it was built and tested with. A wheel built from the sdist
takes its version and dependencies from the sdist's ``PKG-INFO`` instead; the hook is not needed
then. The adapters carry identical copies of this file (a test checks it).
"""

from __future__ import annotations

from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface


class PinCoreVersion(MetadataHookInterface):
    """Sets ``dependencies`` to ``memquill==<version>`` plus the configured ones."""

    def update(self, metadata: dict[str, Any]) -> None:
        """Fill the dynamic ``dependencies`` field."""
        listed: list[str] = list(self.config.get("dependencies", []))
        metadata["dependencies"] = [f"memquill=={metadata['version']}", *listed]
