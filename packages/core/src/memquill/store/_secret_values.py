"""Judging a candidate credential value: placeholder, code, number, or key material.

The detectors in :mod:`memquill.secret_detectors` find *where* a credential may be (after a
``password =``, in a URL, after ``curl -u``); these functions decide whether the value found
there is one. Prose about secrets, documentation placeholders (``<your-key>``, ``xxxx``,
``${TOKEN}``, ``changeme``) and code that only names a secret (``os.environ["TOKEN"]``,
``settings.SECRET_KEY``) are not credentials.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

_PLACEHOLDER: Final = re.compile(
    r"""^(?:
        <[^>]*>? | \[[^\]]*\]? | \{\{.*\}\}? | \{[^}]*\} | \$.* | %[A-Za-z_(]+.*
        | (?P<rep>[xX*.•#-])(?P=rep){2,}.*
        | your[-_ ]?[-\w]* | (?:my|the)[-_ ][-\w]*  # not ``mysql123``: "my"/"the" need a separator
        | \w*(?:example|placeholder|redacted|changeme|dummy|sample)\w*
        | none | null | nil | undefined | true | false | env | secret | password | pass | pw
        | passwd | passphrase | token | value | key | str | string | bytes | int | required
        | optional | hidden | masked | empty | unset | todo | tbd | n/?a | secretstr
    )$""",
    re.VERBOSE | re.IGNORECASE,
)
# Documentation pads a key-shaped token (``sk-xxxxxxxx``) or marks it (``…EXAMPLEKEY``).
_FILLER: Final = re.compile(r"x{6,}|X{6,}|\*{3,}|•{3,}|EXAMPLE|example")
# The start of a value that is code or templating rather than a literal.
# A path (``/run/secrets/db``, ``~/.pgpass``, ``.env``) names where a secret is kept.
_INDIRECT_START: Final = frozenset("$%{<[(!&*@/~.")
_CALL_OR_INDEX: Final = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*[\[(]")
_DOTTED_NAME: Final = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_DECIMAL: Final = re.compile(r"^[~≈<>]?[0-9]+[.,][0-9]+%?$")
_SYMBOLS: Final = frozenset("!@#$%^&*+=?~/|\\")
_TRAILING: Final = ".,;:!?)]}>\"'`"
_NUMERIC_NAMES: Final = re.compile(r"(?i:pass|pwd|passwd|passphrase|password|pin|密码|口令)$")


def has_filler(text: str) -> bool:
    """Whether ``text`` is padded (``xxxxxx``, ``***``) or marked ``EXAMPLE`` like docs do."""
    return _FILLER.search(text) is not None


def is_placeholder(value: str) -> bool:
    """Whether an assigned value is obviously not a real credential."""
    stripped = value.strip("'\"` ,;")
    return bool(_PLACEHOLDER.match(stripped)) or has_filler(stripped)


def looks_like_key_material(value: str) -> bool:
    """A single token with a digit or a symbol, as passwords and keys have (words do not)."""
    return any(char.isdigit() or char in _SYMBOLS for char in value)


def _is_code(value: str) -> bool:
    return bool(_CALL_OR_INDEX.match(value) or _DOTTED_NAME.match(value.rstrip(";")))


def _same_name(name: str, value: str) -> bool:
    """``api_key=api_key``, ``token: token``: a variable handed on, not a literal."""
    return re.sub(r"[\W_]", "", name).lower().endswith(re.sub(r"[\W_]", "", value).lower())


def assigned_value_is_secret(
    name: str, value: str, *, quoted: bool, colon: bool, last: bool
) -> bool:
    """Whether ``name <op> value`` holds a credential.

    Args:
        name: the assigned name (``DB_PASSWORD``, ``api_key``, ``AccountKey``).
        value: the value, without its quotes.
        quoted: the value was quoted (a literal, as in JSON or code).
        colon: the operator was ``:`` (YAML, JSON, headers, prose) rather than ``=``.
        last: nothing but a separator or the end of the line follows the value.
    """
    if not quoted:
        value = value.rstrip(")]}>")
    if not value or is_placeholder(value) or value[0] in _INDIRECT_START:
        return False
    if not quoted and (_is_code(value) or _same_name(name, value)):
        return False
    if _DECIMAL.match(value):
        return False  # ``1 token = 0.75 words``
    if value.isdigit() and not _NUMERIC_NAMES.search(name):
        return False  # ``max_token=4096``: a count, not a credential
    if quoted or not colon:
        return len(value) >= 4
    # ``key: value`` also reads like prose ("secret: keep it safe"), so an unquoted value must
    # end the clause and look like key material.
    return last and len(value) >= 6 and looks_like_key_material(value)


def spoken_value_is_secret(value: str, *, quoted: bool, last: bool) -> bool:
    """Whether ``… password is <value>`` names the password itself (not "is on the fridge").

    Args:
        value: the word after "is" (or the quoted text).
        quoted: it was quoted.
        last: the line ends right after it.
    """
    if not quoted:
        # "is 16-characters long" describes the password; a password ends its clause.
        ends_clause = last or value[-1] in _TRAILING
        value = value.rstrip(_TRAILING)
        if not ends_clause:
            return False
    if not value or is_placeholder(value) or value[0] in _INDIRECT_START:
        return False
    if quoted:
        return len(value) >= 4
    return len(value) >= 6 and looks_like_key_material(value)


def basic_credentials_decode(token: str) -> bool:
    """Whether a ``Basic`` token decodes to printable ``user:password`` with a password."""
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return False
    _, colon, password = decoded.partition(":")
    return bool(colon and password) and decoded.isprintable() and not is_placeholder(password)
