"""The management page as one server-rendered HTML document, its side panels included.

Everything a person reads is here, escaped, and readable without the script: the facts with
their provenance, age and revision, search results (the tools' own search), history, health and
extraction jobs. The script (``assets/page.js``) only adds the changes, which must be sent as
JSON, and the forget confirmation and the conflict view. Searching is a plain ``GET`` form.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Final, cast

from memquill.manage._state import JOB_REASONS, JOB_STATUSES
from memquill.query import SearchResult

# ----------------------------------------------------------------------------------------------
# The page's side panels as HTML: the store's health (doctor) and the extraction jobs.
#
# Both are rendered from the same data ``GET /api/memory`` returns, escaped everywhere; a panel
# that cannot be filled says so in words instead of disappearing.


def _bytes(count: int) -> str:
    return f"{count / 1024:,.1f} KiB" if count < 1024 * 1024 else f"{count / 1048576:,.2f} MiB"


def store_problem(error: Mapping[str, object], doctor: Mapping[str, object], workspace: str) -> str:
    """The notice shown instead of the facts when ``records.md`` cannot be read: which record
    and why, then one way out. When ``memquill doctor --fix`` can repair the file, the page
    offers that repair (and names the command); when it cannot, the page says why and that the
    hand edit must be undone or a copy put back. Nothing is written meanwhile."""
    diagnosis = doctor.get("diagnosis")
    index = error.get("recordIndex")
    reason = (
        f": {escape(str(cast(Mapping[str, object], diagnosis)['reason']))}"
        if isinstance(diagnosis, Mapping)
        else ""
    )
    where = (
        f"<p>The first record that does not read is <strong>record {index + 1}</strong> "
        f"(counting from 1){reason}.</p>"
        if isinstance(index, int)
        else ""
    )
    code = f' <span class="code">({escape(str(error.get("code", "")))})</span>'
    return (
        '<section class="problem" role="alert" aria-labelledby="problem-title">'
        '<h2 id="problem-title"><code>memory/records.md</code> cannot be read</h2>'
        f"{where}{_way_out(error, doctor.get('repair'), workspace, code)}</section>"
    )


def _way_out(error: Mapping[str, object], repair: object, workspace: str, code: str) -> str:
    nothing = "Nothing is saved, corrected or forgotten until it reads again."
    plan = cast(Mapping[str, object], repair) if isinstance(repair, Mapping) else None
    changes: Sequence[object] = (
        cast(Sequence[object], plan.get("changes") or ()) if plan is not None else ()
    )
    if plan is None or plan.get("refused") is not None or not changes:
        refused = plan.get("refused") if plan is not None else None
        why = (
            f"memquill cannot repair it without guessing ({escape(str(refused))})."
            if isinstance(refused, str)
            else escape(str(error.get("message", "")))
        )
        return (
            f"<p>{why}{code} {nothing}</p><p>To fix it: open <code>memory/records.md</code> "
            "in an editor and undo the hand edit, or put back a copy of the file from before "
            "it (a backup, or a <code>memory/.records-backup-&lt;time&gt;.md</code> an earlier "
            "repair kept), then reload this page.</p>"
        )
    items = "".join(f"<li>{escape(str(change))}</li>" for change in changes)
    return (
        f'<div class="repair"><p>It was edited by hand, and memquill can repair that '
        f"without guessing.{code} {nothing}</p><p>Press <strong>Repair records.md</strong> "
        "(or run <code>memquill doctor --fix --workspace "
        f"{escape(_shell_path(workspace))}</code>): it first keeps a copy of the file as it is "
        "now (<code>memory/.records-backup-&lt;time&gt;.md</code>), then:</p>"
        f'<ul>{items}</ul><button type="button" id="repair-store" '
        f'data-revision="{escape(str(plan["revision"]))}">Repair records.md</button></div>'
    )


def _shell_path(path: str) -> str:
    """``path`` as it can be pasted into a shell (``~/`` kept so the shell expands it)."""
    if path.startswith("~/"):
        return "~/" + shlex.quote(path[2:])
    return shlex.quote(path)


def _lock(doctor: Mapping[str, object]) -> str:
    if not doctor.get("lockHeld"):
        return "free"
    holder = doctor.get("lockHolder")
    if not isinstance(holder, Mapping):
        return "held by a writer that left no details"
    details = cast(Mapping[str, object], holder)
    pid, since = details.get("pid"), details.get("since")
    return f"held by process {escape(str(pid))}" + (f" since {escape(str(since))}" if since else "")


def doctor_panel(doctor: Mapping[str, object]) -> str:
    """Capacity used and what fills it, the writer lock, staging files left behind and secret
    findings."""
    items = [
        _capacity_item(doctor),
        *_history_items(doctor),
        f"<li>Writer lock: {_lock(doctor)}</li>",
    ]
    temp = cast(Sequence[str], doctor.get("tempFiles") or [])
    if temp:
        names = ", ".join(f"<code>{escape(name)}</code>" for name in temp)
        items.append(
            f"<li>Staging files left by an interrupted write: {names}. "
            "<code>memquill doctor --fix</code> removes them.</li>"
        )
    for finding in cast(Sequence[Mapping[str, object]], doctor.get("secretFindings") or []):
        kinds = ", ".join(escape(str(kind)) for kind in cast(Sequence[object], finding["kinds"]))
        items.append(
            f"<li>Record <code>{escape(str(finding['recordId']))}</code> looks like it holds a "
            f"credential ({kinds}): forget it, or edit it without the credential.</li>"
        )
    items.extend(_sync_items(doctor))
    error = doctor.get("error")
    if isinstance(error, Mapping):
        items.append(
            f"<li>Problem: {escape(str(cast(Mapping[str, object], error)['message']))}</li>"
        )
    verdict = "Healthy." if doctor.get("ok") else "Needs attention."
    return (
        '<section aria-labelledby="doctor-title" id="doctor">'
        f'<h2 id="doctor-title">Health</h2><p>{verdict}</p><ul>{"".join(items)}</ul></section>'
    )


def _capacity_item(doctor: Mapping[str, object]) -> str:
    """The space used, against the capacity and with a meter when the store has one (a
    database workspace without a quota has none: ``maxBytes`` null)."""
    used = int(cast(int, doctor.get("usedBytes", 0)))
    bound = doctor.get("maxBytes", 1)
    if bound is None:
        return f"<li>Space used: {_bytes(used)}; no quota set</li>"
    most = int(cast(int, bound)) or 1
    percent = 100 * used / most
    return (
        f'<li><span id="capacity-label">Space used</span>: {_bytes(used)} of {_bytes(most)} '
        f'({percent:.1f}%) <meter aria-labelledby="capacity-label" min="0" max="{most}" '
        f'value="{used}" '
        f'high="{int(most * 0.9)}">{percent:.1f}%</meter></li>'
    )


def _history_items(doctor: Mapping[str, object]) -> list[str]:
    """Live facts, earlier versions (how many compacted, and what those still take), forgotten
    facts, and how deep a fact's history goes; nothing for a store that cannot be read."""
    history = doctor.get("history")
    if doctor.get("error") is not None or not isinstance(history, Mapping):
        return []
    figures = cast(Mapping[str, int | float], history)
    superseded, compacted = int(figures["superseded"]), int(figures["compacted"])
    kept = (
        f" ({compacted:,} compacted: their text dropped, "
        f"{_bytes(int(figures['compactedBytes']))} of metadata kept)"
        if compacted
        else ""
    )
    return [
        f"<li>Facts: {int(figures['live']):,} live, "
        f"{_counted(superseded, 'earlier version')}{kept}, "
        f"{_counted(int(figures['tombstones']), 'forgotten fact')}</li>",
        f"<li>History depth: up to {_counted(int(figures['deepest']), 'version')} of a fact, "
        f"{figures['meanDepth']:g} on average</li>",
    ]


