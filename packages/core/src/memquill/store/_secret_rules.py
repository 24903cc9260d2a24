"""The built-in detectors: the shapes real credentials have, and how each match is confirmed.

They run on normalised text (:func:`memquill.store.normalize_for_detection`), so they match
ASCII shapes only. The corpus in ``tests/core/secret_corpus.py`` is the contract: every
credential there is found, and no note that only talks about credentials is
(``benchmarks/secret_filter.py`` prints the figures).

Each expression starts with a literal or a small character set, never with ``\\b`` or a
lookbehind: Python's matcher then skips ahead to candidate positions instead of trying every
one (up to 25 times faster on a long note). Word boundaries are checked in the confirmation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from memquill.store._secret_detectors import RegexDetector, SecretDetector
from memquill.store._secret_values import (
    assigned_value_is_secret,
    basic_credentials_decode,
    has_filler,
    is_placeholder,
    spoken_value_is_secret,
)

Confirm = Callable[[re.Match[str]], bool]


def _word_start(match: re.Match[str]) -> bool:
    """What ``\\b`` would say before the match: no letter, digit or ``_`` right before it."""
    start = match.start()
    if start == 0:
        return True
    before = match.string[start - 1]
    return not (before.isalnum() or before == "_")


def _token(match: re.Match[str]) -> bool:
    """A key-shaped token at a word start, not padded with ``xxxx`` or marked EXAMPLE."""
    return _word_start(match) and not has_filler(match.group(0))


def _bearer(match: re.Match[str]) -> bool:
    token = match.group("token")
    return _word_start(match) and any(c.isdigit() for c in token) and not is_placeholder(token)


def _basic(match: re.Match[str]) -> bool:
    return _word_start(match) and basic_credentials_decode(match.group("token"))


_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}$")


def _url(match: re.Match[str]) -> bool:
    """``://`` matched first; a URL scheme must stand right before it."""
    start = match.start()
    scheme = _SCHEME.search(match.string, max(0, start - 32), start)
    return scheme is not None and not is_placeholder(match.group("password"))


def _aws_secret(match: re.Match[str]) -> bool:
    """A 40-character AWS secret has upper and lower case and digits; hashes and words do not."""
    key = match.group("key")
    return (
        _word_start(match)
        and any(c.isupper() for c in key)
        and any(c.islower() for c in key)
        and any(c.isdigit() for c in key)
        and not has_filler(key)
    )


def _command_line(match: re.Match[str]) -> bool:
    return _word_start(match) and not is_placeholder(
        match.group("password") or match.group("mysql")
    )


def _name_starts(match: re.Match[str]) -> bool:
    """``pass`` alone is a common word, so as a name it needs a prefix (``DB_PASS``)."""
    name = match.group("name")
    if name is None or name.lower() != "pass":
        return True  # the expression already required a word start or a camelCase step
    start, text = match.start("name"), match.string
    return start >= 2 and text[start - 1] in "_.-" and text[start - 2].isalnum()


def _assignment(match: re.Match[str]) -> bool:
    if not _name_starts(match):
        return False
    quoted = match.group("qvalue") is not None
    value = match.group("qvalue") if quoted else match.group("value")
    tail = match.string[match.end() : match.end() + 2].lstrip(" \t")
    return assigned_value_is_secret(
        match.group("name") or match.group("camel"),
        value,
        quoted=quoted,
        colon=match.group("op") == ":",
        last=tail == "" or tail[0] in "\r\n,;}",
    )


