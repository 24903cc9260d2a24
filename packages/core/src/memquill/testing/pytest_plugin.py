"""memquill's pytest plugin (entry point ``pytest11``): keeps parity runs honest.

It registers the ``memquill_parity`` marker and turns a skipped parity test into a failure:
an adapter may excuse a case only through ``ParitySuite.expected_failures`` with a reason.
Importing it has no side effects beyond defining these hooks.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

__all__ = ["pytest_configure", "pytest_runtest_makereport"]


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker the suite carries."""
    config.addinivalue_line(
        "markers", "memquill_parity: a memquill adapter parity test (skips are failures)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Fail a parity test that was skipped instead of excused with a stated reason."""
    del call
    report = yield
    excused = hasattr(report, "wasxfail")
    if report.skipped and not excused and item.get_closest_marker("memquill_parity"):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid}: a parity test was skipped. Excuse a case in "
            "ParitySuite.expected_failures with a reason instead of skipping it."
        )
    return report
