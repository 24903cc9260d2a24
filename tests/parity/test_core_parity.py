"""The parity suite against the core itself: every case's expectations hold without adapters."""

from __future__ import annotations

from memquill.testing import CoreHarness, HarnessFactory, ParitySuite


class TestCoreParity(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return CoreHarness
