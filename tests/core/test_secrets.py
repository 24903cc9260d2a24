"""Credential detection: every detector refuses its kind, prose and placeholders pass."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.core.store_helpers import conversation, expect_unchanged, manual, raw, records_path

from memquill import RecordStore, SecretError
from memquill.store import SecretScanner
from memquill.store._codec import HEADER
from memquill.store._secrets import (
    BUILTIN_DETECTORS,
    RegexDetector,
    is_placeholder,
    normalize_for_detection,
    secret_message,
)

# Shapes of real credentials (made up), per detector. Each must be refused.
SECRETS: dict[str, list[str]] = {
    "private_key": [
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
        "-----begin rsa private key-----",
        "PuTTY-User-Key-File-3: ssh-ed25519",
        "AGE-SECRET-KEY-1QQUMTW178B0FUEBJ4EYZX9YWVU8TSRQ7PONM2QQUMTW178B0FUEB",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----BEGIN DSA PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    ],
    "provider_key": [
        "use sk-abcdefghij0123456789 for tests",
        "sk-ant-api03-Zx9YwVu8TsRq7PoNm",
        "sk-proj-4fK9dLm2QwErTyUi",
        "xai-Q8wE7rT6yU5iO4pA",
        "ghp-abcdefghijklmnop",
        "gh_pat-abcdefghijklmnop",
    ],
    "github_token": [
        "ghp_" + "a1B2c3D4e5" * 4,
        "gho_" + "Z9y8X7w6V5" * 3,
        "ghs_" + "q1w2e3r4t5" * 3,
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    ],
    "slack_token": ["xoxb-1234567890-abcdefghij", "xoxp-12-34-56-78-90ab", "XOXS-abcdefghij12"],
    "aws_access_key": ["AKIAIOSFODNN7Q2W3E4R", "key ASIAY34FZKBOKMUTVV7A here"],
    "google_api_key": [
        "AIzaSyA1234567890abcdefghijklmnopqrstu",
        "GOCSPX-2qqumtw178B0Fuebj4eyZx9Yw",
    ],
    "stripe_key": [
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "rk_live_51HabcdefGHIJKLmnop",
        "sk_test_51HabcdefGHIJKLmnopQRS",
    ],
    "jwt": [
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    ],
    "bearer_token": [
        "Authorization: Bearer abcdef0123456789xyz",
        "curl -H 'authorization: bearer 9f8e7d6c5b4a3f2e1d0c'",
    ],
    "url_credentials": [
        "postgres://admin:s3cr3tP4ss@db.internal:5432/app",
        "redis://:s3cr3tpw@cache.internal:6379/0",
        "https://deploy:hunter2@git.example.org/repo.git",
    ],
    "assignment": [
        "password = hunter2",
        "passwd: s3cr3tvalue",
        "api_key='abcd1234efgh'",
        "API-KEY = Zm9vYmFy",
        'client_secret: "abcdEFGH1234"',
        "token=abcd",
        "x-api-key: abcd1234efgh",
        "DB_PASSWORD=correcthorse",
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8wR4tL",
        "GITHUB_TOKEN=abcd1234efgh5678",
        "OPENAI_API_KEY=abc123def456",
        "password=12345678",
        "DB_PASSWORD=mysql123",
        "password = mysecretpassword123",
        "password=theRealPassw0rd",
        '{"password": "correcthorsebattery"}',
        "database:\n  password: hunter2",
        "smtp:\n  password: 'xK9#mQ2v'",
        "DB_PASS=k8s-Prod-2024",
        "GPG_PASSPHRASE=correct-horse-42",
        "PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe51296170",
        "AccountName=backup;AccountKey=Nx6wl8NYr4W3cV5gEsG4nfMMSG9W0SV3u7XHd7SybCg=;",
        "SharedAccessKey=q8W2e4R6t8Y0u2I4o6P8a0S2d4F6g8H0j2K4l6Z8x0C=",
        '{"dbPassword": "kf83jd9slq"}',
        "//registry.npmjs.org/:_authToken=abcd1234efgh5678",
        "家里 WiFi 密码：happy2024home",
    ],
    "gitlab_token": ["glpat-xR7kP2mN9qL4vB8wT3yZ", "gldt-2qqumtw178B0Fuebj4ey"],
    "slack_webhook": [
        "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/NmbxB5b6UpbcbRBzDKLmBJIs"
    ],
    "aws_secret_key": ["aws QdlHMqyxDSxmBDahMCNfekE/Vj89tnRuIcEzhmM0"],
    "huggingface_token": ["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"],
    "npm_token": ["npm_qQ1tUFnixLwgTA4rRHW3JYxXlSAco2U7diMO"],
    "pypi_token": ["pypi-AgEIcHlwaS5vcmcCJDE2ZmQ3ZTRkLWIwZDYtNGRjZS1hM2ZhLWUxYjU2"],
    "sendgrid_key": ["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"],
    "twilio_key": [
        "SKa64c32f801b6c97ed8738b9299685e4c",
        "Twilio auth token 79248b42d7f9debc63f62951f09f2565",
    ],
    "discord_token": [
        "MTA4NzY1NDMyMTA5ODc2NTQzMg.KsP7R4.U6ValmInQn_CQiuBkvvsYcgOIXrt8FpNH3NkG7",
        "https://discord.com/api/webhooks/1087654321098765432/U6ValmInQn_CQiuBkvvsYcgOIX",
    ],
    "telegram_bot_token": ["5829174630:AAKKysfM98aHgLXj4nmSL-eXvLc05IrPAOZ"],
    "hosting_token": [
        "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",
        "dop_v1_dc3d88be6c30b1be6e5e5e2fb386caa79c2ce390e64725555a00ffd90b61d451",
    ],
    "basic_auth": ["Authorization: Basic ZGVwbG95OnMzY3IzdFA0c3M="],
    "command_line_password": [
        "curl -u admin:Sup3rS3cret https://api.internal/v1/jobs",
        "curl --user=deploy:hunter22 https://deploy.internal/hook",
        "mysql -u root -pHunter22 inventory",
    ],
    "spoken_password": [
        "the wifi password is Blue-Heron-42",
        'The WiFi password is "sunflower"',
        "my gmail password is Kx7#pp2q, don't forget it",
        "wifi 密码是 tplink8866",
    ],
}

# Talking about credentials, or showing where one goes, is fine.
HARMLESS = [
    "Never log API keys; store passwords securely.",
    "Rotate the token every 90 days and keep secrets in the vault.",
    "The token endpoint is /oauth/token; the secret manager is Vault.",
    "secret: keep it safe",
    "password: correct horse battery staple",
    "api_key = <your-key>",
    "OPENAI_API_KEY=<your-openai-key>",
    "token: ***",
    "password=xxxxxxxx",
    "API_KEY=${API_KEY}",
    "DB_PASSWORD=${DB_PASSWORD}",
    "password = your_password",
    "api_key=your-api-key",
    "token=my-token-here",
    "token = [REDACTED]",
    "secret = changeme",
    "api_key: example",
    "password = None",
    "set %TOKEN% first",
    "Bearer <token>",
    "Use Bearer authentication for the API",
    "postgres://user:${DB_PASS}@db:5432/app",
    "https://user:<password>@example.com",
    "PASSWORD_FILE=/run/secrets/db",
    "max_token=4096",
    "my_token_count = 5",
    "Use the scikit-learn ask-me-anything task-runner module",
    "AKIA is the prefix of AWS access key ids",
    # Documentation fillers and published example keys are not credentials.
    "set OPENAI_API_KEY to sk-xxxxxxxxxxxxxxxxxxxx",
    "the AWS docs use AKIAIOSFODNN7EXAMPLE",
    "clone https://user:pass@host/repo.git",
    "JWTs start with eyJ and have three parts",
    "-----BEGIN PUBLIC KEY-----",
    "记住：不要把密码写进日志",
]

CASES = [(kind, text) for kind, texts in SECRETS.items() for text in texts]


def test_every_builtin_detector_has_examples() -> None:
    assert {detector.name for detector in BUILTIN_DETECTORS} == set(SECRETS)


@pytest.mark.parametrize("kind, text", CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_each_kind_is_detected_by_its_detector(kind: str, text: str) -> None:
    assert kind in SecretScanner().findings(text)
    assert kind in SecretScanner().findings(f"Remember this for later:\n{text}\nthanks")


@pytest.mark.parametrize("text", HARMLESS)
def test_prose_and_placeholders_pass(text: str) -> None:
    assert SecretScanner().findings(text) == ()


@pytest.mark.parametrize("kind, text", CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_every_write_path_refuses_credentials_and_writes_nothing(
    tmp_path: Path, kind: str, text: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = RecordStore(workspace)
    # Nothing is created in an empty workspace...
    message = secret_message(SecretScanner().findings(text))  # the kinds, never the text
    error = expect_unchanged(workspace, "secret", message, store.save, [manual(text)])
    assert isinstance(error, SecretError) and kind in error.kinds
    assert not (workspace / "memory").exists()
    # ...and an existing store stays byte for byte the same, for save and correct alike.
    saved = store.save([manual("harmless fact", "h")])
    batch = [manual("fine", "fine"), conversation(text, "k")]
    expect_unchanged(workspace, "secret", message, store.save, batch)
    record = saved.record_id or ""
    expect_unchanged(workspace, "secret", message, store.correct, record, text, saved.revision)
    assert text.encode() not in raw(workspace)


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_text_saves(tmp_path: Path, text: str) -> None:
    assert RecordStore(tmp_path).save([manual(text)]).status == "saved"


def test_secret_errors_name_kinds_never_the_value() -> None:
    text = "password = hunter2 and sk-abcdefghij0123456789"
    with pytest.raises(SecretError) as info:
        SecretScanner().check(text)
    assert info.value.kinds == ("provider_key", "assignment")
    assert "hunter2" not in str(info.value) and "sk-" not in repr(info.value.kinds)
    assert info.value.code == "secret"
    assert info.value.message == (
        "Remove credential material before saving memory: it looks like an AI provider API key "
        "and a password, token or key assigned a value."
    )


def test_placeholders_are_recognised() -> None:
    for value in ["<key>", "[redacted]", "{{ token }}", "$TOKEN", "${TOKEN}", "%TOKEN%", "xxxx"]:
        assert is_placeholder(value), value
    for value in ["'***'", "your-key", "my_secret", "the-api-key", "EXAMPLE", "changeme", "null"]:
        assert is_placeholder(value), value
    for value in ["hunter2x", "mysql123", "theRealPassw0rd", "s3cr3t"]:
        assert not is_placeholder(value), value


def test_a_custom_scanner_adds_detectors(tmp_path: Path) -> None:
    internal = RegexDetector("internal_ticket_key", re.compile(r"\bINT-KEY-[0-9]{6}\b"))
    scanner = SecretScanner([*BUILTIN_DETECTORS, internal])
    store = RecordStore(tmp_path, secrets=scanner)
    assert store.secrets is scanner
    named = "Remove credential material before saving memory: it looks like what the "
    expect_unchanged(
        tmp_path,
        "secret",
        named + "internal_ticket_key detector finds.",
        store.save,
        [manual("INT-KEY-123456")],
    )
    assert RecordStore(tmp_path).save([manual("INT-KEY-123456")]).status == "saved"


def test_the_scanner_finds_what_each_detector_finds_alone() -> None:
    # The scanner tests a detector's triggers itself before calling it: the findings must be
    # exactly the detectors whose own ``detect`` matches (a subclass is never skipped).
    class Always(RegexDetector):
        def detect(self, text: str) -> bool:
            return True

    always = Always("always", re.compile("never-matched"), triggers=("never-there",))
    scanner = SecretScanner([*BUILTIN_DETECTORS, always])
    texts = [text for found in SECRETS.values() for text in found]
    texts += ["the quick brown fox", "password is on the fridge", '{"fields":{"topic":"t"}}']
    for text in texts:
        seen = normalize_for_detection(text)
        alone = tuple(d.name for d in scanner.detectors if d.detect(seen))
        assert scanner.findings(text) == alone, text
        assert "always" in alone


def test_a_newly_flagged_stored_record_is_reported_not_corrupt(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    saved = store.save([manual("ticket INT-KEY-123456 is open", "t"), manual("clean", "c")])
    stricter = SecretScanner(
        [*BUILTIN_DETECTORS, RegexDetector("ticket", re.compile(r"INT-KEY-\d+"))]
    )
    strict_store = RecordStore(tmp_path, secrets=stricter)
    assert strict_store.snapshot().revision == saved.revision  # still readable
    report = strict_store.doctor()
    assert report.error is None and not report.ok
    assert [(f.record_id, f.kinds) for f in report.secret_findings] == [
        (saved.record_ids[0], ("ticket",))
    ]
    # It can still be forgotten, after which nothing is flagged.
    strict_store.revoke(saved.record_ids[0] or "", saved.revision)
    assert strict_store.doctor().ok


def test_a_hand_stored_secret_is_readable_and_reported(tmp_path: Path) -> None:
    # A file written by an older or other writer may hold a credential; reads still work.
    store = RecordStore(tmp_path)
    saved = store.save([manual("placeholder fact", "p")])
    data = raw(tmp_path)
    leaked = data.replace(
        b'"contentLength":16} -->\nplaceholder fact', b'"contentLength":16} -->\ntoken=abcd123456'
    )
    assert leaked != data and leaked.startswith(HEADER.encode())
    records_path(tmp_path).write_bytes(leaked)
    assert store.snapshot().records[0].content == "token=abcd123456"
    assert [f.kinds for f in store.doctor().secret_findings] == [("assignment",)]
    assert saved.record_id == store.snapshot().records[0].id