def _counted(count: int, noun: str) -> str:
    return f"{count:,} {noun if count == 1 else noun + 's'}"


def _sync_items(doctor: Mapping[str, object]) -> list[str]:
    """Conflict copies, diverged facts (with a Keep button per version), renamed keys and
    records under another record key: what a workspace on several machines waits for."""
    items = [
        f"<li>A file-sync tool left <code>{escape(str(path))}</code> beside records.md: the "
        "facts only it holds are not in memory until <code>memquill sync resolve</code> "
        "merges it.</li>"
        for path in cast(Sequence[object], doctor.get("conflictCopies") or [])
    ]
    for found in cast(Sequence[Mapping[str, object]], doctor.get("diverged") or []):
        active = str(found["activeId"])
        choices = "".join(
            f"<li><q>{escape(str(version['content']))}</q> "
            f"({'kept for now' if version['id'] == active else 'from another machine'}) "
            f'<button type="button" class="keep-version" data-id="{escape(str(version["id"]))}" '
            f'data-revision="{escape(str(version["recordRevision"]))}">Keep this one</button>'
            "</li>"
            for version in cast(Sequence[Mapping[str, object]], found["versions"])
        )
        items.append(
            '<li class="diverged">This fact was corrected differently on two machines; the '
            f"newest correction is shown. Choose the one to keep:<ul>{choices}</ul></li>"
        )
    items.extend(
        f"<li>The key <code>{escape(str(item['key']))}</code> was taken on two machines: the "
        f"younger fact now has <code>{escape(str(item['renamed']))}</code>.</li>"
        for item in cast(Sequence[Mapping[str, object]], doctor.get("renamedKeys") or [])
    )
    items.extend(
        f"<li>{escape(str(count))} record(s) were written under record key "
        f"<code>{escape(str(key))}</code>, which this machine does not hold: import it with "
        "<code>memquill key import</code> so duplicates and tombstones are recognised.</li>"
        for key, count in cast(Mapping[str, object], doctor.get("otherKeys") or {}).items()
    )
    return items


