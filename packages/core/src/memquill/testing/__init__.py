"""The memquill adapter conformance suite, shipped for any adapter to run.

Subclass :class:`ParitySuite` in a test module and return a harness factory; every parity case
in ``memquill/testing/cases`` then runs through your adapter and is compared with the core::

    from memquill.testing import ParitySuite

    class TestMyAdapterParity(ParitySuite):
        def harness_factory(self):
            return MyHarness          # MyHarness(session) -> AdapterHarness

:class:`StoreConformance` is the same for a LangGraph ``BaseStore``: subclass it, override its
``store`` fixture, and every rule of the store contract runs against your store.

The pytest plugin (loaded automatically through the ``pytest11`` entry point) fails a parity
or store test that is skipped instead of excused with a reason. :mod:`memquill.testing` also
holds the demo scenario ``memquill demo`` runs through every adapter.
"""

import typing

from memquill.plugins import lazy_exports as _lazy_exports
from memquill.testing._cases import Case, Fixture, Step, load_cases, load_fixtures
from memquill.testing._demo import SCENARIO, AdapterRun, DemoStep, core_spec, run_adapter
from memquill.testing._harness import CoreHarness
from memquill.testing._models import (
    FAKE_SECRET,
    PARITY_ALIASES,
    PARITY_EMBEDDERS,
    BlockingEmbedder,
    FailingEmbedder,
    HangingEmbedder,
    ModelScript,
    Reply,
    ScriptedProviderError,
    ScriptedTextModel,
    TrigramEmbedder,
    failing_parity_embedder,
    parity_embedder,
    parity_embedder_spec,
    parse_script,
    play,
    script_of,
    scripted_failure,
    trigram_vectors,
    with_framework_embedder,
    with_framework_model,
)
from memquill.testing._normalize import Normalizer, canonical_schema
from memquill.testing._runner import HarnessFactory, Outcome, assert_outcomes, run_case

if typing.TYPE_CHECKING:
    from memquill.testing._store_suite import StoreConformance
    from memquill.testing._suite import ParitySuite

__all__ = [
    "FAKE_SECRET",
    "PARITY_ALIASES",
    "PARITY_EMBEDDERS",
    "SCENARIO",
    "AdapterRun",
    "BlockingEmbedder",
    "Case",
    "CoreHarness",
    "DemoStep",
    "FailingEmbedder",
    "Fixture",
    "HangingEmbedder",
    "HarnessFactory",
    "ModelScript",
    "Normalizer",
    "Outcome",
    "ParitySuite",
    "Reply",
    "ScriptedProviderError",
    "ScriptedTextModel",
    "Step",
    "StoreConformance",
    "TrigramEmbedder",
    "assert_outcomes",
    "canonical_schema",
    "core_spec",
    "failing_parity_embedder",
    "load_cases",
    "load_fixtures",
    "parity_embedder",
    "parity_embedder_spec",
    "parse_script",
    "play",
    "run_adapter",
    "run_case",
    "script_of",
    "scripted_failure",
    "trigram_vectors",
    "with_framework_embedder",
    "with_framework_model",
]

# pytest is needed by the suite only: ``memquill demo`` uses this package without it.
__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "ParitySuite": "memquill.testing._suite",
        "StoreConformance": "memquill.testing._store_suite",
    },
)
