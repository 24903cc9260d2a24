"""The suite must fail for a harness that differs by one character, or that skips a case."""

from __future__ import annotations

import pytest
from tests.conftest import Server

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _inner_config(pytester: pytest.Pytester) -> None:
    # The inner runs get the same asyncio settings as the outer one (and no warning about it).
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )


HARNESS = '''
from dataclasses import replace

from memquill.testing._runner import CoreHarness
from memquill.testing import ParitySuite


class OffByOne(CoreHarness):
    """Changes one character of one output: the last character of a search answer."""

    def call(self, name, arguments):
        result = super().call(name, arguments)
        if name == "memory_search" and arguments.get("query") == "zebra unicorn":
            result = replace(result, text=result.text[:-1] + "!")
        return result
'''


def test_a_one_character_difference_fails_the_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        HARNESS
        + """

class TestBroken(ParitySuite):
    def harness_factory(self):
        return OffByOne
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-k", "search-no-result")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*search-no-result*text differs*"])


def test_an_excused_case_needs_a_reason_and_still_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        HARNESS
        + """

class TestExcused(ParitySuite):
    expected_failures = {"search-no-result": "this harness rewrites punctuation"}

    def harness_factory(self):
        return OffByOne
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-k", "search-no-result")
    result.assert_outcomes(xfailed=1)


def test_a_skipped_case_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest
from tests.conftest import Server
from memquill.testing._runner import CoreHarness
from memquill.testing import ParitySuite


class Skipping(CoreHarness):
    def call(self, name, arguments):
        pytest.skip("not supported here")


class TestSkipping(ParitySuite):
    def harness_factory(self):
        return Skipping
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-k", "search-no-result")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*parity test was skipped*"])


def test_an_override_without_a_reason_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
from memquill.testing._runner import CoreHarness
from memquill.testing import ParitySuite


class TestOverridden(ParitySuite):
    def harness_factory(self):
        return CoreHarness

    def test_catalogue(self, access, tmp_path):
        pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-k", "DO_NOT_OVERRIDE")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*overridden or removed without*test_catalogue*"])


def test_a_harness_that_drops_the_database_store_fails(
    pytester: pytest.Pytester, postgres_server: Server
) -> None:
    """A harness that opens its own session on the workspace but not on the store it was given
    (as a subprocess harness might) would compare the file store with itself: it fails."""
    pytester.makepyfile(
        f"""
import uuid

from memquill import MemorySession
from memquill.testing._runner import CoreHarness
from memquill.testing import ParitySuite


class FileOnly(CoreHarness):
    def __init__(self, session):
        again = MemorySession(
            session.workspace, session.session_id, session.access, session.authorize_write,
            now=session.now, store="file",
        )
        super().__init__(again)


class TestDropsTheStore(ParitySuite):
    def harness_factory(self):
        return FileOnly

    def store_location(self, request):
        return {postgres_server.url!r} + "#workspace=guard-" + str(uuid.uuid4())
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-k", "write-lifecycle")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the records went to memory/records.md, not to the database*"])