_SHORT_ID: Final = 8
"""Characters of a job id shown at first; the whole id is one tap away."""


def _moment(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC")


def _retry_at(value: object) -> str:
    if not isinstance(value, int):
        return ""
    moment = datetime.fromtimestamp(value / 1000, UTC)
    return f"Retry not before {_moment(moment)}."


def _updated(value: object) -> str:
    if not isinstance(value, str) or not value:
        return ""
    try:
        shown = _moment(datetime.fromisoformat(value).astimezone(UTC))
    except ValueError:
        shown = value
    return f'Updated <time datetime="{escape(value)}">{escape(shown)}</time>.'


def _job(job: Mapping[str, object]) -> str:
    """One job: its status in words, why, when it may run again, when it changed, its id.

    Job ids are 64 hex digits: the first eight are shown, the whole id is in a fold, in one
    ``code`` element a tap selects for copying."""
    job_id = str(job["id"])
    status = str(job["status"])
    reason = job.get("reason")
    why = f": {escape(JOB_REASONS.get(str(reason), str(reason)))}" if reason else ""
    details = " ".join(
        part for part in (_retry_at(job.get("retryAt")), _updated(job.get("updatedAt"))) if part
    )
    short = escape(job_id[:_SHORT_ID])
    ident = (
        f'<details class="job-id"><summary>job <code>{short}</code></summary>'
        f'<code class="full">{escape(job_id)}</code></details>'
        if len(job_id) > _SHORT_ID
        else f'<p class="job-id">job <code>{short}</code></p>'
    )
    return (
        f'<li class="job"><p><strong>{escape(JOB_STATUSES.get(status, status))}</strong>{why}.'
        f'{" " if details else ""}<span class="meta">{details}</span></p>{ident}</li>'
    )


def jobs_panel(enhancement: Mapping[str, object]) -> str:
    """The last extraction jobs with status, reason and retry time, and the Retry button."""
    head = (
        '<section aria-labelledby="jobs-title" id="jobs">'
        '<h2 id="jobs-title">Automatic extraction</h2>'
    )
    if "error" in enhancement:
        return (
            f'{head}<p class="unavailable">Extraction status is unavailable. Facts can still be '
            "added, corrected and forgotten by hand.</p></section>"
        )
    jobs = cast(Sequence[Mapping[str, object]], enhancement.get("jobs") or [])
    listing = (
        '<h3 id="jobs-list">Last jobs</h3><ol class="jobs" aria-labelledby="jobs-list">'
        f"{''.join(_job(job) for job in jobs)}</ol>"
        if jobs
        else "<p>No extraction jobs yet.</p>"
    )
    waiting = int(cast(int, enhancement.get("pendingTurns", 0)))
    notes = f"<p>{waiting} turn{'' if waiting == 1 else 's'} waiting for the next batch.</p>"
    if enhancement.get("capacityReached"):
        notes += "<p>The turn log is full (5,000 turns); new turns are no longer recorded.</p>"
    button = (
        '<button type="button" id="retry-jobs">Retry extraction now</button>'
        if enhancement.get("canRetry")
        else ""
    )
    return f"{head}{notes}{listing}{button}</section>"


_SHORT: Final = 16
_SEARCH_TITLE: Final = '<h2 id="search-title">Search</h2>'
_HEAD: Final = (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    '<link rel="stylesheet" href="/assets/page.css">'
    '<script src="/assets/page.js" defer></script>'
)
_FORGET_DIALOG: Final = (
    '<dialog id="forget-dialog" aria-labelledby="forget-title" aria-describedby="forget-why">'
    '<form method="dialog"><h2 id="forget-title">Forget this fact?</h2>'
    '<blockquote id="forget-text"></blockquote>'
    '<p id="forget-why">Forgetting removes this fact and every earlier version of it from '
    "<code>memory/records.md</code>. It never comes back: there is no undo, and neither a "
    "repeated save nor a re-extraction from the same conversation can bring it back. "
    "Only a note that it existed (its id and where it came from) is kept.</p>"
    '<div class="actions"><button value="cancel" autofocus>Keep it</button>'
    '<button value="forget" id="forget-confirm" class="danger">Forget for good</button></div>'
    "</form></dialog>"
)


def _record(record: Mapping[str, object], *, actions: bool) -> str:
    record_id = str(record["id"])
    revision = str(record["recordRevision"])
    updated = escape(str(record["updatedAt"]))
    status = str(record["status"])
    badge = (
        ""
        if status == "active"
        else f'<span class="badge">{escape(str(record["statusText"]))}</span> '
    )
    buttons = (
        '<div class="actions"><button type="button" data-action="edit">Edit</button>'
        '<button type="button" data-action="forget" class="danger">Forget</button></div>'
        if actions and status == "active"
        else ""
    )
    content = escape(str(record["content"])) if record["content"] else "<em>(content removed)</em>"
    expires = record.get("expiresAt")
    expiry = (
        f' · <span class="expiry">expires <time datetime="{escape(str(expires))}">'
        f"{escape(str(expires)[:16])}Z</time></span>"
        if isinstance(expires, str)
        else ""
    )
    return (
        f'<article class="record {escape(status)}" id="record-{escape(record_id)}" '
        f'data-id="{escape(record_id)}" data-revision="{escape(revision)}">'
        f'<p class="content">{content}</p>'
        f'<p class="meta">{badge}<span class="provenance">{escape(str(record["provenance"]))}'
        f'</span> · <span>updated <time datetime="{updated}" title="{updated}">'
        f"{escape(str(record['age']))}</time></span>{expiry} · <span>revision "
        f'<code title="{escape(revision)}">{escape(revision[:_SHORT])}</code></span> · '
        f'<span>id <code title="{escape(record_id)}">{escape(record_id[:8])}</code></span></p>'
        f"{buttons}</article>"
    )


def _search(
    query: str, result: SearchResult | None, records: Mapping[str, Mapping[str, object]]
) -> str:
    form = (
        '<form method="get" action="/" role="search" class="inline">'
        '<label for="q">Search memory</label>'
        f'<input id="q" name="q" type="search" value="{escape(query)}" maxlength="2000">'
        '<button type="submit">Search</button>'
        + ('<a href="/">Clear</a>' if query else "")
        + "</form>"
    )
    if result is None:
        return f'<section aria-labelledby="search-title">{_SEARCH_TITLE}{form}</section>'
    if result.error is not None:
        body = f'<p class="error" role="alert">{escape(result.error)}</p>'
    elif not result.hits:
        body = "<p>No matching memories found.</p>"
    else:
        items: list[str] = []
        for hit in result.hits:
            record = records.get(hit.record_id or "")
            if record is not None:
                items.append(_record(record, actions=True))
            else:
                items.append(
                    f'<article class="note"><p class="meta"><code>{escape(hit.path)}</code> '
                    f'line {hit.line}</p><p class="content">{escape(hit.snippet)}</p></article>'
                )
        body = "".join(items)
    warnings = "".join(f'<p class="warning">{escape(w)}</p>' for w in result.warnings)
    return (
        '<section aria-labelledby="search-title" id="search-results">'
        f'<h2 id="search-title">Search</h2>{form}<p>Results for “{escape(query)}”:</p>'
        f"{warnings}{body}</section>"
    )


def _add_form(enabled: bool) -> str:
    disabled = "" if enabled else " disabled"
    return (
        '<section aria-labelledby="add-title"><h2 id="add-title">Add a fact</h2>'
        '<form id="add-form"><label for="add-content">What should be remembered?</label>'
        f'<textarea id="add-content" name="content" rows="3" required{disabled}></textarea>'
        f'<button type="submit"{disabled}>Remember</button></form></section>'
    )


def render_page(
    workspace: str,
    state: Mapping[str, object],
    *,
    query: str = "",
    search: SearchResult | None = None,
) -> str:
    """The whole page for ``state`` (the ``GET /api/memory`` answer), with search results."""
    records = cast(Sequence[Mapping[str, object]], state["records"])
    revision = state.get("revision")
    by_id = {str(record["id"]): record for record in records}
    active = [r for r in records if r["status"] == "active"]
    history = [r for r in records if r["status"] != "active"]
    active.sort(key=lambda r: str(r["updatedAt"]), reverse=True)
    error = state.get("error")
    if isinstance(error, Mapping):
        facts = store_problem(
            cast(Mapping[str, object], error),
            cast(Mapping[str, object], state["doctor"]),
            workspace,
        )
    else:
        listing = (
            "".join(_record(r, actions=True) for r in active) or "<p>Nothing remembered yet.</p>"
        )
        older = "".join(_record(r, actions=False) for r in reversed(history))
        facts = (
            f'<section aria-labelledby="facts-title" id="facts"><h2 id="facts-title">Facts '
            f"({len(active)})</h2>{listing}</section>"
            + (
                f'<section id="history"><details><summary>History: {len(history)} replaced or '
                f"forgotten versions</summary>{older}</details></section>"
                if history
                else ""
            )
        )
    summary = (
        f"store revision <code>{escape(str(revision)[:_SHORT])}</code>"
        if isinstance(revision, str)
        else "store unreadable"
    )
    return (
        f"{_HEAD}<title>Memory · {escape(workspace)}</title></head>"
        f'<body data-revision="{escape(str(revision or ""))}">'
        f"<header><h1>Memory</h1><p><code>{escape(workspace)}</code> · {summary}</p></header>"
        '<div id="status" role="status" aria-live="polite"></div>'
        f"<main>{_add_form(isinstance(revision, str))}"
        f"{_search(query, search, by_id)}{facts}"
        f"{doctor_panel(cast(Mapping[str, object], state['doctor']))}"
        f"{jobs_panel(cast(Mapping[str, object], state['enhancement']))}</main>"
        f"{_FORGET_DIALOG}</body></html>"
    )
