"""Automatic extraction: facts from finished conversation turns, saved only with proof.

A host reports each finished turn; every third turn of a session closes a batch; a runner asks
the host's model for the durable facts the user stated, accepts an answer only if every fact
quotes the user's own message verbatim, and saves the facts through the one write path (source
``conversation``, keys ``<job id>:<i>``), so a fact the user had memquill forget is never
extracted again. The job ledger (``.assistant/memory-jobs.json``, private to queries) holds
references only and survives crashes: a batch is paid for at most three times, a crash never
loses or repeats one, and a batch saved just before a crash is recognised without a second
model call. ``docs/extraction.md`` is the full guide.

Wiring it into a host::

    from memquill import open_session
    from memquill.lifecycle import CommittedTurn, Extraction, TranscriptSource

    session = open_session("/home/me/notes")
    extraction = Extraction(session, TranscriptSource("chat.jsonl"), model=my_text_model)
    extraction.record(CommittedTurn(session_id, user_message_id, assistant_message_id,
                                    user_text=user_text))   # after the reply is stored
    extraction.resume()                                     # at start-up: restart recovery

The status API, for a jobs panel or ``memquill jobs`` (small and typed on purpose)::

    view = job_status(workspace)   # JobsView: jobs (newest first), capacity_reached,
                                   # pending_turns; read only, creates nothing
    retry_jobs(workspace)          # clear retry waits (never the attempt budget), then
    extraction.resume()            # ... a pass takes them (Extraction.retry does both)

The LangChain middleware (``memquill_langchain.MemquillMiddleware``), the LlamaIndex memory
block (``memquill_llamaindex.MemquillMemoryBlock``) and ``memquill extract`` are built on this.
"""

import typing

from memquill.lazy import lazy_exports as _lazy_exports
from memquill.lifecycle._extraction import Extraction
from memquill.lifecycle._host import (
    MessageSource,
    RecordedMessages,
    SourceMessage,
    TranscriptSource,
)
from memquill.lifecycle._job import JobsView, JobView, job_status, retry_jobs
from memquill.lifecycle._turns import CommittedTurn, committed_turns

if typing.TYPE_CHECKING:
    from memquill.lifecycle._host import (
        MessageRole as MessageRole,
        SessionGate as SessionGate,
        SessionState as SessionState,
        ToolCall as ToolCall,
        ToolOutput as ToolOutput,
        always_ready as always_ready,
        binding_gate as binding_gate,
        read_transcript as read_transcript,
    )
    from memquill.lifecycle._job import (
        MAX_CALLS_PER_PASS as MAX_CALLS_PER_PASS,
        STATUS_JOBS as STATUS_JOBS,
        PassReport as PassReport,
        retryable as retryable,
    )
    from memquill.lifecycle._ledger import (
        BATCH_TURNS as BATCH_TURNS,
        LEDGER_PATH as LEDGER_PATH,
        MAX_ATTEMPTS as MAX_ATTEMPTS,
        MAX_JOBS as MAX_JOBS,
        MAX_LEDGER_BYTES as MAX_LEDGER_BYTES,
        MAX_TURNS as MAX_TURNS,
        Job as Job,
        JobStatus as JobStatus,
        Ledger as Ledger,
        LedgerFile as LedgerFile,
        SourceRef as SourceRef,
        turn_id as turn_id,
    )
    from memquill.lifecycle._prompt import (
        EXTRACTION_MAX_TOKENS as EXTRACTION_MAX_TOKENS,
        EXTRACTION_SYSTEM_PROMPT as EXTRACTION_SYSTEM_PROMPT,
        MAX_FACTS as MAX_FACTS,
        Fact as Fact,
        PromptTurn as PromptTurn,
        extraction_prompt as extraction_prompt,
        parse_facts as parse_facts,
    )
    from memquill.lifecycle._turns import Refusal as Refusal, has_memory_write as has_memory_write

__all__ = [
    "CommittedTurn",
    "Extraction",
    "JobView",
    "JobsView",
    "MessageSource",
    "RecordedMessages",
    "SourceMessage",
    "TranscriptSource",
    "committed_turns",
    "job_status",
    "retry_jobs",
]

__getattr__, __dir__ = _lazy_exports(__name__)
