"""``ParitySuite``: subclass it, say how to open your adapter, and inherit every parity case.

Like LangChain's standard tests, the suite refuses silent opt-outs: a case may only be excused
through ``expected_failures`` with a reason (it then runs as a strict xfail), a skipped case
fails, and a test method overridden or deleted without ``@pytest.mark.xfail(reason=...)`` fails
``test_no_overrides_DO_NOT_OVERRIDE``. That guard, :func:`unexcused_overrides`, is the one
every memquill suite ends with (:class:`~memquill.testing.StoreConformance` too).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest

from memquill.store import is_database
from memquill.testing._cases import Case, load_cases
from memquill.testing._runner import (
    RECORDS_FILE,
    CoreHarness,
    HarnessFactory,
    assert_outcomes,
    canonical_schema,
    run_case,
)
from memquill.tools import MemorySession


def unexcused_overrides(suite: type, subclass: type) -> list[str]:
    """The names of ``suite``'s tests that ``subclass`` overrides or removes without an xfail
    mark that gives a reason."""
    bad: list[str] = []
    for name in dir(suite):
        if not name.startswith("test_"):
            continue
        ours = getattr(subclass, name, None)
        if ours is getattr(suite, name):
            continue
        marks = getattr(ours, "pytestmark", [])
        if not any(m.name == "xfail" and m.kwargs.get("reason") for m in marks):
            bad.append(name)
    return bad


class ParitySuite:
    """The conformance suite every memquill adapter must pass.

    Subclass it in a test module (the class name must start with ``Test``) and implement
    :meth:`harness_factory`.
    """

    expected_failures: ClassVar[Mapping[str, str]] = {}
    """Case id → the reason this adapter cannot pass it. Each runs as a strict xfail."""

    def harness_factory(self) -> HarnessFactory:
        """Return a callable that opens this adapter's harness for a session."""
        raise NotImplementedError("a ParitySuite subclass must implement harness_factory()")

    def store_location(self, request: pytest.FixtureRequest) -> str | None:
        """Where the adapter's run of a case keeps its records.

        ``None`` (the default) is ``MemorySession``'s default: ``$MEMQUILL_STORE``, else the
        workspace's own file. Return a PostgreSQL location (``docs/multi-host.md``) to run every
        case with the records in the database (the notes stay in the workspace folder): it is
        asked once per test, and must name a workspace row no other run uses, such as
        ``f"{url}#workspace=parity-{uuid.uuid4()}"``; ``request`` gives the test's fixtures
        (a database server). The core's reference run of each case stays on the file, so every
        result is compared with the file store's, normalised as :class:`Normalizer` says.
        """
        del request
        return None

    def sent_schema(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """The input schema the adapter's framework sends for the core's ``schema``.

        The core's, unchanged, unless the framework rewrites every tool's schema by its own
        rule (the OpenAI Agents SDK's strict mode: every property required, no ``null``
        defaults). Override it with that framework's own function, never a copy of it, so the
        catalogue test still proves the adapter sends the core's schema through it.
        """
        return schema

    @pytest.mark.parametrize("case", load_cases(), ids=lambda case: case.id)
    def test_case(self, case: Case, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        """The adapter's results equal the case's expectations and the core's results."""
        reason = self.expected_failures.get(case.id)
        if reason:
            request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
        store = self.store_location(request)
        ours = run_case(case, self.harness_factory(), tmp_path / "adapter", store=store)
        if is_database(store):
            # An adapter that opens its own session without the store would pass on the file.
            records = tmp_path / "adapter" / RECORDS_FILE
            assert not records.exists(), (
                f"case {case.id!r}: the records went to {RECORDS_FILE}, not to the database "
                "store the session names (does the harness pass session.store_location on?)"
            )
        core = run_case(case, CoreHarness, tmp_path / "core", store="file")
        assert_outcomes(case, ours, core)

    @pytest.mark.parametrize("access", ["read_write", "read"])
    def test_catalogue(
        self,
        access: Literal["read", "read_write"],
        tmp_path: Path,
        request: pytest.FixtureRequest,
    ) -> None:
        """Same tool names, descriptions and input schemas as the core, for each access."""
        store = self.store_location(request)
        session = MemorySession(tmp_path, "parity-session", access, store=store)
        harness = self.harness_factory()(session)
        try:
            ours = {tool.name: tool for tool in harness.catalogue()}
        finally:
            harness.close()
        core = {tool.name: tool for tool in CoreHarness(session).catalogue()}
        assert sorted(ours) == sorted(core)
        for name, tool in core.items():
            assert ours[name].description == tool.description, f"{name}: description differs"
            assert canonical_schema(ours[name].input_schema) == canonical_schema(
                self.sent_schema(copy.deepcopy(tool.input_schema))
            ), f"{name}: input schema differs"

    def test_no_overrides_DO_NOT_OVERRIDE(self) -> None:
        """Every suite test is inherited as is, or excused with an xfail reason."""
        bad = unexcused_overrides(ParitySuite, type(self))
        assert not bad, (
            f"parity tests overridden or removed without @pytest.mark.xfail(reason=...): {bad}"
        )
