"""The foundation every layer stands on, knowing nothing of records or tools.

``text`` (UTF-16 units), ``controls`` (the characters a terminal acts on), ``safe_read`` (the
bounded reader that follows no symlink), ``atomic`` (the one ``atomic_write``), ``kernel_lock``
(kernel file locks and how a writer waits for one), ``json_file`` (the one locked JSON
document), ``keyfiles`` (owner-only secret key files), ``collection`` (no cyclic garbage
collection while a large structure without cycles is built) and ``messages`` (every message shown
to a person or a model, one constant each; :mod:`memquill.errors` pairs them with codes). Each is
imported as its module (``from memquill.foundation.atomic import atomic_write``); this package
exports nothing.

The foundation modules that users and adapters import stay beside the layers:
:mod:`memquill.errors`, :mod:`memquill.paths`, :mod:`memquill.private_paths`,
:mod:`memquill.owner_only`, :mod:`memquill.jsondoc` and :mod:`memquill.lazy`.
"""
