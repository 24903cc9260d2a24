"""memquill model-assistance failures as OpenTelemetry spans (a memquill plugin module)."""

from opentelemetry import trace

from memquill import hookimpl
from memquill.plugins import ProviderEvent

tracer = trace.get_tracer("memquill")


@hookimpl
def memquill_report_event(event: ProviderEvent) -> None:
    with tracer.start_as_current_span(event.name, attributes=event.attributes()) as span:
        span.set_status(trace.StatusCode.ERROR)
