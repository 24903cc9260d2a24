"""The secret filter against its labelled corpus, and the normalisation it runs first."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import pytest
from tests.core.secret_corpus import CREDENTIALS, PROSE
from tests.core.store_helpers import CHILD_TIMEOUT, expect_unchanged, manual, raw

from memquill import RecordStore
from memquill.store import SecretScanner, normalize_for_detection
from memquill.store._secrets import BUILTIN_DETECTORS, RegexDetector, secret_message

SHAPES = [shape for shape, _ in CREDENTIALS]


def test_the_corpus_is_well_formed() -> None:
    assert len(set(SHAPES)) == len(SHAPES), "each shape once"
    assert len(set(PROSE)) == len(PROSE), "each note once"
    assert len(CREDENTIALS) >= 80 and len(PROSE) >= 200


@pytest.mark.parametrize(("shape", "text"), CREDENTIALS, ids=SHAPES)
def test_every_credential_shape_is_refused(tmp_path: Path, shape: str, text: str) -> None:
    assert SecretScanner().findings(text), shape
    store = RecordStore(tmp_path)
    message = secret_message(SecretScanner().findings(text))
    expect_unchanged(tmp_path, "secret", message, store.save, [manual(text)])
    assert not (tmp_path / "memory").exists()


@pytest.mark.parametrize("text", PROSE)
def test_no_note_about_credentials_is_refused(text: str) -> None:
    assert SecretScanner().findings(text) == ()


def test_notes_about_credentials_save_verbatim(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    for index, text in enumerate(PROSE):
        assert store.save([manual(text, f"prose-{index}")]).status == "saved"
    contents = [record.content for record in store.snapshot().records]
    assert contents == list(PROSE)


def test_every_format_character_is_removed_before_matching() -> None:
    format_characters = [
        chr(code) for code in range(sys.maxunicode + 1) if unicodedata.category(chr(code)) == "Cf"
    ]
    assert len(format_characters) > 150
    for char in format_characters:
        assert normalize_for_detection(f"sk{char}-") == "sk-", f"U+{ord(char):04X}"
    for invisible in ("\ufe0f", "\u034f", "\u3164", "\U000e0101"):  # selectors, CGJ, fillers
        assert normalize_for_detection(f"a{invisible}b") == "ab"


@pytest.mark.parametrize(
    ("given", "seen"),
    [
        ("plain ascii stays as it is", "plain ascii stays as it is"),
        ("\uff53\uff4b\uff0d\uff41\uff42\uff43", "sk-abc"),  # full-width forms (NFKC)
        ("\U0001d420\U0001d421\U0001d429_", "ghp_"),  # mathematical bold (NFKC)
        ("\u0455k-\u0430b\u0441", "sk-abc"),  # Cyrillic dze, a, es
        ("\u0391\u039a\u0399\u0391", "AKIA"),  # Greek capitals
        ("pass\u200bw\u00adord", "password"),  # zero-width space, soft hyphen
        ("密码：abc", "密码:abc"),  # full-width colon
    ],
)
def test_normalisation(given: str, seen: str) -> None:
    assert normalize_for_detection(given) == seen


def test_normalisation_is_only_for_matching(tmp_path: Path) -> None:
    # Emoji with joiners and variation selectors, full-width text: all saved byte for byte.
    text = "Pairing with \U0001f469\u200d\U0001f4bb on \u2764\ufe0f; \uff26\uff55\uff4c\uff4c"
    store = RecordStore(tmp_path)
    assert store.save([manual(text)]).status == "saved"
    assert text.encode() in raw(tmp_path)


def test_a_plugin_detector_also_sees_the_text_as_given() -> None:
    # Written for the raw form: it looks for a zero-width space, which normalising removes.
    raw_only = RegexDetector("zero_width_marker", re.compile("\u200b"))
    scanner = SecretScanner([*BUILTIN_DETECTORS, raw_only])
    assert scanner.findings("a\u200bb") == ("zero_width_marker",)
    assert scanner.findings("ab") == ()


def test_hostile_inputs_never_hang_the_scanner() -> None:
    # Each input is 16,000 characters (the content limit) built to make a backtracking matcher
    # retry: a hang guard in a child process, not a speed test.
    script = textwrap.dedent(
        """
        from memquill.store import SecretScanner
        units = ["a", "0", ":", "-", "aws ", "password=", 'password="', "sk-", "://",
                 "curl -u ", "mysql ", "Bearer ", "Basic ", "twilio ", "aA1/", "_pass",
                 "dbPassword", "密码是", "password is ", "\\u200b", "hooks.slack.com/services/a/"]
        scanner = SecretScanner()
        for unit in units:
            scanner.findings((unit * (16_000 // len(unit) + 1))[:16_000])
        print("ok")
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=CHILD_TIMEOUT
    )
    assert completed.stdout.strip() == "ok", completed.stderr
