"""memquill's pytest plugin (entry point ``pytest11``, name ``memquill``): keeps parity runs honest.

pytest loads it in every project of an environment where memquill is installed, so it stays
inert unless the run uses :mod:`memquill.testing`: it imports nothing of memquill (a separate
top-level package, so that loading it never runs ``memquill/__init__``), registers no marker
and changes no report. Only when a collected test belongs to a
:class:`memquill.testing.ParitySuite` (or :class:`memquill.testing.StoreConformance`) subclass
does it mark that test ``memquill_parity`` and turn a skip of it into a failure: an adapter
may excuse a case only through ``ParitySuite.expected_failures`` (a store test: an xfail) with
a reason. ``-p no:memquill`` turns it off.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

MARKER = "memquill_parity"
_SUITES = frozenset(
    {"memquill.testing._suite.ParitySuite", "memquill.testing._store_suite.StoreConformance"}
)
"""The suites, by where they are defined: a class is theirs when one of them is in its MRO
(compared by name, so nothing is imported, and a suite module imported again still counts)."""


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the collected parity tests; in a run without any, do nothing at all."""
    parity = [item for item in items if _is_suite_test(getattr(item, "cls", None))]
    if not parity:
        return
    config.addinivalue_line(
        "markers", f"{MARKER}: a memquill adapter parity test (skips are failures)"
    )
    for item in parity:
        item.add_marker(MARKER)


def _is_suite_test(cls: object) -> bool:
    if not isinstance(cls, type):
        return False
    return any(f"{base.__module__}.{base.__qualname__}" in _SUITES for base in cls.__mro__)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Fail a parity test that was skipped instead of excused with a stated reason."""
    del call
    report = yield
    if report.skipped and not hasattr(report, "wasxfail") and item.get_closest_marker(MARKER):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid}: a parity test was skipped. Excuse a case in "
            "ParitySuite.expected_failures, or a test with @pytest.mark.xfail(reason=...), "
            "instead of skipping it."
        )
    return report