def _spoken(match: re.Match[str]) -> bool:
    quoted = match.group("qvalue") is not None
    return _word_start(match) and spoken_value_is_secret(
        match.group("qvalue") if quoted else match.group("value"),
        quoted=quoted,
        last=match.string[match.end() : match.end() + 1] in ("", "\n", "\r"),
    )


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# Names whose value is a credential, at a word start (after ``_ . -`` too: ``DB_PASSWORD``,
# ``x-api-key``) or as the last camelCase word (``SharedAccessKey``, ``dbPassword``). The
# separator before a name is consumed rather than looked behind for, and the camelCase form
# starts with its capital: both let the matcher skip ahead (three times as fast on long notes).
_NAMES: Final = (
    r"p(?:ass(?:w(?:or)?d|phrase)|wd)|secret|token|credentials?|api[_-]?key|apikey"
    r"|(?:auth|access|refresh|bot|session)[_-]?token|client[_-]?secret"
    r"|(?:access|secret|private|signing|encryption|master|account)[_-]?key"
)
_CAMEL: Final = (
    r"[PSTCA](?<=[a-z][PSTCA])(?:ass(?:word|wd|phrase)?|wd|ecret|oken|redentials?"
    r"|(?:ccess|ccount|ecret|rivate|pi|igning|ncryption|aster)Key)"
)
_NAME: Final = (
    r"(?:(?:^|[^A-Za-z0-9])(?P<name>(?=[PpSsTtCcAaRrBbEeMm])(?i:" + _NAMES + r"|pass)|密码|口令)"
    rf"|(?P<camel>{_CAMEL}))(?![A-Za-z0-9_])"
)
_VALUE: Final = (
    r"(?P<q>['\"`])(?P<qvalue>[^'\"`\r\n]{1,512}?)(?P=q)"  # a quoted literal
    r"|(?P<value>[^\s'\"`,;]{1,512})"  # or a bare token up to a separator
)
_TOKEN_END: Final = r"(?![A-Za-z0-9_-])"  # noqa: S105 - an expression, not a password

