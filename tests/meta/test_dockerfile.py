"""The ``Dockerfile`` agrees with its docs and keeps its promises, checked without a container.

Building and running the image needs a container engine (``tests/packaging/test_container.py``
does it where one exists); these checks run everywhere: what the image runs is exactly what
``docs/adapters/mcp.md`` says, and the server refuses those flags without a token; it runs as
an unprivileged user; it carries no token; what it copies exists and reaches the build.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from pathlib import Path

import pytest
from tests.doc_blocks import ROOT
from tests.dockerfile import (
    DOCKERFILE,
    commands,
    doc_blocks,
    docker_runs,
    env,
    image_arguments,
    only,
    stages,
)

from memquill_mcp import server_command
from memquill_mcp.cli import TOKEN_ENV, _parser  # pyright: ignore[reportPrivateUsage]

BUILD, RUNTIME = stages()
ENTRYPOINT = only(RUNTIME, "ENTRYPOINT").json()
IMAGE = "memquill-mcp"


def test_the_image_runs_exactly_what_the_docs_say() -> None:
    (inside,) = commands(doc_blocks()[0])
    assert inside == ENTRYPOINT
    assert ENTRYPOINT[0] == "memquill-mcp"
    args = _parser().parse_args(ENTRYPOINT[1:])
    assert (args.transport, args.host, args.allow_remote) == ("http", "0.0.0.0", True)
    assert args.token_file is None, "the token is never part of the image"
    assert only(RUNTIME, "EXPOSE").value == str(args.port)
    volumes = only(RUNTIME, "VOLUME").json()
    assert args.workspace in volumes
    assert env(RUNTIME)["XDG_DATA_HOME"] in volumes, "the record key outlives the container"


def test_the_image_runs_as_an_unprivileged_user_it_creates() -> None:
    user = only(RUNTIME, "USER").value
    assert user not in {"root", "0"} and not user.startswith(("root:", "0:"))
    created = [i.value for i in RUNTIME if i.keyword == "RUN" and "useradd" in i.value]
    assert created and re.search(rf"\buseradd\b.*\s{re.escape(user)}(\s|$)", created[0])
    assert RUNTIME.index(only(RUNTIME, "USER")) > RUNTIME.index(only(RUNTIME, "COPY"))


def test_no_token_or_secret_is_built_in() -> None:
    text = DOCKERFILE.read_text("utf-8")
    settings = {**env(BUILD), **env(RUNTIME)}
    assert not [name for name in settings if re.search("TOKEN|SECRET|PASSWORD|KEY", name)]
    assert not [i for stage in (BUILD, RUNTIME) for i in stage if i.keyword == "ARG"]
    assert f"{TOKEN_ENV}=" not in text
    assert "--token-file" not in " ".join(ENTRYPOINT)
    assert not [i for i in RUNTIME if i.keyword == "CMD"], "extra arguments are the user's own"


def test_the_build_installs_the_locked_server_with_the_project_s_uv() -> None:
    runs = [i.value for i in BUILD if i.keyword == "RUN"]
    (sync,) = [run for run in runs if run.startswith("uv sync")]
    assert {"--locked", "--no-dev", "--no-editable"} <= set(sync.split())
    assert "--package memquill-mcp" in sync
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    (pinned,) = re.findall(r"uv==[0-9.]+", ci)
    assert any(pinned in run for run in runs), f"the image builds with {pinned}, as CI does"
    assert env(BUILD)["UV_PROJECT_ENVIRONMENT"] in only(RUNTIME, "COPY").value


def _ignored(name: str, rules: list[str]) -> bool:
    """Whether ``.dockerignore`` (last matching rule wins; ``!`` re-includes) drops ``name``."""
    verdict = False
    for rule in rules:
        pattern = rule.removeprefix("!").rstrip("/")
        parts = name.split("/")
        prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        if any(fnmatch.fnmatch(prefix, pattern) for prefix in prefixes) or (
            pattern.startswith("**/") and fnmatch.fnmatch(parts[-1], pattern[3:])
        ):
            verdict = not rule.startswith("!")
    return verdict


def test_what_the_build_copies_exists_and_is_sent_to_the_build() -> None:
    lines = (ROOT / ".dockerignore").read_text("utf-8").splitlines()
    rules = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    copies = [i.value.split() for i in BUILD if i.keyword == "COPY"]
    assert copies
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    for *sources, _destination in copies:
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: no such file"
            sent = [name for name in tracked if name == source or name.startswith(f"{source}/")]
            assert sent and not [name for name in sent if _ignored(name, rules)], source
    # The workspace's own lock needs every member's pyproject.toml and each package's sources.
    assert not _ignored("packages/core/src/memquill/__init__.py", rules)
    assert _ignored(".venv/bin/python", rules) and _ignored(".git/HEAD", rules)
    assert _ignored("packages/core/src/memquill/__pycache__/x.pyc", rules)


@pytest.mark.parametrize("run", docker_runs(), ids=["named volumes", "own folder"])
def test_every_documented_docker_run_is_a_valid_server_command(run: list[str]) -> None:
    extra = image_arguments(run, IMAGE)
    args = _parser().parse_args([*ENTRYPOINT[1:], *extra])  # SystemExit when not
    published = run[run.index("-p") + 1]
    assert published.endswith(f":{args.port}") and published.startswith("127.0.0.1:")
    mounts = [run[n + 1] for n, word in enumerate(run) if word == "-v"]
    assert any(mount.endswith(":/workspace") for mount in mounts)
    # The token is passed on by name or as a mounted file, never by value.
    assert not [word for word in run if word.startswith(f"{TOKEN_ENV}=")]
    if "-e" in run:
        assert run[run.index("-e") + 1] == TOKEN_ENV
    else:
        assert args.token_file is not None
        assert any(mount.endswith(f":{args.token_file}:ro") for mount in mounts)


def test_the_image_s_flags_refuse_to_serve_without_a_token(tmp_path: Path) -> None:
    """The entry point run here, as it is (only the workspace folder differs): no token, no
    server. It never binds a port."""
    args = [str(tmp_path) if arg == "/workspace" else arg for arg in ENTRYPOINT[1:]]
    child = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    done = subprocess.run(
        [*server_command(), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**child, "MEMQUILL_DISABLE_PLUGIN_AUTOLOAD": "1"},
        check=False,
    )
    assert done.returncode == 2
    assert "a non-loopback server needs a bearer token of at least 32 characters" in done.stderr
