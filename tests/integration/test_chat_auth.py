"""chatAuth against the sandbox: the OAuth code exchange, the identity, and the KMS-encrypted link."""

from __future__ import annotations

import boto3
import pytest

from svcconf.settings import get_settings
from tests.helpers.deploy_worker import link
from tests.helpers.handlers import CDN, CHAT_CLIENT_SECRET, REDIRECT_URI

ALICE = "1191000000000000101"
BOB = "1191000000000000102"


def sign_in(invoke, code, *, redirect_uri=REDIRECT_URI, headers=None, drop_headers=("Authorization",)):
    body = {"code": code, "redirect_uri": redirect_uri}
    return invoke("chatAuth", body, headers=headers, drop_headers=() if headers else drop_headers)


def link_item(user_id: str) -> dict:
    table = boto3.resource("dynamodb").Table(get_settings().chat_links_table)
    return table.get_item(Key={"user_id": user_id}).get("Item", {})


def test_code_exchange_returns_the_identity_and_the_access_token(invoke, platform):
    code = platform.mint_code(ALICE)
    response = sign_in(invoke, code)
    assert response.status == 200
    issued = [
        token
        for token, grant in platform.access_tokens.items()
        if grant["user_id"] == ALICE and token != "dev-access-alice"
    ]
    assert response.body == {
        "email": "alice@example.com",
        "chatUserId": ALICE,
        "chatUsername": "alice",
        "chatAvatar": f"{CDN}/avatars/{ALICE}/8342729096ea3675442027381ff50dfe.png",
        "chatAccessToken": issued[-1],
        "linked": False,
    }
    [exchange] = platform.requests("POST", "/oauth2/token")
    assert exchange["content_type"].startswith("application/x-www-form-urlencoded")


def test_user_without_an_avatar_gets_the_platforms_default_avatar(invoke, platform):
    body = sign_in(invoke, platform.mint_code(BOB)).body
    assert body["chatAvatar"] == f"{CDN}/embed/avatars/{(int(BOB) >> 22) % 6}.png"


def test_signed_in_web_user_gets_the_chat_account_linked_with_tokens_encrypted(invoke, platform):
    # Given a web user with a bearer token who signed in through a sign-in the service started
    response = link(invoke, platform, "web-user-1", ALICE)
    # Then the identity is linked to that user
    assert response["linked"] is True
    item = link_item("web-user-1")
    assert item["chat_user_id"] == ALICE
    assert item["chat_username"] == "alice"
    # And the stored item holds no token in clear: only KMS ciphertext
    access_token = response["chatAccessToken"]
    stored_text = repr(item)
    assert access_token not in stored_text
    assert "refresh" not in {key for key in item if key != "tokens"}
    assert not any(token in stored_text for token in [*platform.access_tokens, *platform.refresh_tokens])
    ciphertext = item["tokens"].value
    plaintext = boto3.client("kms").decrypt(
        CiphertextBlob=ciphertext, EncryptionContext={"purpose": "chat-oauth-tokens", "user_id": "web-user-1"}
    )["Plaintext"]
    assert access_token.encode() in plaintext
    # And the ciphertext cannot be read as another user's
    with pytest.raises(boto3.client("kms").exceptions.InvalidCiphertextException):
        boto3.client("kms").decrypt(
            CiphertextBlob=ciphertext, EncryptionContext={"purpose": "chat-oauth-tokens", "user_id": "web-user-2"}
        )


def test_without_a_bearer_token_nothing_is_stored(invoke, platform):
    assert sign_in(invoke, platform.mint_code(ALICE)).body["linked"] is False
    table = boto3.resource("dynamodb").Table(get_settings().chat_links_table)
    assert table.scan()["Items"] == []


def test_an_invalid_bearer_token_is_refused_rather_than_ignored(invoke, platform):
    response = sign_in(invoke, platform.mint_code(ALICE), headers={"Authorization": "Bearer not-a-jwt"})
    assert response.status == 401
    assert platform.requests("POST", "/oauth2/token") == []


def test_redirect_uri_outside_the_allow_list_is_400_before_the_platform_is_asked(invoke, platform):
    response = sign_in(invoke, platform.mint_code(ALICE), redirect_uri="https://evil.example/callback")
    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == ["redirect_uri"]
    assert platform.requests("POST", "/oauth2/token") == []


@pytest.mark.parametrize("code", ["dev-code-nobody", "expired-or-made-up"])
def test_code_the_platform_refuses_is_400_naming_code(invoke, platform, code):
    response = sign_in(invoke, code)
    assert response.status == 400
    assert response.body["details"][0]["field"] == "code"
    assert "refused by the chat platform" in response.body["details"][0]["message"]


def test_code_cannot_be_used_twice(invoke, platform):
    code = platform.mint_code(ALICE)
    first, second = sign_in(invoke, code), sign_in(invoke, code)

    assert first.status == 200
    assert (first.body["chatUserId"], first.body["linked"]) == (ALICE, False)  # signed in, no web user to link
    assert second.status == 400
    assert second.body["details"] == [
        {
            "field": "code",
            "message": "was refused by the chat platform (expired, already used, or issued for another redirect_uri)",
        }
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"redirect_uri": REDIRECT_URI}, "code"),  # without a bearer: nothing to start a sign-in for
        ({"code": "x" * 513, "redirect_uri": REDIRECT_URI}, "code"),
        ({"code": "abc"}, "redirect_uri"),
    ],
)
def test_missing_or_oversized_fields_are_named(invoke, platform, body, field):
    response = invoke("chatAuth", body, drop_headers=("Authorization",))
    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == [field]


def test_platform_refusing_the_service_client_is_502(invoke, platform, monkeypatch):
    platform.application["client_secret"] = "rotated-" + CHAT_CLIENT_SECRET
    response = sign_in(invoke, platform.mint_code(ALICE))
    assert response.status == 502
    assert CHAT_CLIENT_SECRET not in str(response.body)


def test_platform_down_is_502(invoke, platform):
    platform.configure(error_5xx_probability=1.0)
    response = sign_in(invoke, platform.mint_code(ALICE))
    assert response.status == 502
    assert response.body["error"] == "Error"
