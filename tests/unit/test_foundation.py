"""Small pure pieces of the layer: code format, compression, counting, error paths and phrases, settings."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from svcconf.api.fields import CODE_PATTERN
from svcconf.backups.archive import count_objects, new_backup_id
from svcconf.codes import CODE_ALPHABET, new_code_text
from svcconf.errors import BadRequest, field_path, reason_phrase
from svcconf.settings import Settings
from svcconf.store import blobs


def test_minted_codes_match_the_contract_format_and_use_the_whole_alphabet():
    samples = [new_code_text() for _ in range(2000)]
    assert all(re.fullmatch(CODE_PATTERN, code) for code in samples)
    used = {char for code in samples for char in code[4:8] + code[9:13]}
    assert used == set(CODE_ALPHABET)
    assert len(set(samples)) == len(samples)


def test_backup_ids_sort_by_creation_time():
    ids = [new_backup_id() for _ in range(50)]
    assert len(set(ids)) == 50
    assert [identifier[:15] for identifier in ids] == sorted(identifier[:15] for identifier in ids)


def test_compressed_json_comes_back_exactly_and_smaller():
    document = {
        "z": 1,
        "a": [0.1, 1e-7, 2**63, -0.0, None, True],
        "text": "日本語 ✓ \u0000",
        "nested": {"k": "v" * 500},
    }
    raw = blobs.json_bytes(document)
    packed = blobs.pack(raw)
    assert len(packed) < len(raw)
    assert blobs.unpack(packed) == document
    assert json.dumps(blobs.unpack(packed)) == json.dumps(document)  # key order kept


@pytest.mark.parametrize(
    ("backup_data", "counts"),
    [
        ({}, (0, 0)),
        ({"roles": [{}, {}], "channels": [{}]}, (1, 2)),
        ({"categories": [{"channels": [{}, {}]}, {"channels": []}, {}], "channels": [{}]}, (6, 0)),
        ({"roles": "not a list", "channels": {"a": 1}, "categories": [1, "x"]}, (2, 0)),
    ],
)
def test_counts_come_from_the_roles_channels_and_categories_arrays(backup_data, counts):
    assert count_objects(backup_data) == counts


@pytest.mark.parametrize(
    ("loc", "path"),
    [(("body", "messages", 3, "role"), "messages[3].role"), (("body",), "body"), ((), "body"), (("code",), "code")],
)
def test_field_paths_read_like_the_contract(loc, path):
    assert field_path(loc) == path


@pytest.mark.parametrize(
    ("status", "phrase"),
    [
        (400, "Bad Request"),
        (413, "Payload Too Large"),
        (415, "Unsupported Media Type"),
        (502, "Error"),
        (504, "Gateway Timeout"),
        (500, "Internal Server Error"),
    ],
)
def test_error_names_are_the_contracts(status, phrase):
    assert reason_phrase(status) == phrase


def test_bad_request_for_a_field_names_it():
    error = BadRequest.for_field("count", "must be between 5 and 50")
    assert error.status == 400
    assert [(d.field, d.message) for d in error.details] == [("count", "must be between 5 and 50")]


def test_settings_read_lists_and_limits_from_the_environment():
    settings = Settings.model_validate(
        {
            "CHAT_REDIRECT_URIS": " https://a.example/cb , http://127.0.0.1:5173/auth/callback,",
            "SVC_CODE_TTL_HOURS": "2",
        }
    )
    assert settings.chat_redirect_uris == ["https://a.example/cb", "http://127.0.0.1:5173/auth/callback"]
    assert settings.code_ttl_hours == 2
    assert settings.backups_per_guild == 50
    with pytest.raises(ValidationError, match="SVC_BACKUPS_PER_GUILD"):
        Settings.model_validate({"SVC_BACKUPS_PER_GUILD": "0"})


def test_settings_keep_secrets_out_of_their_repr():
    settings = Settings.model_validate({"SVC_BOT_TOKEN": "bot-secret-123", "SVC_JWT_SECRET": "jwt-secret-456"})
    assert "bot-secret-123" not in repr(settings)
    assert "jwt-secret-456" not in str(settings.model_dump())
    assert settings.resolved_bot_token() == "bot-secret-123"
