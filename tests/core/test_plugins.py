"""The plugin manager: built-ins as a plugin, per-plugin attribution, entry points, failures."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pluggy
import pytest
from tests.core.plugin_helpers import DEMO_DISTRIBUTION, DEMO_VERSION, write_distribution
from tests.core.store_helpers import manual

from memquill.errors import SecretError
from memquill.plugins import hookspecs
from memquill.plugins._adapters import AdapterHarness, AdapterSpec
from memquill.plugins._manager import (
    DISABLE_AUTOLOAD_ENV,
    PLUGIN_NAME as BUILTIN,
    MemquillPluginManager,
    get_plugin_manager,
    plugin_report,
    registered_adapters,
    secret_scanner,
)
from memquill.plugins.hookspecs import hookimpl
from memquill.store._secrets import BUILTIN_DETECTORS, RegexDetector, SecretDetector
from memquill.store._store import RecordStore
from memquill.tools._session import MemorySession

HOOKS = (
    "memquill_register_adapters",
    "memquill_register_integrations",
    "memquill_register_secret_detectors",
    "memquill_register_text_models",
)
"""Contribution hooks: each takes one ``register`` callback."""
NOTIFICATIONS = ("memquill_report_event",)
"""Notification hooks: each takes the one thing it tells about."""


def _never_open(session: MemorySession) -> AdapterHarness:
    raise NotImplementedError


def _ignore(item: object) -> None:
    pass


def spec(name: str, distribution: str = "tests") -> AdapterSpec:
    return AdapterSpec(name, "Fake framework", distribution, _never_open)


class Adapters:
    """A plugin object that registers the adapters it is given."""

    def __init__(self, *specs: object) -> None:
        self.specs = specs

    @hookimpl
    def memquill_register_adapters(self, register: Callable[[object], None]) -> None:
        for item in self.specs:
            register(item)


class FirstAdapters(Adapters):
    @hookimpl(tryfirst=True)
    def memquill_register_adapters(self, register: Callable[[object], None]) -> None:
        super().memquill_register_adapters(register)


class Detectors:
    def __init__(self, *detectors: object) -> None:
        self.detectors = detectors

    @hookimpl
    def memquill_register_secret_detectors(self, register: Callable[[object], None]) -> None:
        for detector in self.detectors:
            register(detector)


class HalfThenRaises:
    @hookimpl
    def memquill_register_adapters(self, register: Callable[[AdapterSpec], None]) -> None:
        register(spec("half"))
        raise RuntimeError("plugin bug\nsecond line")


@pytest.fixture
def bare() -> MemquillPluginManager:
    return get_plugin_manager(load_entrypoints=False)


@pytest.fixture
def demo_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo distribution on ``sys.path``; its modules are forgotten afterwards."""
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
    site = write_distribution(tmp_path / "site")
    monkeypatch.syspath_prepend(site)
    yield site
    for module in [name for name in sys.modules if name.startswith("memquill_tmp_")]:
        del sys.modules[module]


def test_builtins_are_a_plugin_contributing_every_builtin_detector(
    bare: MemquillPluginManager,
) -> None:
    report = plugin_report(bare)
    assert [plugin.name for plugin in report.plugins] == [BUILTIN]
    assert report.plugins[0].distribution == "memquill"
    assert [entry.detector for entry in report.detectors] == list(BUILTIN_DETECTORS)
    assert {entry.plugin for entry in report.detectors} == {BUILTIN}
    assert report.adapters == ()
    assert report.failures == ()


def test_every_call_builds_a_new_manager(bare: MemquillPluginManager) -> None:
    bare.register(Adapters(spec("only-here")))
    fresh = get_plugin_manager(load_entrypoints=False)
    assert fresh is not bare
    assert [adapter.name for adapter in registered_adapters(bare)] == ["only-here"]
    assert registered_adapters(fresh) == []


