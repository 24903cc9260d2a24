"""Framework integrations that are not tool adapters: what ``memquill plugins`` lists beside
the adapters (a LangGraph store, say), and whether what each needs is installed.

An :class:`IntegrationSpec` names the object and the distributions it needs; nothing of it is
imported to list it (installed distributions are looked up in their metadata).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IntegrationSpec:
    """An installed plugin's integration with a framework, other than its tools.

    Attributes:
        name: a short unique key, such as ``"langgraph-store"``.
        framework: what it plugs into, for people (``"LangGraph BaseStore"``).
        distribution: what to install for it (``"memquill-langchain[langgraph]"``).
        entry: where it is, ``module:object`` (``"memquill_langchain.store:MemquillStore"``).
        requires: the distributions it needs besides the plugin's own (``("langgraph",)``).
    """

    name: str
    framework: str
    distribution: str
    entry: str
    requires: tuple[str, ...] = ()

    def missing(self) -> tuple[str, ...]:
        """The required distributions that are not installed (none: it is available)."""
        absent: list[str] = []
        for requirement in self.requires:
            try:
                importlib.metadata.version(requirement)
            except importlib.metadata.PackageNotFoundError:
                absent.append(requirement)
        return tuple(absent)
