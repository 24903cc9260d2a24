"""``memquill plugins`` lists the LangGraph store, available or not, without importing it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from memquill import hookimpl
from memquill.cli.plugins import _text
from memquill.plugins import IntegrationSpec, get_plugin_manager, plugin_report
from memquill.plugins._manager import PluginReport, RegisteredIntegration
from memquill_langchain.plugin import STORE

RUN_CLI = "import sys; from memquill.cli import main; sys.exit(main(sys.argv[1:]))"


def test_memquill_plugins_lists_the_store_as_available() -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, "plugins", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["integrations"] == [
        {
            "name": "langgraph-store",
            "framework": "LangGraph BaseStore",
            "distribution": "memquill-langchain[langgraph]",
            "entry": "memquill_langchain.store:MemquillStore",
            "plugin": "langchain",
            "missing": [],
        }
    ]
    module, name = STORE.entry.split(":")
    assert getattr(__import__(module, fromlist=[name]), name).__name__ == "MemquillStore"


def test_listing_plugins_imports_nothing_of_langgraph() -> None:
    probe = (
        "import sys\n"
        "from memquill.plugins import get_plugin_manager, plugin_report\n"
        "report = plugin_report(get_plugin_manager())\n"
        "print([entry.integration.name for entry in report.integrations])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines() == ["['langgraph-store']", "[]"]


def test_a_store_whose_framework_is_missing_says_what_to_install() -> None:
    spec = IntegrationSpec("x-store", "X", "memquill-x[x]", "memquill_x:Store", ("no-such-dist-q",))
    assert spec.missing() == ("no-such-dist-q",)
    report = PluginReport((), (), (), (), (RegisteredIntegration("x", spec),))
    assert (
        "  x-store  X memquill_x:Store, distribution memquill-x[x] (plugin x): "
        "not installed: needs no-such-dist-q (pip install 'memquill-x[x]')"
    ) in _text(report).splitlines()


class _Twice:
    @hookimpl
    def memquill_register_integrations(self, register: Callable[[object], None]) -> None:
        register(STORE)
        register("not a spec")


def test_a_duplicate_or_a_wrong_registration_is_a_failure_of_its_plugin() -> None:
    manager = get_plugin_manager()
    manager.register(_Twice(), name="twice")
    report = plugin_report(manager)
    # Plugins registered later are asked first (pluggy's order): this one keeps the name.
    assert [entry.plugin for entry in report.integrations] == ["twice"]
    messages = {(f.plugin, f.message) for f in report.failures}
    duplicate = "integration 'langgraph-store' is already registered by 'twice'; ignored"
    assert ("langchain", duplicate) in messages
    assert ("twice", "registered str, not an IntegrationSpec") in messages


WITHOUT_LANGGRAPH = """
import importlib.abc
import sys


class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "langgraph":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Missing())
import memquill_langchain
from memquill_langchain import MemquillRetriever, MemquillToolkit
from memquill_langchain.plugin import STORE

print("imported", MemquillToolkit.__name__, MemquillRetriever.__name__, STORE.name)
try:
    memquill_langchain.MemquillStore
except ImportError as error:
    print(error)
"""


def test_the_package_imports_without_langgraph_and_the_store_says_what_to_install() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_LANGGRAPH],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines() == [
        "imported MemquillToolkit MemquillRetriever langgraph-store",
        "MemquillStore needs LangGraph: pip install 'memquill-langchain[langgraph]'",
    ]


def test_the_hook_example_in_the_plugin_docs_is_the_plugins_own() -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "plugins.md").read_text("utf-8")
    section = page.split("\n## memquill_register_integrations(", 1)[1].split("\n## ", 1)[0]
    example, shown = re.findall(r"```(?:python|text)\n(.*?)```", section, re.DOTALL)[:2]
    scope: dict[str, object] = {}
    exec(example, scope)
    assert scope["STORE"] == STORE
    registered: list[object] = []
    hook = scope["memquill_register_integrations"]
    assert callable(hook)
    hook(registered.append)
    assert registered == [STORE]
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, "plugins"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert shown.splitlines()[1] in done.stdout.splitlines()
