"""Every message memquill shows a person or a model, one constant each.

Call sites name a constant instead of writing text, so no two places word the same failure
differently and ``docs/errors.md`` can list them. :mod:`memquill.errors` pairs them with codes.
"""

from __future__ import annotations

from typing import Final

__all__ = ["Messages"]


class Messages:
    """The exact message texts, one constant each, so no call site can reword them."""

    STALE: Final = "Memory changed. Refresh before saving."
    CHANGED_WHILE_SAVING: Final = "Memory changed while saving."
    KEY_REUSED: Final = (
        "Idempotency key was already used for different memory content or provenance."
    )
    BATCH_SIZE: Final = "Provide 1–40 memory candidates."
    CONTENT: Final = "Memory must contain 1–16000 characters."
    CONTROL_CHARACTER: Final = (
        "Memory must not contain control characters other than tab and newline (found {})."
    )
    SOURCE_REQUIRED: Final = "A real source is required."
    TOOL_SOURCE: Final = "Tool memories need a trusted session ID."
    CONVERSATION_SOURCE: Final = "Conversation memories need session and message IDs."
    SOURCE_REFERENCE: Final = "Invalid source reference."
    SOURCE_ROLE: Final = "Invalid source role."
    KEY_REQUIRED: Final = "An idempotency key is required."
    RESERVATION: Final = "Invalid storage reservation."
    REVISION_FORMAT: Final = (
        "A revision is 64 lowercase hexadecimal characters (the CLI also takes a unique prefix "
        "of at least 8)."
    )
    STDIN_NOT_UTF8: Final = "The standard input is not UTF-8 text (check its encoding)."
    BLOCKED: Final = (
        "This fact was corrected or forgotten before, so it is not saved again (a forgotten "
        "fact never comes back). To save it anew on purpose, give it another idempotency key."
    )
    ITEM_FORGOTTEN: Final = (
        "An item with these words was forgotten at {when}, so it is not saved again (a "
        "forgotten fact never comes back); a person may save it again with `memquill remember`."
    )
    CAPACITY_SETTING: Final = (
        "The store's capacity is a whole number of MiB from 1 to 64 (default 2): check "
        "store.capacityMiB in .assistant/config.json, --capacity or the capacity argument."
    )
    REMEMBERED_AGAIN: Final = (
        "Note: a fact with these words was forgotten at {when}; you saved it again on purpose "
        "(a tool or a conversation could not)."
    )
    ID_AMBIGUOUS: Final = "That record id prefix matches more than one record; give more of it."
    SECRET: Final = "Remove credential material before saving memory."  # noqa: S105
    SECRET_KIND: Final = "Remove credential material before saving memory: it looks like {}."  # noqa: S105
    ABSOLUTE_WORKSPACE: Final = "An absolute workspace is required."
    WORKSPACE_NOT_DIR: Final = "Workspace must be a directory."
    WORKSPACE_EMPTY: Final = (
        "The --workspace option is empty: name a folder, or leave the option out to use "
        "$MEMQUILL_WORKSPACE or the default folder."
    )
    MEMORY_PATH: Final = "Memory path is not a regular workspace file."
    LOCK_HELD: Final = "Memory writer lock is held or cannot be verified."
    LOCK_RACED: Final = "Another memory writer acquired the lock."
    LOCK_RELEASE: Final = (
        "Memory writer lock could not be released; retry after checking directory permissions."
    )
    ACTIVE_NOT_FOUND: Final = "Active memory was not found."
    NOT_FOUND: Final = "Memory was not found."
    FULL: Final = (
        "Memory storage has reached its 2 MiB limit. Run `memquill compact` to drop corrected "
        "versions' old text, or forget unneeded records; do not delete source tombstones."
    )
    INSUFFICIENT: Final = (
        "Memory storage has insufficient space. Forget unneeded records before retrying."
    )
    FOREIGN: Final = (
        "Existing records.md is not a managed memory file. Back up the file and restore a "
        "valid managed version before retrying."
    )
    EDITED: Final = (
        "Memory file has external or invalid edits. Back up the file and restore a valid "
        "managed version; no changes were written."
    )
    REPAIR_HINT: Final = (
        "Run `memquill doctor` to see which record and why; `memquill doctor --fix` repairs a "
        "hand edit when that is unambiguous."
    )
    WORKSPACE_MISSING: Final = (
        "Memory storage is unavailable: the workspace folder does not exist. Create it, or "
        "choose an existing folder."
    )
    WORKSPACE_NOT_CREATED: Final = (
        "Memory storage is unavailable: the workspace folder could not be created. Check the "
        "permissions of its parent folder and free disk space."
    )
    READ_FAILED: Final = (
        "Memory could not be read. Check workspace and file permissions before retrying."
    )
    SAVE_FAILED: Final = (
        "Memory could not be saved. Check workspace permissions and free disk space before "
        "retrying."
    )
    UNAVAILABLE: Final = (
        "Memory storage is unavailable. Check workspace permissions and free disk space before "
        "retrying."
    )
    PREFLIGHT_UNAVAILABLE: Final = (
        "Memory storage is unavailable. Check workspace access, file permissions and free disk "
        "space before retrying."
    )
    STORE_LOCATION: Final = (
        "Unknown memory store location: use file or a postgresql:// connection URL."
    )
    STORE_OPTIONS: Final = (
        "The store options after # are not name=value pairs joined by &: use "
        "postgresql://…#workspace=NAME&mirror=1&idle_timeout=SECONDS."
    )
    STORE_OPTION_UNKNOWN: Final = (
        "Unknown store option {}: the options after # are workspace, mirror and idle_timeout."
    )
    STORE_OPTION_WORKSPACE: Final = (
        "The store option workspace must be 1–200 printable characters (the row's name)."
    )
    STORE_OPTION_MIRROR: Final = "The store option mirror is 1 or 0 (also true/false, yes/no)."
    STORE_OPTION_IDLE: Final = (
        "The store option idle_timeout is a number of seconds above 0 and at most 3600."
    )
    DATABASE_DRIVER: Final = (
        "The PostgreSQL store needs the optional extra: install memquill[postgres]."
    )
    DATABASE_UNAVAILABLE: Final = (
        "The memory database cannot be reached. Check the store location, the server and the "
        "credentials before retrying."
    )
    DATABASE_SCHEMA: Final = (
        "The memory database was set up by a newer memquill; upgrade memquill to use it."
    )
    DATABASE_BUSY: Final = (
        "Every connection this process keeps to the memory database stayed in use; try again."
    )
    DATABASE_SAVE_FAILED: Final = (
        "Memory could not be saved: the database connection failed during the write. The "
        "write may not have been applied; read memory again before retrying."
    )
    IMPORT_MISSING: Final = "The file to import ({}) does not exist."
    IMPORT_READ_FAILED: Final = "The file to import ({}) cannot be read: {}."
    IMPORT_NOT_REGULAR: Final = (
        "The file to import ({}) is not a regular file (a folder, a FIFO or a device is never "
        "read)."
    )
    IMPORT_TOO_LARGE: Final = (
        "The file to import is larger than 3 MiB; a records file holds at most 2 MiB. Nothing "
        "was read."
    )
    OUTPUT_IS_FOLDER: Final = "The output {} is a folder: name the file to write."
    OUTPUT_NO_FOLDER: Final = "The output {} is in a folder that does not exist."
    OUTPUT_FAILED: Final = "The output {} could not be written: {}."
    IMPORT_CHANGES_HISTORY: Final = (
        "An imported records file may edit the text of remembered facts and add new ones, but "
        "must keep every existing record's metadata and every tombstone."
    )
    IMPORT_UNREADABLE: Final = (
        "The file to import cannot be read without guessing: {reason}. Undo that edit and "
        "import again; nothing was written."
    )
    KEY_FORMAT: Final = (
        "A key is 1–200 characters: names of A–Z, a–z, 0–9, '.', '_', '-', '~' and %XX escapes, "
        "joined by single '/'; no name is '.' or '..', and a key never looks like a record id "
        "(8–36 of 0–9, a–f and '-')."
    )
    KEY_IN_USE: Final = (
        "The key {key} already names fact {id} (record revision {revision}); update that fact "
        "instead, or forget it first."
    )
    KEY_NOT_FOUND: Final = "No active fact has the key {key}."
    CORRECTED: Final = (
        "Record {old} was corrected; its current version is {current} (record revision {revision})."
    )
    BATCH_KEYS: Final = "Two facts of one batch cannot have the same key."
    BATCH_FACTS: Final = "One batch cannot rename the same fact twice."
    NO_TARGETS: Final = "Name at least one fact to forget."
    NO_MOVES: Final = "Name at least one fact to rename."
    NO_FACTS: Final = "Give at least one fact to save."
    KEY_NEEDED: Final = "Each fact saved or corrected by its key must have a key."
    TARGET_REQUIRED: Final = "Give the fact's id or its key, not both."
    EXTRA_INVALID: Final = (
        "Extra metadata must be a JSON object of at most 16000 characters when written."
    )
    WRITE_UNAUTHORIZED: Final = (
        "Memory write permission or workspace scope is no longer authorized."
    )
    # Items in namespaces (a LangGraph store): memquill.items.ItemStore.
    ITEM_ROOT: Final = (
        "The item store's root must be an existing folder (memquill never creates a folder "
        "you named): create it first."
    )
    ITEM_NAMESPACE: Final = (
        "A namespace is 1 or more non-empty text labels, each at most 255 characters once "
        "escaped as a folder name (a character outside a-z, 0-9, '_', '-', '~' takes 3 per "
        "byte of its UTF-8)."
    )
    ITEM_ROW: Final = (
        "The namespace is too long for a database store: its row name (the store's workspace, "
        "'/', and the escaped labels joined by '/') must be at most 200 characters."
    )
    ITEM_KEY: Final = (
        "An item key is non-empty text of at most 200 characters once escaped as a fact key "
        "(a character outside A-Z, a-z, 0-9, '.', '_', '-', '~' and '/' takes 3 per byte of "
        "its UTF-8)."
    )
    ITEM_VALUE: Final = (
        "An item value is a JSON object: text keys, and values that are text, finite numbers, "
        "true, false, null, lists or objects."
    )
    ITEM_TTL: Final = "A time to live is a positive number of minutes (or None: no expiry)."
    ITEM_INDEX: Final = (
        "An index is {'embed': ..., 'dims': N, 'fields': [...]}: an embed (an Embeddings, a "
        "function of texts or a provider:model name), optionally dims (a positive whole number) "
        "and fields (a list of text paths); a put takes index=False or a list of text paths."
    )
    ITEM_PATH: Final = (
        "A namespace folder under the item store's root is a symbolic link or not a folder."
    )
    NO_SESSION: Final = "Memory writes require a trusted source session."
    RECORD_KEY_UNAVAILABLE: Final = (
        "The memory record key (record-key.v1 in the user data folder) is missing, unsafe or "
        "cannot be created. It must be a 32-byte file only its owner can read."
    )
    # Merging two copies of records.md (docs/sync.md).
    MERGE_OURS_CORRUPT: Final = (
        "This copy of records.md is not a valid managed memory file, so nothing was merged. "
        "Run `memquill doctor` on it first."
    )
    MERGE_THEIRS_CORRUPT: Final = (
        "The other copy of records.md is not a valid managed memory file, so nothing was "
        "merged. Check it with `memquill doctor` where it came from."
    )
    MERGE_BASE_CORRUPT: Final = (
        "The common ancestor of the two copies of records.md is not a valid managed memory "
        "file, so nothing was merged."
    )
    CONFLICT_COPIES: Final = (
        "Memory conflict copies wait: {copies}. Facts only they hold are not in memory until "
        "`memquill sync resolve` merges them."
    )
    KEY_TEXT: Final = (
        "That is not a record key as `memquill key export` writes it (one line starting "
        "memquill-record-key:v1:), or it was damaged on the way."
    )
    NOT_A_GIT_WORKSPACE: Final = (
        "The workspace is not in a git work tree: `git init` it (or clone your repository) "
        "first, then run `memquill sync setup` again."
    )
    GIT_MISSING: Final = "The git program is not installed or did not answer."
    GIT_FAILED: Final = "git {command} failed; run it yourself to see why."
    COPY_UNREADABLE: Final = (
        "That copy of records.md cannot be read (missing, not a regular file, or over 2 MiB)."
    )
    KEY_IN_REPOSITORY: Final = (
        "The record key must never be committed: write it outside the workspace and outside "
        "any git work tree."
    )
    KEY_TO_TERMINAL: Final = (
        "The record key is not printed on a terminal. Pipe it to the other machine: "
        "memquill key export --stdout | ssh OTHER-HOST memquill key import -"
    )
    KEY_DESTINATION: Final = (
        "Say where the key goes: --output FILE (a new file only you can read) or --stdout "
        "(into a pipe)."
    )
    KEY_FILE_EXISTS: Final = "That file exists already; the key is written only to a new file."
    KEY_OF_DATABASE: Final = (
        "A database store keeps its record key in its own row, shared by every host: there "
        "is nothing to carry."
    )
    NOT_DIVERGED: Final = (
        "That record is not part of a diverged fact; `memquill sync status` lists the ones "
        "waiting for a choice."
    )
    # The search index's folder (a search keeps the index in memory; `memquill index` fails).
    INDEX_READ_ONLY: Final = (
        "The search index cannot be saved: its folder is read-only or not writable "
        "(`memquill where` shows it; MEMQUILL_INDEX_DIR moves it)."
    )
    INDEX_FULL: Final = (
        "The search index cannot be saved: the disk of its folder is full "
        "(`memquill where` shows it; MEMQUILL_INDEX_DIR moves it)."
    )
    INDEX_NOT_A_FOLDER: Final = (
        "The search index cannot be saved: a file is where its folder should be "
        "(`memquill where` shows it; MEMQUILL_INDEX_DIR moves it)."
    )
    INDEX_UNUSABLE: Final = (
        "The search index cannot be saved: its folder or file cannot be used "
        "(`memquill where` shows it; MEMQUILL_INDEX_DIR moves it)."
    )
    INDEX_IN_MEMORY: Final = "Search index kept in memory only."
    # Query-side (workspace file) messages.
    RELATIVE_PATH: Final = "Access denied: use a workspace-relative path."
    OUTSIDE: Final = "Access denied: path is outside workspace."
    SYMLINK_OUTSIDE: Final = "Access denied: path resolves outside workspace (symlink)."
    DAILY_OUTSIDE: Final = "Access denied: daily directory resolves outside workspace."
    PRIVATE: Final = "Access denied: internal memory history is not query content."
    RECORDS_COPY: Final = (
        "Access denied: a file in the records format (an export of memory) is memquill's own, "
        "never a note."
    )
    CREDENTIAL_FILE: Final = (
        "Access denied: files that usually hold credentials are not query content."
    )
    NOT_A_NOTE: Final = (
        "Access denied: only notes (.md, .markdown, .txt or the extensions the scan settings "
        "add) are query content."
    )
    HARD_LINK: Final = (
        "Access denied: a note with more than one hard link may be a file from outside the "
        "workspace."
    )
    SOURCE_MISSING: Final = "Memory source not found."
    SOURCE_UNREADABLE: Final = "Memory source is not readable."
    SOURCE_READ_FAILED: Final = "Memory source could not be read."
    NOT_REGULAR: Final = "Memory path is not a regular file."
    TOO_LARGE: Final = "Memory file exceeds the 512 KiB read limit."
    # Session binding messages.
    BINDING_SESSION: Final = "A session id is required to bind workspace memory."
    BINDING_TASK: Final = "Task sessions cannot be bound to workspace memory."
    BINDING_WORKSPACE: Final = (
        "Workspace memory can only be bound to an existing absolute workspace directory."
    )
    BINDINGS_INVALID: Final = (
        "The memory bindings file is not valid; back it up and remove it before binding again."
    )
    BINDINGS_SAVE_FAILED: Final = (
        "Memory bindings could not be saved. Check permissions and free disk space of the "
        "bindings folder before retrying."
    )
    # Extraction job ledger and answers.
    JOBS_CORRUPT: Final = (
        "The extraction job ledger (.assistant/memory-jobs.json) is not valid. Back it up and "
        "remove it to start a new one; memory itself is unchanged."
    )
    JOBS_LIMIT: Final = (
        "The extraction job ledger is full (5,000 turns or 4 MiB): automatic extraction has "
        "stopped for this workspace. Memory itself still works."
    )
    JOBS_UNSAFE_PATH: Final = (
        "The extraction job ledger path is not a regular workspace file (.assistant or a "
        "ledger file is a symlink or the wrong kind of file)."
    )
    JOBS_BUSY: Final = "Another process holds the extraction job ledger lock; retry shortly."
    JOBS_RUNNER_BUSY: Final = (
        "Another process is running extraction for this workspace; it settles these jobs "
        "(`memquill jobs` shows them). Retry when it is done."
    )
    TRANSCRIPT_MISSING: Final = "The transcript {} does not exist."
    TRANSCRIPT_UNREADABLE: Final = "The transcript {} cannot be read: {}."
    JOBS_READ_FAILED: Final = (
        "The extraction job ledger could not be read. Check workspace permissions before retrying."
    )
    JOBS_SAVE_FAILED: Final = (
        "The extraction job ledger could not be saved. Check workspace permissions and free "
        "disk space before retrying."
    )
    EXTRACTION_NOT_JSON: Final = "The extraction answer is not a JSON array of facts."
    EXTRACTION_TOO_MANY: Final = "The extraction answer has more than 8 facts."
    EXTRACTION_ITEM: Final = "The extraction answer has an invalid fact"
