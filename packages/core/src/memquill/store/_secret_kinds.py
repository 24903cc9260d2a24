"""What a ``secret`` refusal tells a person: the kind of credential found, never the text.

A refusal that only says "credential material" leaves a person guessing which part of a long
fact tripped it; one that quoted the match would repeat the credential into logs and model
transcripts. So the message names the detector's kind in words ("it looks like an AWS access
key"), and :attr:`memquill.errors.SecretError.kinds` keeps the detector names for programs.
A plugin's detector is named by its ``name``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from memquill.errors import Messages

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