def test_hooks_are_prefixed_typed_documented_and_keyword_only(
    bare: MemquillPluginManager,
) -> None:
    declared = sorted(name for name in vars(hookspecs) if name.startswith("memquill_"))
    assert declared == sorted(HOOKS + NOTIFICATIONS)
    for name in NOTIFICATIONS:
        function = getattr(hookspecs, name)
        signature = inspect.signature(function)
        assert list(signature.parameters) == ["event"]
        assert signature.parameters["event"].annotation != inspect.Parameter.empty
        assert "Args:" in (function.__doc__ or "")
        with pytest.raises(TypeError):
            getattr(bare.hook, name)(_ignore)  # positional: refused by pluggy
    for name in HOOKS:
        function = getattr(hookspecs, name)
        signature = inspect.signature(function)
        assert list(signature.parameters) == ["register"]
        assert signature.parameters["register"].annotation != inspect.Parameter.empty
        assert "Args:" in (function.__doc__ or "")
        with pytest.raises(TypeError):
            getattr(bare.hook, name)(_ignore)  # positional: refused by pluggy


def test_adapters_are_sorted_by_name_and_attributed(bare: MemquillPluginManager) -> None:
    bare.register(Adapters(spec("zeta"), spec("alpha")), name="one")
    bare.register(Adapters(spec("mid")), name="two")
    assert [adapter.name for adapter in registered_adapters(bare)] == ["alpha", "mid", "zeta"]
    report = plugin_report(bare)
    assert [(entry.adapter.name, entry.plugin) for entry in report.adapters] == [
        ("alpha", "one"),
        ("mid", "two"),
        ("zeta", "one"),
    ]


def test_a_duplicate_adapter_keeps_the_first_called_and_reports_the_other(
    bare: MemquillPluginManager,
) -> None:
    earlier, later = spec("dup", "earlier-dist"), spec("dup", "later-dist")
    bare.register(Adapters(earlier), name="earlier")
    bare.register(Adapters(later), name="later")
    # pluggy calls the plugin registered last first.
    assert registered_adapters(bare) == [later]
    failures = plugin_report(bare).failures
    assert [(f.plugin, f.message) for f in failures] == [
        ("earlier", "adapter 'dup' is already registered by 'later'; ignored")
    ]


def test_tryfirst_decides_which_duplicate_is_kept(bare: MemquillPluginManager) -> None:
    earlier, later = spec("dup", "earlier-dist"), spec("dup", "later-dist")
    bare.register(FirstAdapters(earlier), name="earlier")
    bare.register(Adapters(later), name="later")
    assert registered_adapters(bare) == [earlier]
    assert [f.plugin for f in plugin_report(bare).failures] == ["later"]


def test_a_hook_that_raises_loses_only_its_own_contributions(
    bare: MemquillPluginManager,
) -> None:
    bare.register(Adapters(spec("fine")), name="fine")
    bare.register(HalfThenRaises(), name="buggy")
    report = plugin_report(bare)
    assert [entry.adapter.name for entry in report.adapters] == ["fine"]  # not "half"
    assert [(f.plugin, f.message) for f in report.failures] == [
        ("buggy", "memquill_register_adapters: RuntimeError: plugin bug")
    ]


def test_objects_of_the_wrong_kind_are_reported_not_registered(
    bare: MemquillPluginManager,
) -> None:
    bare.register(Adapters("not a spec", spec("real")), name="sloppy")
    bare.register(Detectors(42), name="sloppy-detectors")
    report = plugin_report(bare)
    assert [entry.adapter.name for entry in report.adapters] == ["real"]
    assert {entry.plugin for entry in report.detectors} == {BUILTIN}
    assert [(f.plugin, f.message) for f in report.failures] == [
        ("sloppy", "registered str, not an AdapterSpec"),
        ("sloppy-detectors", "registered int, not a detector (name and detect(text))"),
    ]


def test_the_scanner_runs_builtin_and_plugin_detectors(
    bare: MemquillPluginManager, tmp_path: Path
) -> None:
    custom: SecretDetector = RegexDetector("house_token", re.compile(r"\bhouse-\d{6}\b"))
    bare.register(Detectors(custom), name="house")
    scanner = secret_scanner(bare)
    assert scanner.findings("the badge says house-123456") == ("house_token",)
    assert scanner.findings("password = hunter22") == ("assignment",)
    assert scanner.findings("nothing to see") == ()

    store = RecordStore(tmp_path, secrets=scanner)
    with pytest.raises(SecretError) as refused:
        store.save([manual("the door code is house-424242")])
    assert refused.value.kinds == ("house_token",)
    assert not (tmp_path / "memory" / "records.md").exists()


