"""The parity suite against the core itself: every case's expectations hold without adapters."""

from __future__ import annotations

from memquill.testing import ParitySuite
from memquill.testing._runner import CoreHarness, HarnessFactory


class TestCoreParity(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return CoreHarness
