"""Chat-links table: a bearer user's chat identity and OAuth tokens, the tokens encrypted with KMS.

Tokens are plaintext only in memory: they are encrypted (one KMS call for both, bound to the user by the
encryption context) before they reach DynamoDB, and decrypted after they leave it.

Every write gives the item a new `revision`. A refresh stores its tokens only if the item still has the
revision it read (a conditional write), so two requests of one user that refresh at once cannot overwrite
each other's rotated tokens; the one that loses reads the winner's.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime
from functools import cache
from typing import Any

import boto3
from pydantic import BaseModel, SecretStr

from svcconf.store.dynamo import CLIENT_CONFIG, is_conditional_check_failure, table


class ChatLink(BaseModel):
    user_id: str  # the bearer token's `sub`
    chat_user_id: str
    chat_username: str
    access_token: SecretStr
    refresh_token: SecretStr | None = None
    expires_at: datetime
    scope: str = ""
    linked_at: datetime
    revision: str | None = None  # changes on every write; None before the first (and on items older than it)
    # v4: when the platform refused the link's refresh (revoked, the app deauthorised): the link is not used again
    # (no platform call) until a new sign-in replaces it.
    refused_at: datetime | None = None


class LinkedIdentity(BaseModel):
    """Who a user is linked to, read without the tokens (no decryption)."""

    chat_user_id: str
    chat_username: str
    refused_at: datetime | None = None


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

    def save(self, link: ChatLink) -> ChatLink:
        """Store the link whatever is stored (a new sign-in); returns it with its new revision."""
        saved = link.model_copy(update={"revision": secrets.token_hex(8)})
        self._table.put_item(Item=self._item(saved))
        return saved

    def save_if_unchanged(self, link: ChatLink, read: ChatLink) -> ChatLink | None:
        """Store the link only if the stored item is still the one `read` came from; None if it changed."""
        saved = link.model_copy(update={"revision": secrets.token_hex(8)})
        condition: dict[str, Any] = {"ExpressionAttributeNames": {"#revision": "revision"}}
        if read.revision is None:
            condition["ConditionExpression"] = "attribute_not_exists(#revision)"
        else:
            condition["ConditionExpression"] = "#revision = :read"
            condition["ExpressionAttributeValues"] = {":read": read.revision}
        try:
            self._table.put_item(Item=self._item(saved), **condition)
        except Exception as error:
            if is_conditional_check_failure(error):
                return None
            raise
        return saved

    def mark_refused(self, link: ChatLink, refused_at: datetime) -> bool:
        """Mark the stored link dead, unless it changed since `link` was read (a new sign-in wins): True if marked."""
        condition: dict[str, Any] = {"ExpressionAttributeNames": {"#revision": "revision"}}
        if link.revision is None:
            condition["ConditionExpression"] = "attribute_exists(user_id) AND attribute_not_exists(#revision)"
            condition["ExpressionAttributeValues"] = {":refused_at": refused_at.isoformat()}
        else:
            condition["ConditionExpression"] = "#revision = :read"
            condition["ExpressionAttributeValues"] = {":read": link.revision, ":refused_at": refused_at.isoformat()}
        try:
            self._table.update_item(
                Key={"user_id": link.user_id}, UpdateExpression="SET refused_at = :refused_at", **condition
            )
        except Exception as error:
            if is_conditional_check_failure(error):
                return False
            raise
        return True

    def revision(self, user_id: str) -> str | None:
        """The stored revision alone (no decryption): cheap to poll while another request refreshes."""
        item = self._table.get_item(
            Key={"user_id": user_id},
            ConsistentRead=True,
            ProjectionExpression="user_id, #revision",
            ExpressionAttributeNames={"#revision": "revision"},
        ).get("Item")
        return item.get("revision") if item else None

    def identity(self, user_id: str) -> LinkedIdentity | None:
        """The linked chat identity alone (no KMS call), or None when the user has no link."""
        item = self._table.get_item(
            Key={"user_id": user_id},
            ConsistentRead=True,
            ProjectionExpression="chat_user_id, chat_username, refused_at",
        ).get("Item")
        return LinkedIdentity.model_validate(item) if item else None

    def get(self, user_id: str) -> ChatLink | None:
        item = self._table.get_item(Key={"user_id": user_id}, ConsistentRead=True).get("Item")
        if not item:
            return None
        plaintext = _kms().decrypt(CiphertextBlob=item.pop("tokens").value, EncryptionContext=_context(user_id))
        return ChatLink.model_validate({**item, **json.loads(plaintext["Plaintext"])})

    def _item(self, link: ChatLink) -> dict[str, Any]:
        tokens = {
            "access_token": link.access_token.get_secret_value(),
            "refresh_token": link.refresh_token.get_secret_value() if link.refresh_token else None,
        }
        ciphertext = _kms().encrypt(
            KeyId=self._key_id, Plaintext=json.dumps(tokens).encode(), EncryptionContext=_context(link.user_id)
        )["CiphertextBlob"]
        item = link.model_dump(mode="json", exclude={"access_token", "refresh_token"}, exclude_none=True)
        return {**item, "tokens": ciphertext}