def test_entry_points_load_one_at_a_time_and_failures_are_reported(demo_site: Path) -> None:
    pm = get_plugin_manager()
    report = plugin_report(pm)
    names = {plugin.name: plugin for plugin in report.plugins}
    assert names["tmp-demo"].distribution == DEMO_DISTRIBUTION
    assert names["tmp-demo"].version == DEMO_VERSION
    assert "tmp-broken" not in names
    assert "tmp-unknown-hook" not in names
    assert [e.plugin for e in report.adapters if e.adapter.name == "tmp-demo"] == ["tmp-demo"]
    assert ("tmp_demo_key", "tmp-demo") in {(e.detector.name, e.plugin) for e in report.detectors}
    failures = {failure.plugin: failure.message for failure in report.failures}
    assert failures["tmp-broken"] == (
        "ModuleNotFoundError: No module named 'memquill_tmp_no_such_dependency'"
    )
    assert "unknown hook 'memquill_register_time_machines'" in failures["tmp-unknown-hook"]
    assert secret_scanner(pm).findings("demo_key_123456") == ("tmp_demo_key",)


@pytest.mark.parametrize("value", ["1", "true", "ON"])
def test_the_disable_variable_skips_entry_points(
    demo_site: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, value)
    report = plugin_report(get_plugin_manager())
    assert [plugin.name for plugin in report.plugins] == [BUILTIN]
    assert report.failures == ()
    assert "memquill_tmp_good" not in sys.modules


@pytest.mark.parametrize("value", ["0", ""])
def test_a_false_disable_variable_still_loads(
    demo_site: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, value)
    assert "tmp-demo" in [adapter.name for adapter in registered_adapters(get_plugin_manager())]


def test_load_entrypoints_false_loads_nothing(demo_site: Path) -> None:
    report = plugin_report(get_plugin_manager(load_entrypoints=False))
    assert [plugin.name for plugin in report.plugins] == [BUILTIN]
    assert "memquill_tmp_good" not in sys.modules


def test_an_entry_point_reusing_a_registered_name_is_skipped_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
    site = write_distribution(
        tmp_path / "site",
        modules={"memquill_tmp_impostor": "raise SystemExit('must never be imported')\n"},
        entry_points={BUILTIN: "memquill_tmp_impostor"},
        name="memquill-tmp-impostor",
    )
    monkeypatch.syspath_prepend(site)
    report = plugin_report(get_plugin_manager())
    assert [p.distribution for p in report.plugins if p.name == BUILTIN] == ["memquill"]
    assert (
        BUILTIN,
        f"a plugin named {BUILTIN!r} is already registered; memquill_tmp_impostor skipped",
    ) in [(f.plugin, f.message) for f in report.failures]


def test_importing_memquill_loads_no_plugin_and_touches_no_disk(tmp_path: Path) -> None:
    site = write_distribution(tmp_path / "site")
    home = tmp_path / "home"
    home.mkdir()
    script = (
        "import json, sys\n"
        "import memquill, memquill.plugins, memquill.tools, memquill.testing, memquill.cli\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('memquill_tmp_'))))\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
    }
    env.pop(DISABLE_AUTOLOAD_ENV, None)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert list(home.iterdir()) == []


def test_the_manager_is_a_pluggy_manager_for_the_memquill_project(
    bare: MemquillPluginManager,
) -> None:
    assert isinstance(bare, pluggy.PluginManager)
    assert bare.project_name == "memquill"
    assert bare.get_plugin(BUILTIN) is not None


def test_a_session_logs_each_plugin_that_fails(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from memquill import open_session

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(Adapters("not a spec"), name="broken-adapters")
    with caplog.at_level("WARNING", logger="memquill.plugins"):
        open_session(tmp_path, "chat-1", plugins=pm)
    logged = [(r.name, r.getMessage()) for r in caplog.records]
    assert logged == [
        ("memquill.plugins", "plugin broken-adapters: registered str, not an AdapterSpec")
    ]
