"""Credential detectors: content with a finding is never saved.

Detectors look for the shapes real credentials have (provider key prefixes, PEM private keys,
JWTs, bearer tokens, URL credentials, ``password = value`` assignments). Prose about secrets and
obvious placeholders (``<your-key>``, ``xxxx``, ``***``, ``${TOKEN}``) pass. Plugins add detectors
through the ``memquill_register_secret_detectors`` hook.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

from memquill.errors import SecretError

__all__ = [
    "BUILTIN_DETECTORS",
    "RegexDetector",
    "SecretDetector",
    "SecretScanner",
    "is_placeholder",
]


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
    """

    name: str
    pattern: re.Pattern[str]
    confirm: Callable[[re.Match[str]], bool] | None = None

    def detect(self, text: str) -> bool:
        for match in self.pattern.finditer(text):
            if self.confirm is None or self.confirm(match):
                return True
        return False


_PLACEHOLDER: Final = re.compile(
    r"""^(?:
        <[^>]*> | \[[^\]]*\] | \{\{.*\}\} | \$\{?[A-Za-z_][A-Za-z0-9_]*\}? | %[A-Za-z_]+%
        | (?P<rep>[xX*.•#-])(?P=rep){2,}.*
        | your[-_ ]?[-\w]* | (?:my|the)[-_ ][-\w]*  # not ``mysql123``: "my"/"the" need a separator
        | \w*(?:example|placeholder|redacted|changeme|dummy|sample)\w*
        | none | null | nil | true | false | env | secret | password | pass | pw | token | value
    )$""",
    re.VERBOSE | re.IGNORECASE,
)


def is_placeholder(value: str) -> bool:
    """Whether an assigned value is obviously not a real credential."""
    return bool(_PLACEHOLDER.match(value.strip("'\"` ,;")))


_FILLER: Final = re.compile(r"[xX*•]{4,}|EXAMPLE|example")


def _not_filler(match: re.Match[str]) -> bool:
    """A key-shaped token padded with ``xxxx`` or marked EXAMPLE is documentation, not a key."""
    return not _FILLER.search(match.group(0))


def _has_digit(value: str) -> bool:
    return any(char.isdigit() for char in value)


def _assignment_is_secret(match: re.Match[str]) -> bool:
    value = match.group("value")
    if is_placeholder(value):
        return False
    if value.isdigit() and match.string[match.start() - 1 : match.start()] == "_":
        return False  # ``max_token=4096``: a prefixed name set to a number is configuration
    if match.group("op") == "=" or match.group("quote"):
        return len(value) >= 4
    # ``key: value`` reads like prose, so it needs a value that looks like key material.
    return len(value) >= 8 and _has_digit(value)


def _url_credential_is_secret(match: re.Match[str]) -> bool:
    return not is_placeholder(match.group("password"))


def _bearer_is_secret(match: re.Match[str]) -> bool:
    token = match.group("token")
    return _has_digit(token) and not is_placeholder(token)


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


BUILTIN_DETECTORS: Final[tuple[SecretDetector, ...]] = (
    RegexDetector(
        "private_key",
        _rx(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ),
    RegexDetector(
        "provider_key",  # OpenAI, Anthropic, xAI and the spec's legacy prefixes
        _rx(r"\b(?:sk|xai|ghp|gh_pat)-[A-Za-z0-9_-]{12,}", re.IGNORECASE),
        _not_filler,
    ),
    RegexDetector(
        "github_token", _rx(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,})"), _not_filler
    ),
    RegexDetector(
        "slack_token", _rx(r"\bxox[abprs]-[A-Za-z0-9-]{10,}", re.IGNORECASE), _not_filler
    ),
    RegexDetector("aws_access_key", _rx(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), _not_filler),
    RegexDetector("google_api_key", _rx(r"\bAIza[0-9A-Za-z_-]{30,}"), _not_filler),
    RegexDetector("stripe_key", _rx(r"\b(?:sk|rk)_live_[0-9A-Za-z]{16,}"), _not_filler),
    RegexDetector("jwt", _rx(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    RegexDetector(
        "bearer_token",
        _rx(r"\bBearer\s+(?P<token>[A-Za-z0-9._~+/-]{12,}=*)", re.IGNORECASE),
        _bearer_is_secret,
    ),
    RegexDetector(
        "url_credentials",
        _rx(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<password>[^\s/@]+)@", re.IGNORECASE),
        _url_credential_is_secret,
    ),
    RegexDetector(
        "assignment",
        _rx(
            # Not ``\b``: env-style names (``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY``) must match.
            r"(?<![A-Za-z0-9])(?:password|passwd|pwd|secret|client[_-]?secret|token|access[_-]?token"
            r"|api[_-]?key|access[_-]?key|secret[_-]?key)\b"
            r"\s*(?P<op>[:=])\s*(?P<quote>['\"`]?)(?P<value>[^\s'\"`,;]+)",
            re.IGNORECASE,
        ),
        _assignment_is_secret,
    ),
)
"""The detectors every store uses unless told otherwise."""


class SecretScanner:
    """Runs a fixed set of detectors over content.

    Args:
        detectors: the detectors to run; the built-ins when omitted.
    """

    def __init__(self, detectors: Iterable[SecretDetector] | None = None) -> None:
        self._detectors: tuple[SecretDetector, ...] = (
            BUILTIN_DETECTORS if detectors is None else tuple(detectors)
        )

    @property
    def detectors(self) -> tuple[SecretDetector, ...]:
        """The detectors, in the order they run."""
        return self._detectors

    def findings(self, text: str) -> tuple[str, ...]:
        """Names of the detectors that match ``text`` (empty when it is clean)."""
        return tuple(detector.name for detector in self._detectors if detector.detect(text))

    def check(self, text: str) -> None:
        """Raise :class:`~memquill.errors.SecretError` when ``text`` has any finding."""
        kinds = self.findings(text)
        if kinds:
            raise SecretError(kinds=kinds)
