"""Runs the docs' Python snippets in this process, in order, and writes what each did.

``python -m tests.meta.snippet_runner JOBS RESULTS``: ``JOBS`` is a JSON list of
``{"key", "home", "prelude", "code", "after", "continues", "serves"}``; ``RESULTS`` receives one
``{"key", "ok", "stdout", "error"}`` per job. Each snippet runs in its doc's reader's home
(the working folder and ``HOME``), in a fresh namespace (the one of the snippet before it when
``continues``): its prelude, its code exactly as the doc has it, then its checks. One process
runs every doc's snippets, so the frameworks are imported once. Top-level ``await`` works, on
one event loop shared by the snippets, as in a notebook. A snippet that ``serves`` ends in a
call that serves HTTP until stopped: it runs on a thread, and it passes when the URL it printed
answers.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import json
import os
import re
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
from typing import Any

SERVE_CEILING = 60.0
"""Seconds a serving snippet has to print its URL and answer it: a hang guard."""


def _run(job: dict[str, Any], namespace: dict[str, Any], loop: asyncio.AbstractEventLoop) -> None:
    for part in ("prelude", "code", "after"):
        source = job[part]
        if not source:
            continue
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        compiled = compile(source, f"<{job['key']} ({part})>", "exec", flags=flags)
        result = eval(compiled, namespace)
        if inspect.iscoroutine(result):
            loop.run_until_complete(result)


class Output(io.TextIOWrapper):
    """What a snippet prints, with the ``buffer`` a server writing to stdout needs."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", write_through=True)

    def getvalue(self) -> str:
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue().decode("utf-8", "replace")


def _answer(url: str) -> bool:
    # A page's printed address carries its token, which the page trades for a cookie.
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    try:
        with browser.open(url, timeout=30) as answer:
            assert answer.status == 200, answer.status
    except urllib.error.URLError as error:
        if isinstance(error.reason, ConnectionRefusedError):
            return False  # printed before it listens
        raise
    return True


def _serve(job: dict[str, Any], namespace: dict[str, Any], out: Output) -> None:
    failure: list[str] = []

    def target() -> None:
        try:
            _run(job, namespace, asyncio.new_event_loop())
        except BaseException:
            failure.append(traceback.format_exc())

    threading.Thread(target=target, daemon=True).start()
    deadline = time.monotonic() + SERVE_CEILING
    while time.monotonic() < deadline and not failure:
        found = re.search(r"http://[\w.:\[\]]+/\S*", out.getvalue())
        if found and _answer(found.group(0)):
            return
        time.sleep(0.05)
    raise AssertionError(failure[0] if failure else "it printed no URL to answer")


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        jobs = json.load(handle)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    results: list[dict[str, Any]] = []
    namespace: dict[str, Any] = {}
    home = None
    for job in jobs:
        if job["home"] != home:
            home = job["home"]
            os.chdir(home)
            os.environ["HOME"] = home
            namespace = {}
        if not job["continues"]:
            namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        out = Output()
        error = None
        try:
            with contextlib.redirect_stdout(out):
                if job["serves"]:
                    _serve(job, namespace, out)
                else:
                    _run(job, namespace, loop)
        except BaseException:
            error = traceback.format_exc()
        results.append(
            {"key": job["key"], "ok": error is None, "stdout": out.getvalue(), "error": error}
        )
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        json.dump(results, handle)
    sys.stdout.flush()
    # A serving snippet's thread never ends: leave without waiting for it.
    os._exit(0)


if __name__ == "__main__":
    main()
