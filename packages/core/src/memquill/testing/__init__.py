"""The memquill adapter conformance suite, shipped for any adapter to run.

Subclass :class:`ParitySuite` in a test module and return a harness factory; every parity case
in ``memquill/testing/cases`` then runs through your adapter and is compared with the core::

    from memquill.testing import ParitySuite

    class TestMyAdapterParity(ParitySuite):
        def harness_factory(self):
            return MyHarness          # MyHarness(session) -> AdapterHarness

The pytest plugin (loaded automatically through the ``pytest11`` entry point) fails a parity
test that is skipped instead of excused with a reason.
"""

from memquill.harness import CoreHarness
from memquill.normalize import Normalizer, canonical_schema
from memquill.testing.cases import Case, Fixture, Step, load_cases, load_fixtures
from memquill.testing.models import (
    FAKE_SECRET,
    ModelScript,
    Reply,
    ScriptedProviderError,
    ScriptedTextModel,
    parse_script,
    play,
    scripted_failure,
)
from memquill.testing.runner import HarnessFactory, Outcome, assert_outcomes, run_case
from memquill.testing.suite import ParitySuite

__all__ = [
    "FAKE_SECRET",
    "Case",
    "CoreHarness",
    "Fixture",
    "HarnessFactory",
    "ModelScript",
    "Normalizer",
    "Outcome",
    "ParitySuite",
    "Reply",
    "ScriptedProviderError",
    "ScriptedTextModel",
    "Step",
    "assert_outcomes",
    "canonical_schema",
    "load_cases",
    "load_fixtures",
    "parse_script",
    "play",
    "run_case",
    "scripted_failure",
]
