"""``StoreConformance`` refuses silent opt-outs, and fails a store that breaks the contract."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _inner_config(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )


def test_a_skipped_store_test_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest
from langgraph.store.memory import InMemoryStore
from memquill.testing import StoreConformance


class TestSkipping(StoreConformance):
    unqueried_order = "insertion"

    @pytest.fixture
    def store(self):
        pytest.skip("no store here")
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-k", "missing_item")
    result.assert_outcomes(errors=1)  # skipped in its fixture: reported as a setup failure
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*test was skipped*"])


def test_an_override_without_a_reason_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest
from langgraph.store.memory import InMemoryStore
from memquill.testing import StoreConformance


class TestOverridden(StoreConformance):
    @pytest.fixture
    def store(self):
        return InMemoryStore()

    def test_filters_match_the_value(self, store):
        pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-k", "DO_NOT_OVERRIDE")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*overridden or removed without*test_filters_match_the_value*"])


def test_a_store_with_another_contract_fails(pytester: pytest.Pytester) -> None:
    # InMemoryStore judged by the defaults (newest first, created_at kept, queries ranked):
    # the tests of exactly those choices fail, and the rest pass.
    pytester.makepyfile(
        """
import pytest
from langgraph.store.memory import InMemoryStore
from memquill.testing import StoreConformance


class TestDefaults(StoreConformance):
    @pytest.fixture
    def store(self):
        return InMemoryStore()

    @pytest.fixture
    def indexed_store(self):
        return InMemoryStore(index=self.semantic_index)
"""
    )
    recorder = pytester.inline_run("-q", "-p", "no:cacheprovider", "-p", "no:randomly")
    reports = recorder.getreports("pytest_runtest_logreport")
    failed = sorted(report.nodeid.split("::")[-1] for report in reports if report.failed)
    assert failed == [
        "test_a_namespace_whose_items_were_deleted",
        "test_a_put_on_a_key_in_use_replaces_the_value",
        "test_a_query_ranks_the_matching_items",
        "test_the_async_twins_do_what_the_sync_methods_do",
        "test_the_order_without_a_query",
    ]
