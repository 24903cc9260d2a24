"""The memquill adapter conformance suite, shipped for any adapter to run.

Subclass :class:`ParitySuite` in a test module and return a harness factory; every parity case
in ``memquill/testing/cases`` then runs through your adapter and is compared with the core::

    from memquill.testing import ParitySuite

    class TestMyAdapterParity(ParitySuite):
        def harness_factory(self):
            return MyHarness          # MyHarness(session) -> AdapterHarness

Override ``store_location`` as well to run every case with the records in PostgreSQL (the
results must still be the file store's).

:class:`StoreConformance` is the same for a LangGraph ``BaseStore``: subclass it, override its
``store`` fixture, and every rule of the store contract runs against your store.

The pytest plugin (loaded automatically through the ``pytest11`` entry point) fails a parity
or store test that is skipped instead of excused with a reason. :mod:`memquill.testing` also
holds the demo scenario ``memquill demo`` runs through every adapter.
"""

import typing

from memquill.plugins import lazy_exports as _lazy_exports
from memquill.testing._models import TrigramEmbedder

if typing.TYPE_CHECKING:
    from memquill.testing._cases import (
        Case as Case,
        Fixture as Fixture,
        Step as Step,
        load_cases as load_cases,
        load_fixtures as load_fixtures,
    )
    from memquill.testing._demo import (
        SCENARIO as SCENARIO,
        AdapterRun as AdapterRun,
        DemoStep as DemoStep,
        core_spec as core_spec,
        run_adapter as run_adapter,
    )
    from memquill.testing._models import (
        FAKE_SECRET as FAKE_SECRET,
        PARITY_ALIASES as PARITY_ALIASES,
        PARITY_EMBEDDERS as PARITY_EMBEDDERS,
        BlockingEmbedder as BlockingEmbedder,
        FailingEmbedder as FailingEmbedder,
        HangingEmbedder as HangingEmbedder,
        ModelScript as ModelScript,
        Reply as Reply,
        ScriptedProviderError as ScriptedProviderError,
        ScriptedTextModel as ScriptedTextModel,
        failing_parity_embedder as failing_parity_embedder,
        parity_embedder as parity_embedder,
        parity_embedder_spec as parity_embedder_spec,
        parse_script as parse_script,
        play as play,
        script_of as script_of,
        scripted_failure as scripted_failure,
        trigram_vectors as trigram_vectors,
        with_framework_embedder as with_framework_embedder,
        with_framework_model as with_framework_model,
    )
    from memquill.testing._runner import (
        CoreHarness as CoreHarness,
        HarnessFactory as HarnessFactory,
        Normalizer as Normalizer,
        Outcome as Outcome,
        assert_outcomes as assert_outcomes,
        canonical_schema as canonical_schema,
        run_case as run_case,
    )
    from memquill.testing._store_suite import StoreConformance
    from memquill.testing._suite import ParitySuite

__all__ = [
    "ParitySuite",
    "StoreConformance",
    "TrigramEmbedder",
]

# pytest is needed by the suite only: ``memquill demo`` uses this package without it.
__getattr__, __dir__ = _lazy_exports(__name__)
