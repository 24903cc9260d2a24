"""The guard both suites end with: a suite test is inherited as is, or excused with an xfail.

Like LangChain's standard tests, memquill's suites refuse silent opt-outs: a test method a
subclass overrides or deletes without ``@pytest.mark.xfail(reason=...)`` is reported.
"""

from __future__ import annotations


def unexcused_overrides(suite: type, subclass: type) -> list[str]:
    """The names of ``suite``'s tests that ``subclass`` overrides or removes without an xfail
    mark that gives a reason."""
    bad: list[str] = []
    for name in dir(suite):
        if not name.startswith("test_"):
            continue
        ours = getattr(subclass, name, None)
        if ours is getattr(suite, name):
            continue
        marks = getattr(ours, "pytestmark", [])
        if not any(m.name == "xfail" and m.kwargs.get("reason") for m in marks):
            bad.append(name)
    return bad
