"""What a LangGraph put is refused for, shared by the store's tests: each value with the
error it gets (a credential in the text or in another field, a text or a field too long, a
control character, a lone surrogate)."""

from __future__ import annotations

import pytest

from memquill import InvalidInputError, SecretError

SECRET_VALUE = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2

REFUSED = pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"content": f"my key is {SECRET_VALUE}"}, SecretError),
        ({"content": "a note", "token": SECRET_VALUE}, SecretError),
        ({"content": "x" * 16_001}, InvalidInputError),
        ({"content": "a note", "notes": "y" * 16_001}, InvalidInputError),
        ({"content": "bell \x07 rings"}, InvalidInputError),
        ({"content": "half a pair \ud800"}, InvalidInputError),
    ],
    ids=["secret", "secret-extra", "too-long", "too-long-extra", "control", "surrogate"],
)
"""Parametrizes a test with ``value`` and ``error``."""
