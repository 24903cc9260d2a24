"""Secret scanning: content with a finding is never saved.

The scanner normalises text first (:func:`normalize_for_detection`: NFKC, zero-width and other
format characters removed, look-alike letters folded to ASCII), so a key broken by a zero-width
space or typed in full-width or Cyrillic letters is found like the plain one, then runs every
detector (the built-in detectors, below). Prose about secrets and obvious placeholders
(``<your-key>``, ``xxxx``, ``***``, ``${TOKEN}``) pass. Plugins add detectors through the
``memquill_register_secret_detectors`` hook.

One module for one concept, in the order it reads: what a refusal tells a person, the detector
contract, how a candidate value is judged, the built-in detectors, and the scanner.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from memquill.errors import Messages, SecretError

# -- What a refusal says -----------------------------------------------------------------------
# What a ``secret`` refusal tells a person: the kind of credential found, never the text.
#
# A refusal that only says "credential material" leaves a person guessing which part of a long
# fact tripped it; one that quoted the match would repeat the credential into logs and model
# transcripts. So the message names the detector's kind in words ("it looks like an AWS access
# key"), and :attr:`memquill.errors.SecretError.kinds` keeps the detector names for programs.
# A plugin's detector is named by its ``name``.


KIND_WORDS: Final[Mapping[str, str]] = {
    "private_key": "a private key",
    "provider_key": "an AI provider API key",
    "github_token": "a GitHub token",
    "gitlab_token": "a GitLab token",
    "slack_token": "a Slack token",
    "slack_webhook": "a Slack webhook URL",
    "aws_access_key": "an AWS access key",
    "aws_secret_key": "an AWS secret key",
    "google_api_key": "a Google API key or client secret",
    "stripe_key": "a Stripe key",
    "huggingface_token": "a Hugging Face token",
    "npm_token": "an npm token",
    "pypi_token": "a PyPI token",
    "sendgrid_key": "a SendGrid key",
    "twilio_key": "a Twilio key",
    "discord_token": "a Discord token",
    "telegram_bot_token": "a Telegram bot token",
    "hosting_token": "a hosting provider token",
    "jwt": "a JSON Web Token",
    "bearer_token": "a bearer token",
    "basic_auth": "basic auth credentials",
    "url_credentials": "a password in a URL",
    "command_line_password": "a password on a command line",
    "assignment": "a password, token or key assigned a value",
    "spoken_password": "a password written out",
}
"""Each built-in detector's kind, in words (a test checks that every built-in has one)."""


def describe_kinds(kinds: Sequence[str]) -> str:
    """``an AWS access key``, ``a JWT and a bearer token``: the kinds, in words, joined."""
    words = list(dict.fromkeys(KIND_WORDS.get(kind, f"what the {kind} detector finds")
                               for kind in kinds))  # fmt: skip
    if len(words) <= 1:
        return words[0] if words else "credential material"
    return ", ".join(words[:-1]) + " and " + words[-1]


def secret_message(kinds: Sequence[str]) -> str:
    """The refusal's message for ``kinds`` (the generic one when none is named)."""
    if not kinds:
        return Messages.SECRET
    return Messages.SECRET_KIND.format(describe_kinds(kinds))


# -- The detector contract ---------------------------------------------------------------------
# The detector contract: :class:`SecretDetector`, and :class:`RegexDetector`, which most are.
#
# A :class:`RegexDetector` is a regular expression for where a credential may be, optionally
# confirmed by a judgement of each match, and optionally guarded by cheap substring triggers so the
# expression runs only on text that could hold a match. The built-in detectors follow.


class SecretDetector(Protocol):
    """Anything with a ``name`` that can tell whether a text holds a credential."""

    @property
    def name(self) -> str:
        """A short, stable identifier shown in findings (never the matched text)."""
        ...

    def detect(self, text: str) -> bool:
        """Whether ``text`` holds a credential of this kind."""
        ...


@dataclass(frozen=True, slots=True)
class RegexDetector:
    """A detector that matches a regular expression, optionally confirming each match.

    Attributes:
        name: the finding's identifier.
        pattern: where a credential may be.
        confirm: given a match, whether it really is one (default: always).
        triggers: lowercase substrings of which any match must contain one; when none is in
            the text the expression is not run (a cheap test first: most notes have none).
    """

    name: str
    pattern: re.Pattern[str]
    confirm: Callable[[re.Match[str]], bool] | None = None
    triggers: tuple[str, ...] = ()

    def detect(self, text: str) -> bool:
        if self.triggers:
            lowered = _lowered(text)
            if not any(trigger in lowered for trigger in self.triggers):
                return False
        for match in self.pattern.finditer(text):
            if self.confirm is None or self.confirm(match):
                return True
        return False


# The scanner hands every detector the same string: lower it once, not once per detector.
_LAST_LOWERED: list[tuple[str, str]] = [("", "")]


def _lowered(text: str) -> str:
    seen, lowered = _LAST_LOWERED[0]
    if seen is not text:
        lowered = text.lower()
        _LAST_LOWERED[0] = (text, lowered)  # one atomic store: threads at worst lower twice
    return lowered


