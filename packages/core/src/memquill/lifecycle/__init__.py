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
    MessageRole,
    MessageSource,
    RecordedMessages,
    SessionGate,
    SourceMessage,
    ToolCall,
    ToolOutput,
    TranscriptSource,
)
from memquill.lifecycle._job import PassReport
from memquill.lifecycle._status import JobsView, JobView, job_status, retry_jobs
from memquill.lifecycle._turns import CommittedTurn, committed_turns

if typing.TYPE_CHECKING:
    from memquill.lifecycle._host import binding_gate as binding_gate

__all__ = [
    "CommittedTurn",
    "Extraction",
    "JobView",
    "JobsView",
    "MessageRole",
    "MessageSource",
    "PassReport",
    "RecordedMessages",
    "SessionGate",
    "SourceMessage",
    "ToolCall",
    "ToolOutput",
    "TranscriptSource",
    "committed_turns",
    "job_status",
    "retry_jobs",
]

_INTERNAL = {
    "binding_gate": "memquill.lifecycle._host",
    "BATCH_TURNS": "memquill.lifecycle._ledger",
    "EXTRACTION_MAX_TOKENS": "memquill.lifecycle._prompt",
    "EXTRACTION_SYSTEM_PROMPT": "memquill.lifecycle._prompt",
    "LEDGER_PATH": "memquill.lifecycle._ledger",
    "MAX_ATTEMPTS": "memquill.lifecycle._ledger",
    "MAX_CALLS_PER_PASS": "memquill.lifecycle._job",
    "MAX_FACTS": "memquill.lifecycle._prompt",
    "MAX_JOBS": "memquill.lifecycle._ledger",
    "MAX_LEDGER_BYTES": "memquill.lifecycle._ledger",
    "MAX_TURNS": "memquill.lifecycle._ledger",
    "STATUS_JOBS": "memquill.lifecycle._status",
    "Fact": "memquill.lifecycle._prompt",
    "Job": "memquill.lifecycle._ledger",
    "JobStatus": "memquill.lifecycle._ledger",
    "Ledger": "memquill.lifecycle._ledger",
    "LedgerFile": "memquill.lifecycle._ledger",
    "PromptTurn": "memquill.lifecycle._prompt",
    "Refusal": "memquill.lifecycle._turns",
    "SessionState": "memquill.lifecycle._host",
    "SourceRef": "memquill.lifecycle._ledger",
    "always_ready": "memquill.lifecycle._host",
    "extraction_prompt": "memquill.lifecycle._prompt",
    "has_memory_write": "memquill.lifecycle._turns",
    "parse_facts": "memquill.lifecycle._prompt",
    "read_transcript": "memquill.lifecycle._host",
    "turn_id": "memquill.lifecycle._ledger",
}
"""Names this facade serves but does not export: the core's own (what the parts above import)
and names that left its public list. Outside memquill they resolve with a
``DeprecationWarning``, until they are removed."""

__getattr__, __dir__ = _lazy_exports(__name__, _INTERNAL)