BUILTIN_DETECTORS: Final[tuple[SecretDetector, ...]] = (
    RegexDetector(
        "private_key",
        _rx(
            r"-----(?i:BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?)-----|PuTTY-User-Key-File-[0-9]+:"
            r"|AGE-SECRET-KEY-1[0-9A-Z]{50,}"
        ),
        triggers=("private key", "putty-user-key-file", "age-secret-key"),
    ),
    RegexDetector(
        "provider_key",  # OpenAI, Anthropic, xAI and the spec's legacy prefixes
        _rx(r"[sSxXgG](?i:(?<=s)k|(?<=x)ai|(?<=g)hp|(?<=g)h_pat)-[A-Za-z0-9_-]{12,}"),
        _token,
        ("sk-", "xai-", "ghp-", "gh_pat-"),
    ),
    RegexDetector(
        "github_token",
        _rx(r"g(?:h[pousr]_[A-Za-z0-9]{30,}|ithub_pat_\w{22,})"),
        _token,
        ("gh", "github_pat_"),
    ),
    RegexDetector(
        "gitlab_token",
        _rx(
            r"gl(?:pat|dt|ptt|rt|cbt|oas|soat|ft|imt|agent|ffct|wt)-[A-Za-z0-9_-]{20,}"
            r"|GR1348941[A-Za-z0-9_-]{20,}"
        ),
        _token,
        ("gl", "gr1348941"),
    ),
    RegexDetector("slack_token", _rx(r"[xX](?i:ox[abeprs])-[A-Za-z0-9-]{10,}"), _token, ("xox",)),
    RegexDetector(
        "slack_webhook",
        _rx(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?:[A-Za-z0-9]+/){2,}"
            r"[A-Za-z0-9]{12,}"
        ),
        _token,
        ("hooks.slack.com",),
    ),
    RegexDetector(
        "aws_access_key",
        _rx(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        _token,
        ("akia", "asia", "abia", "acca"),
    ),
    RegexDetector(
        "aws_secret_key",  # a bare 40-character secret access key near the word "aws"
        _rx(
            r"[aA](?i:ws(?![A-Za-z0-9])|mazon)[^\n]{0,80}?(?<![A-Za-z0-9/+])"
            r"(?P<key>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        _aws_secret,
        ("aws", "amazon"),
    ),
    RegexDetector(
        "google_api_key",
        _rx(r"AIza[0-9A-Za-z_-]{30,}|GOCSPX-[0-9A-Za-z_-]{20,}"),
        _token,
        ("aiza", "gocspx-"),
    ),
    RegexDetector(
        "stripe_key",
        _rx(r"[sr]k_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,}"),
        _token,
        ("_live_", "_test_", "whsec_"),
    ),
    RegexDetector(
        "huggingface_token",
        _rx(rf"(?:hf_|api_org_)[A-Za-z0-9]{{30,}}{_TOKEN_END}"),
        _token,
        ("hf_", "api_org_"),
    ),
    RegexDetector("npm_token", _rx(rf"npm_[A-Za-z0-9]{{36}}{_TOKEN_END}"), _token, ("npm_",)),
    RegexDetector("pypi_token", _rx(r"pypi-AgE[A-Za-z0-9_-]{30,}"), _token, ("pypi-age",)),
    RegexDetector(
        "sendgrid_key",
        _rx(rf"SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}{_TOKEN_END}"),
        _token,
        ("sg.",),
    ),
    RegexDetector(
        "twilio_key",
        _rx(
            r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])"
            r"|[tT](?i:wilio)[^\n]{0,60}?(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])"
        ),
        _token,
        ("sk", "twilio"),
    ),
    RegexDetector(
        "discord_token",
        _rx(
            rf"[MNO][A-Za-z0-9_-]{{23,27}}\.[A-Za-z0-9_-]{{6}}\.[A-Za-z0-9_-]{{27,40}}{_TOKEN_END}"
            r"|discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}"
        ),
        _token,
        (".", "discord"),
    ),
    RegexDetector(
        "telegram_bot_token",
        _rx(rf"[0-9]{{8,10}}:[A-Za-z0-9_-]{{35}}{_TOKEN_END}"),
        _token,
        (":",),
    ),
    RegexDetector(
        "hosting_token",  # Shopify, DigitalOcean
        _rx(r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9])|do[opr]_v1_[a-f0-9]{64}"),
        _token,
        ("shp", "_v1_"),
    ),
    RegexDetector(
        "jwt",
        _rx(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        _word_start,
        ("eyj",),
    ),
    RegexDetector(
        "bearer_token",
        _rx(r"[Bb](?i:earer)\s+(?P<token>[A-Za-z0-9._~+/-]{12,}=*)"),
        _bearer,
        ("bearer",),
    ),
    RegexDetector(
        "basic_auth",
        _rx(r"[Bb](?i:asic)\s+(?P<token>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        _basic,
        ("basic",),
    ),
    RegexDetector(
        "url_credentials",  # ``scheme://user:pass@`` and ``redis://:pass@``
        _rx(r"://[^\s:/@]*:(?P<password>[^\s/@]+)@"),
        _url,
        ("://",),
    ),
    RegexDetector(
        "command_line_password",  # ``curl -u user:pass``, ``mysql -pPASS``
        _rx(
            r"curl[^\n]{0,200}?(?<!\S)(?:-u|--user)(?:\s+|=)['\"]?[^\s:'\"]*:"
            r"(?P<password>[^\s'\"]+)"
            r"|m(?:ysql(?:dump|admin)?|ariadb)[^\n]{0,200}?\s-p(?P<mysql>[^\s'\"]+)"
        ),
        _command_line,
        ("curl", "mysql", "mariadb"),
    ),
    RegexDetector(
        "assignment",  # ``password = x``, ``"password": "x"``, ``DB_PASS=x``, ``AccountKey=x;``
        # Horizontal space only: ``DB_PASS=`` on one line never takes the next line as value.
        _rx(rf"{_NAME}['\"]?[ \t]*(?P<op>:=|=>|[:=])[ \t]*(?:{_VALUE})"),
        _assignment,
        ("pass", "pwd", "secret", "token", "credential", "key", "密码", "口令"),
    ),
    RegexDetector(
        "spoken_password",  # "the wifi password is Blue-Heron-42"
        _rx(
            r"(?:[Pp](?i:ass(?:word|phrase|code|wort)|wd)\s+(?i:is|was)|(?:密码|口令)\s*(?:是|为))"
            r"\s*(?:(?P<q>[\"'`“])(?P<qvalue>[^\"'`”\r\n]{1,256})[\"'`”]|(?P<value>\S{1,256}))"
        ),
        _spoken,
        ("pass", "pwd", "密码", "口令"),
    ),
)
"""The detectors every store uses unless told otherwise."""