# -- Judging a candidate value -----------------------------------------------------------------
# Judging a candidate credential value: placeholder, code, number, or key material.
#
# The detectors find *where* a credential may be (after a
# ``password =``, in a URL, after ``curl -u``); these functions decide whether the value found
# there is one. Prose about secrets, documentation placeholders (``<your-key>``, ``xxxx``,
# ``${TOKEN}``, ``changeme``) and code that only names a secret (``os.environ["TOKEN"]``,
# ``settings.SECRET_KEY``) are not credentials.


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


# -- The built-in detectors --------------------------------------------------------------------
# The built-in detectors: the shapes real credentials have, and how each match is confirmed.
#
# They run on normalised text (:func:`memquill.store.normalize_for_detection`), so they match
# ASCII shapes only. The corpus in ``tests/core/secret_corpus.py`` is the contract: every
# credential there is found, and no note that only talks about credentials is
# (``benchmarks/secret_filter.py`` prints the figures).
#
# Each expression starts with a literal or a small character set, never with ``\b`` or a
# lookbehind: Python's matcher then skips ahead to candidate positions instead of trying every
# one (up to 25 times faster on a long note). Word boundaries are checked in the confirmation.


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


# -- The scanner --------------------------------------------------------------------------------


# Characters that render as nothing: every format character (Unicode category Cf: zero-width
# space and joiners, bidi controls, soft hyphen, tags), variation selectors, the combining
# grapheme joiner and the Hangul fillers. A test checks that every Cf character is covered.
_INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# Cyrillic and Greek letters drawn like Latin ones (NFKC keeps them apart). Folding them only
# for detection lets ``ѕk-…`` (Cyrillic dze) or ``АКІА…`` match; the stored text is unchanged.
_LOOKALIKE_FROM: Final = "аеорсухіјѕԁһԛԝӏАВЕКМНОРСТХЅІЈҮԜΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινκρυ"
_LOOKALIKE_TO: Final = "aeopcyxijsdhqwlABEKMHOPCTXSIJYWABEZHIKMNOPTYXoivkpu"
_LOOKALIKE: Final = re.compile(f"[{_LOOKALIKE_FROM}]")
_FOLD: Final = dict(zip(_LOOKALIKE_FROM, _LOOKALIKE_TO, strict=True))


def _fold(match: re.Match[str]) -> str:
    return _FOLD[match.group()]


_BUILTIN_IDS: Final = frozenset(id(detector) for detector in BUILTIN_DETECTORS)


def _triggers(detector: SecretDetector) -> tuple[str, ...] | None:
    """The triggers of which ``detector`` needs one in the lowered text to find anything
    (``None``: it is not known to need any)."""
    if type(detector) is RegexDetector and detector.triggers:  # a subclass may detect otherwise
        return detector.triggers
    return None


def normalize_for_detection(text: str) -> str:
    """``text`` as detectors see it: invisible characters removed, NFKC, look-alikes folded.

    Only for matching: what is stored is always the text as given. ASCII text is returned as
    it is, and each step runs only when it has something to change (a substitution per
    look-alike is four times faster than translating a whole Cyrillic note).
    """
    if text.isascii():
        return text
    visible = _INVISIBLE.sub("", text)
    if not unicodedata.is_normalized("NFKC", visible):
        visible = unicodedata.normalize("NFKC", visible)
    return _LOOKALIKE.sub(_fold, visible)


class SecretScanner:
    """Runs a fixed set of detectors over content.

    Args:
        detectors: the detectors to run; the built-ins when omitted.
    """

    def __init__(self, detectors: Iterable[SecretDetector] | None = None) -> None:
        self._detectors: tuple[SecretDetector, ...] = (
            BUILTIN_DETECTORS if detectors is None else tuple(detectors)
        )
        # Each detector with the triggers the scanner tests for it (``None``: none to test):
        # a short note meets none of most detectors' triggers, and testing them here, on the
        # text lowered once, costs a fifth of calling each detector to test its own.
        self._gated: tuple[tuple[SecretDetector, tuple[str, ...] | None], ...] = tuple(
            (detector, _triggers(detector)) for detector in self._detectors
        )

    @property
    def detectors(self) -> tuple[SecretDetector, ...]:
        """The detectors, in the order they run."""
        return self._detectors

    def findings(self, text: str) -> tuple[str, ...]:
        """Names of the detectors that match ``text`` (empty when it is clean).

        Detectors see the normalised text. When normalising changed it, a plugin's detector
        also sees the text as given, so one written for the raw form keeps working.
        """
        normalized = normalize_for_detection(text)
        lowered = _lowered(normalized)
        found: list[str] = []
        for detector, triggers in self._gated:
            # Without one of its triggers in the text, a gated detector finds nothing in it
            # (a plain loop: ``any`` over a generator took three times as long).
            shut = triggers is not None
            for trigger in triggers or ():
                if trigger in lowered:
                    shut = False
                    break
            if (not shut and detector.detect(normalized)) or (
                normalized != text and id(detector) not in _BUILTIN_IDS and detector.detect(text)
            ):
                found.append(detector.name)
        return tuple(found)

    def check(self, text: str) -> None:
        """Raise :class:`~memquill.errors.SecretError` when ``text`` has any finding; its
        message names the kinds found in words (never the text), ``kinds`` the detectors."""
        kinds = self.findings(text)
        if kinds:
            raise SecretError(secret_message(kinds), kinds)
