"""memquill model-assistance failures as Sentry messages (a memquill plugin module)."""

import sentry_sdk

from memquill import hookimpl
from memquill.plugins import ProviderEvent


@hookimpl
def memquill_report_event(event: ProviderEvent) -> None:
    sentry_sdk.capture_message(
        event.name,
        level="warning",
        tags={key: str(value) for key, value in event.attributes().items()},
        fingerprint=[event.name, event.scene, event.root_cause, event.provider],
    )
