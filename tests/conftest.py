"""Suite-wide settings.

Property tests run with a fixed seed derivation and no time limit per example: CI machines vary
in speed, and a test must fail because of the code, never because the machine was busy.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "memquill",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("memquill")


def pytest_configure(config: object) -> None:
    """Keep model-assistance state (install key, receipts) out of the real user data folder."""
    import os
    import tempfile

    if not os.environ.get("MEMQUILL_TEST_DATA_HOME"):
        folder = tempfile.mkdtemp(prefix="memquill-test-data-")
        os.environ["MEMQUILL_TEST_DATA_HOME"] = folder
        os.environ["XDG_DATA_HOME"] = folder


@pytest.fixture(autouse=True, scope="session")
def _index_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Search indexes go to a temporary folder, never the user's cache."""
    folder = tmp_path_factory.mktemp("indexes")
    previous = os.environ.get("MEMQUILL_INDEX_DIR")
    os.environ["MEMQUILL_INDEX_DIR"] = str(folder)
    yield
    if previous is None:
        os.environ.pop("MEMQUILL_INDEX_DIR", None)
    else:
        os.environ["MEMQUILL_INDEX_DIR"] = previous
