"""Every text the memory tool answers with, one constant each.

The first group is the SDK's reference implementation's wording (``BetaLocalFilesystemMemoryTool``
in ``anthropic/lib/tools/_beta_builtin_memory_tool.py``), kept verbatim so a model sees the same
answers whichever backend serves it; the conformance tests compare them with the reference
itself. The second group is memquill's own, for what the reference never refuses (credentials,
oversized or empty files, carriage returns, a deleted file created again by a repeated command)
or answers only with an operating-system exception.
"""

from __future__ import annotations

from typing import Final


class Texts:
    """The memory tool's answers (``str.format`` templates)."""

    # -- the reference's wording ------------------------------------------------------------
    PATH_PREFIX: Final = "Path must start with /memories, got: {path}"
    ESCAPES: Final = "Path {path} would escape /memories directory"
    MISSING: Final = "The path {path} does not exist. Please provide a valid path."
    NOT_A_FILE: Final = "The path {path} is not a file."
    LISTING: Final = (
        "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
    )
    NUMBERED: Final = "Here's the content of {path} with line numbers:"
    CREATED: Final = "File created successfully at: {path}"
    EXISTS: Final = "File {path} already exists"
    NO_MATCH: Final = (
        "No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
    )
    MANY_MATCHES: Final = (
        "No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
        "{lines}. Please ensure it is unique"
    )
    REPLACED: Final = (
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):"
    )
    INSERT_LINE: Final = (
        "Invalid `insert_line` parameter: {line}. It should be within the range [0, {count}]."
    )
    INSERTED: Final = "The file {path} has been edited."
    DELETE_ROOT: Final = "Cannot delete the /memories directory itself"
    DELETE_MISSING: Final = "The path {path} does not exist"
    DELETED: Final = "Successfully deleted {path}"
    RENAME_ROOT: Final = "Cannot rename the /memories directory itself"
    DESTINATION_EXISTS: Final = "The destination {path} already exists"
    RENAMED: Final = "Successfully renamed {old} to {new}"
    CLEARED: Final = "All memory cleared"

    # -- memquill's own -----------------------------------------------------------------------
    PATH_ROOT: Final = "Path must be /memories or start with /memories/, got: {path}"
    PATH_NAME: Final = (
        "The path {path} has a name memquill cannot keep: memory paths may not hold control "
        "characters or unpaired surrogates."
    )
    PATH_LONG: Final = (
        "The path {path} is too long for memquill: below /memories it may have at most "
        "{limit} characters once spaces, punctuation and non-ASCII letters are escaped "
        "(%XX per UTF-8 byte). Use a shorter name."
    )
    INSIDE_A_FILE: Final = "The path {parent} is a file, so it cannot hold {path}."
    INTO_ITSELF: Final = "Cannot move {old} into itself ({new})."
    CARRIAGE_RETURN: Final = (
        "memquill keeps memory files with \\n line endings only, and this text has a carriage "
        "return (\\r). Write it again with \\n line endings and no \\r; {path} is unchanged."
    )
    EMPTY: Final = (
        "memquill keeps no empty memory files: write at least one visible character to {path}, "
        "or delete it."
    )
    TOO_LONG: Final = (
        "{path} would hold {units:,} characters (UTF-16 code units); memquill keeps at most "
        "{limit:,} per memory file. Split it into several files; {path} is unchanged."
    )
    CREDENTIAL: Final = (
        "memquill refused to write {path}: the text holds credential material ({kinds}). Leave "
        "the secret out (say where it is kept instead, for example 'the deploy key is in the "
        "team vault') and try again; {path} is unchanged."
    )
    FORGOTTEN: Final = (
        "memquill will not create {path} again: a file with exactly this text was deleted "
        "before, and a deleted memory never comes back through a tool or a conversation. If "
        "the user wants it again now, create it with different text (for example, add the "
        "date)."
    )
    CONTENDED: Final = (
        "{path} kept changing while memquill applied the command ({attempts} attempts); view "
        "it and try again."
    )
    REFUSED: Final = "memquill could not apply the command to {path}: {reason}"
