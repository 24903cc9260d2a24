"""``memquill enhance status``: per scene, without calling the model, blocks across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memquill.cli import main
from memquill.enhance import AuxiliaryRequest, Prompt
from memquill.enhance._runner import AuxiliaryRunner
from memquill.testing._models import FAKE_SECRET

RUN_CLI = "import sys; from memquill.cli import main; sys.exit(main(sys.argv[1:]))"

MODELS = textwrap.dedent(
    """
    import os
    from memquill.testing._models import ScriptedTextModel, parse_script

    CALLS = []

    class Counting(ScriptedTextModel):
        async def generate(self, prompt, *, max_tokens):
            CALLS.append(prompt)
            raise AssertionError("status must never call the model")

    def reranker():
        return Counting(parse_script([]), name="acme", key=os.environ.get("ACME_KEY", "k1"))
    """
)


def _cli(site: Path, *args: str, key: str = "k1") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "ACME_KEY": key}
    return subprocess.run(
        [sys.executable, "-c", RUN_CLI, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "acme_models.py").write_text(MODELS)
    return folder


def test_without_a_model_every_scene_is_not_configured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["enhance", "status", "--state-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "memory_rerank: no model configured (plain keyword order)" in out
    assert "memory_extract: no model configured" in out
    assert "credential blocks on record (0)" in out


async def test_a_block_shows_across_processes_until_the_key_changes(
    tmp_path: Path, site: Path
) -> None:
    state = tmp_path / "state"
    sys.path.insert(0, str(site))
    try:
        from acme_models import reranker  # pyright: ignore[reportMissingImports]

        class Refused(type(reranker())):
            """The host's model, refused once by its provider (in this process)."""

            async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
                from memquill.testing._models import scripted_failure

                raise scripted_failure("http_401")

        refused = Refused((), name="acme", key="k1")
        result = await AuxiliaryRunner(state_dir=state).run(
            AuxiliaryRequest("memory_rerank", "s", refused, Prompt("a", "b"))
        )
        assert result.reason == "credentials_missing"
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("acme_models", None)
    blocked = _cli(
        site, "enhance", "status", "--state-dir", str(state), "--model", "acme_models:reranker"
    )
    assert blocked.returncode == 1, blocked.stderr
    assert "model: custom:acme" in blocked.stdout
    assert (
        "memory_rerank: blocked [custom:acme]: the model's credentials were refused. "
        "Change the key to unblock." in blocked.stdout
    )
    assert "memory_extract: blocked" in blocked.stdout
    assert "custom:acme: lifts when that model's key or settings change" in blocked.stdout
    changed = _cli(
        site,
        "enhance",
        "status",
        "--state-dir",
        str(state),
        "--model",
        "acme_models:reranker",
        key="k2",
    )
    assert changed.returncode == 0, changed.stderr
    assert "memory_rerank: ready [custom:acme]" in changed.stdout
    as_json = _cli(
        site,
        "enhance",
        "status",
        "--json",
        "--state-dir",
        str(state),
        "--model",
        "acme_models:reranker",
    )
    data = json.loads(as_json.stdout)
    assert [s["state"] for s in data["scenes"]] == ["blocked", "blocked"]
    assert data["blocks"] == [{"label": "custom:acme"}]
    for output in (blocked.stdout, changed.stdout, as_json.stdout):
        assert FAKE_SECRET not in output and "k1" not in output.split()


def test_an_unreadable_receipt_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "block-0123.json").write_text("{broken")
    main(["enhance", "status", "--state-dir", str(tmp_path)])
    assert "(unreadable receipt: remove it to let model assistance run again)" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize("spec", ["no-colon", "acme_models:missing", "json:dumps"])
def test_a_bad_model_spec_is_a_usage_error(site: Path, tmp_path: Path, spec: str) -> None:
    result = _cli(site, "enhance", "status", "--state-dir", str(tmp_path), "--model", spec)
    assert result.returncode == 2 and result.stderr.startswith("error[usage]:")
