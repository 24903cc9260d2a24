"""The documented telemetry recipes, run against the real OpenTelemetry SDK and Sentry client.

Both plugin modules are the files in ``examples/telemetry``, which ``docs/model-assistance.md``
quotes verbatim (checked here too, so the page cannot drift from what is tested).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import sentry_sdk
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport
from tests.core.enhance_helpers import FailingModel, ask, make_runner

from memquill.enhance._telemetry import Telemetry
from memquill.plugins import get_plugin_manager
from memquill.testing._models import FAKE_SECRET, scripted_failure

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "examples" / "telemetry"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"recipe_{name}", RECIPES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _telemetry_for(plugin: ModuleType) -> Telemetry:
    manager = get_plugin_manager(load_entrypoints=False)
    manager.register(plugin)
    telemetry = Telemetry()
    telemetry.connect("plugins", lambda event: manager.hook.memquill_report_event(event=event))
    return telemetry


def test_the_docs_quote_the_recipes_verbatim() -> None:
    page = (ROOT / "docs" / "model-assistance.md").read_text("utf-8")
    for name in ("opentelemetry_plugin", "sentry_plugin"):
        source = (RECIPES / f"{name}.py").read_text("utf-8")
        assert f"```python\n{source}```" in page, f"docs/model-assistance.md drifted from {name}"


async def test_opentelemetry_recipe_with_the_in_memory_exporter(tmp_path: Path) -> None:
    plugin = _load("opentelemetry_plugin")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # A private provider, not the global one: the recipe module's global, replaced.
    vars(plugin)["tracer"] = provider.get_tracer("memquill")
    runner = make_runner(tmp_path, telemetry=_telemetry_for(plugin))
    await ask(runner, FailingModel(scripted_failure("http_401"), key="refused"), scope="a")
    assert exporter.get_finished_spans() == ()
    await ask(runner, FailingModel(scripted_failure("http_503")), scope="b")
    (span,) = exporter.get_finished_spans()
    assert span.name == "memquill.model_failure"
    assert dict(span.attributes or {}) == {
        "memquill.scene": "memory_rerank",
        "memquill.failure.root_cause": "http_5xx",
        "memquill.failure.outcome": "transient_upstream",
        "memquill.provider": "custom",
        "memquill.status_class": "5xx",
        "memquill.suppressed": 0,
    }
    assert FAKE_SECRET not in json.dumps(dict(span.attributes or {}))


class _Capture(Transport):
    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.envelopes: list[Envelope] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        self.envelopes.append(envelope)


async def test_sentry_recipe_through_a_real_client_transport(tmp_path: Path) -> None:
    plugin = _load("sentry_plugin")
    transport = _Capture()
    sentry_sdk.init(
        dsn="https://public@sentry.invalid/1", transport=transport, default_integrations=False
    )
    try:
        runner = make_runner(tmp_path, telemetry=_telemetry_for(plugin))
        await ask(runner, FailingModel(scripted_failure("http_401"), key="refused"), scope="a")
        await ask(runner, FailingModel(scripted_failure("http_429"), key="limited"), scope="b")
        sentry_sdk.flush()
        assert transport.envelopes == [], "credentials and 429 produce zero events"
        await ask(runner, FailingModel(scripted_failure("http_503")), scope="c")
        sentry_sdk.flush()
    finally:
        sentry_sdk.get_client().close()
    (envelope,) = transport.envelopes
    event = envelope.get_event()
    assert event is not None and event.get("message") == "memquill.model_failure"
    tags = event.get("tags")
    assert tags is not None
    assert tags["memquill.failure.root_cause"] == "http_5xx"
    assert tags["memquill.scene"] == "memory_rerank"
    raw = json.dumps(event, default=str)
    assert FAKE_SECRET not in raw and "Provider said no" not in raw
