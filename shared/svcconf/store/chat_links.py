"""Chat-links table: a bearer user's chat identity and OAuth tokens, the tokens encrypted with KMS.

Tokens are plaintext only in memory: they are encrypted (one KMS call for both, bound to the user by the
encryption context) before they reach DynamoDB, and decrypted after they leave it.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from typing import Any

import boto3
from pydantic import BaseModel, SecretStr

from svcconf.store.dynamo import CLIENT_CONFIG, table


class ChatLink(BaseModel):
    user_id: str  # the bearer token's `sub`
    chat_user_id: str
    chat_username: str
    access_token: SecretStr
    refresh_token: SecretStr | None = None
    expires_at: datetime
    scope: str = ""
    linked_at: datetime


@cache
def _kms() -> Any:
    return boto3.client("kms", config=CLIENT_CONFIG)


def _context(user_id: str) -> dict[str, str]:
    # A ciphertext decrypts only for the user it was stored for: swapped items fail to decrypt.
    return {"purpose": "chat-oauth-tokens", "user_id": user_id}


class ChatLinkRepository:
    def __init__(self, table_name: str, key_id: str):
        self._table = table(table_name)
        self._key_id = key_id

    def save(self, link: ChatLink) -> None:
        tokens = {
            "access_token": link.access_token.get_secret_value(),
            "refresh_token": link.refresh_token.get_secret_value() if link.refresh_token else None,
        }
        ciphertext = _kms().encrypt(
            KeyId=self._key_id, Plaintext=json.dumps(tokens).encode(), EncryptionContext=_context(link.user_id)
        )["CiphertextBlob"]
        item = link.model_dump(mode="json", exclude={"access_token", "refresh_token"})
        self._table.put_item(Item={**item, "tokens": ciphertext})

    def get(self, user_id: str) -> ChatLink | None:
        item = self._table.get_item(Key={"user_id": user_id}, ConsistentRead=True).get("Item")
        if not item:
            return None
        plaintext = _kms().decrypt(CiphertextBlob=item.pop("tokens").value, EncryptionContext=_context(user_id))
        return ChatLink.model_validate({**item, **json.loads(plaintext["Plaintext"])})
