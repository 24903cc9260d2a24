"""``extract``, ``jobs`` and ``jobs retry``: automatic extraction from a shell.

``memquill extract chat.jsonl --model myapp.models:extractor`` counts the transcript's finished
turns (a repeat counts nothing twice), closes its last partial batch (``--no-flush`` keeps it
open), and runs the extraction runner until no batch can move now. ``--model`` names a
:class:`~memquill.enhance.TextModel`, or a LangChain chat model or LlamaIndex LLM that the installed
adapter wraps, or a function returning one. ``memquill jobs`` shows the latest jobs with status,
reason, attempts and retry time; ``memquill jobs retry`` clears their waits (never the attempt
budget) and, given ``--transcript`` and ``--model``, runs the runner at once.

Failures are coded like every command's: a transcript that is missing or cannot be read is
``invalid``, and a second ``extract`` while another process runs this workspace's extraction
is ``job_busy`` (the jobs are settled by the process that holds the runner).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from memquill.cli.context import Context, add_common, counted
from memquill.cli.enhance import load_model
from memquill.errors import InvalidInputError, JobBusyError, Messages
from memquill.foundation.controls import escape_controls

if TYPE_CHECKING:
    from memquill.enhance import TextModel
    from memquill.lifecycle import (
        Extraction,
        JobsView,
        JobView,
        PassReport,
        SourceMessage,
        TranscriptSource,
    )

__all__ = ["register"]

_MAX_PASSES: Final = 50


def register(subparsers: Any) -> None:
    """Add ``extract`` and ``jobs`` to ``memquill``."""
    extract = subparsers.add_parser(
        "extract",
        help="extract facts from a JSONL transcript with a model",
        description="Count a transcript's finished turns and extract the facts the user stated, "
        "each saved only with a verbatim quote of the user's message.",
    )
    extract.add_argument("transcript", type=Path, help="the JSONL transcript")
    _model_options(extract, required=True)
    extract.add_argument(
        "--no-flush",
        action="store_true",
        help="leave the last one or two turns waiting for a third (default: extract them too)",
    )
    extract.set_defaults(handler=_extract)
    add_common(extract)

    jobs = subparsers.add_parser(
        "jobs",
        help="extraction jobs: status, reason, attempts and retry time",
        description="Show the latest extraction jobs of the workspace.",
    )
    jobs.add_argument("--limit", type=int, default=20, help="how many jobs (default 20)")
    jobs.set_defaults(handler=_jobs)
    add_common(jobs)
    commands = jobs.add_subparsers(dest="jobs_command", metavar="COMMAND")
    retry = commands.add_parser(
        "retry",
        help="make waiting jobs eligible now (attempts are never given back)",
        description="Clear the retry waits of jobs that can still move. With --transcript and "
        "--model, run the extraction runner for that transcript now.",
    )
    retry.add_argument("--transcript", type=Path, help="the JSONL transcript to extract from")
    _model_options(retry, required=False)
    retry.set_defaults(handler=_retry)
    add_common(retry)


def _model_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--model",
        metavar="MODULE:ATTR",
        required=required,
        help="the TextModel (or a function returning one), e.g. myapp.models:extractor",
    )
    parser.add_argument("--session", metavar="ID", help="the transcript's session id")
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        type=Path,
        help="where the install key and credential blocks live (default: the user data folder)",
    )


def _extract(args: argparse.Namespace, context: Context) -> int:
    # Extraction is loaded by the commands that use it, not by every command.
    from memquill.lifecycle import TranscriptSource, committed_turns

    model = _load(args, context)
    if model is None:
        return 2
    source = TranscriptSource(args.transcript, args.session)
    messages = _read_transcript(source)
    context.ensure_workspace()
    extraction = _extraction(args, context, source, model)
    turns = committed_turns(source.session_id, messages)
    closed = sum(extraction.enqueue(turn) for turn in turns)
    if not args.no_flush:
        closed += extraction.flush(source.session_id)
    report = asyncio.run(_drain(extraction))
    view = extraction.status(limit=1000)
    mine = [job for job in view.jobs if job.session_id == source.session_id]
    if not report.ran and any(job.status == "pending" for job in mine):
        # No pass could run although jobs wait: another process holds the runner.
        raise JobBusyError(Messages.JOBS_RUNNER_BUSY)
    saved = _saved(context, source.session_id)
    lines = [
        f"transcript: {counted(len(turns), 'finished turn')}, session {source.session_id}",
        f"batches closed now: {closed}; model calls: {report.calls}",
        *(_job_line(job) for job in mine),
        f"facts from this transcript in memory: {len(saved)}",
        *(f"  - {text}" for text in saved),
    ]
    context.emit(
        "\n".join(lines),
        {
            "session": source.session_id,
            "turns": len(turns),
            "batches_closed": closed,
            "calls": report.calls,
            "jobs": [_job_json(job) for job in mine],
            "facts": saved,
        },
    )
    return 0 if all(job.status in ("completed", "nothing", "skipped") for job in mine) else 1


def _read_transcript(source: TranscriptSource) -> list[SourceMessage]:
    """The transcript's messages; a file that cannot be read is a bad argument.

    Raises:
        InvalidInputError: the transcript is missing or unreadable (or not a transcript).
    """
    try:
        return source.read()
    except FileNotFoundError:
        raise InvalidInputError(Messages.TRANSCRIPT_MISSING.format(source.path)) from None
    except OSError as error:
        reason = os.strerror(error.errno) if error.errno else "unreadable"
        raise InvalidInputError(
            Messages.TRANSCRIPT_UNREADABLE.format(source.path, reason)
        ) from None


def _jobs(args: argparse.Namespace, context: Context) -> int:
    from memquill.lifecycle import JobsView, job_status

    # A default workspace not created yet has no jobs, like an unused one.
    view = (
        JobsView(())
        if context.workspace_missing
        else job_status(context.workspace, limit=max(0, args.limit))
    )
    context.emit(_status_text(view), _status_json(view))
    return 0


def _retry(args: argparse.Namespace, context: Context) -> int:
    from memquill.lifecycle import PassReport, TranscriptSource, job_status, retry_jobs

    changed = retry_jobs(context.workspace)
    report = PassReport()
    if args.transcript is not None or args.model is not None:
        if args.transcript is None or args.model is None:
            context.err.write("error[usage]: --transcript and --model go together\n")
            return 2
        model = _load(args, context)
        if model is None:
            return 2
        source = TranscriptSource(args.transcript, args.session)
        report = asyncio.run(_drain(_extraction(args, context, source, model)))
    view = job_status(context.workspace)
    text = f"jobs made eligible now: {changed}; model calls: {report.calls}\n"
    context.emit(
        text + _status_text(view),
        {"eligible_now": changed, "calls": report.calls, **_status_json(view)},
    )
    return 0


def _load(args: argparse.Namespace, context: Context) -> TextModel | None:
    try:
        return load_model(args.model)
    except (ImportError, AttributeError, ValueError) as error:
        context.err.write(escape_controls(f"error[usage]: {error}") + "\n")
        return None


def _extraction(
    args: argparse.Namespace, context: Context, source: TranscriptSource, model: TextModel
) -> Extraction:
    from memquill.enhance import AuxiliaryRunner, default_runner
    from memquill.lifecycle import Extraction

    runner = AuxiliaryRunner(state_dir=args.state_dir) if args.state_dir else default_runner()
    return Extraction(context.session(), source, model=model, runner=runner)


async def _drain(extraction: Extraction) -> PassReport:
    """Passes until one changes nothing (jobs waiting for a retry time stay waiting)."""
    from memquill.lifecycle import PassReport

    total = PassReport()
    for _ in range(_MAX_PASSES):
        report = await extraction.aresume()
        total = total.merged(report)
        if report.error is not None:
            raise report.error
        if not report.calls and not report.settled:
            break
    return total


def _saved(context: Context, session_id: str) -> list[str]:
    records = context.session("read").store.snapshot().records
    return [
        record.content
        for record in records
        if record.status == "active"
        and record.source.get("kind") == "conversation"
        and record.source.get("sessionId") == session_id
    ]


def _status_text(view: JobsView) -> str:
    lines = [
        f"extraction jobs (latest {len(view.jobs)}); turns waiting for a batch: "
        f"{view.pending_turns}"
        + ("; LEDGER FULL: extraction stopped" if view.capacity_reached else "")
    ]
    lines.extend(_job_line(job) for job in view.jobs)
    if not view.jobs:
        lines.append("  (no jobs)")
    return "\n".join(lines)


def _job_line(job: JobView) -> str:
    parts = [f"  {job.id[:12]}  {job.status}"]
    if job.reason:
        parts.append(f"({job.reason})")
    parts.append(f"attempts {job.attempts}/3")
    if job.retry_at is not None:
        parts.append(
            "retry after " + datetime.fromtimestamp(job.retry_at / 1000).isoformat(" ", "seconds")
        )
    if job.requires_configuration_change:
        parts.append("waits for another model key or configuration")
    return " ".join(parts)


def _job_json(job: JobView) -> dict[str, object]:
    return {
        "id": job.id,
        "session": job.session_id,
        "status": job.status,
        "reason": job.reason,
        "updatedAt": job.updated_at,
        "retryAt": job.retry_at,
        "requiresConfigurationChange": job.requires_configuration_change,
        "attempts": job.attempts,
        "canRetry": job.can_retry,
    }


def _status_json(view: JobsView) -> dict[str, object]:
    return {
        "jobs": [_job_json(job) for job in view.jobs],
        "capacityReached": view.capacity_reached,
        "pendingTurns": view.pending_turns,
        "canRetry": view.can_retry,
    }
