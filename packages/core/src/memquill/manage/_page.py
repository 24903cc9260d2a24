"""The management page as one server-rendered HTML document.

Everything a person reads is here, escaped, and readable without the script: the facts with
their provenance, age and revision, search results (the tools' own search), history, health and
extraction jobs. The script (``assets/page.js``) only adds the changes, which must be sent as
JSON, and the forget confirmation and the conflict view. Searching is a plain ``GET`` form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Final, cast

from memquill.manage._panels import doctor_panel, jobs_panel, store_problem
from memquill.query import SearchResult

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
