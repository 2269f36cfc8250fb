"""Sign-in states table: the `state` of a chat-platform sign-in the service started for a bearer user (chatAuth v4).

One item per state, keyed by the state's SHA-256 (the state itself, which travels in the browser's URLs, is never
stored), holding who it was minted for (`sub`, `iss`), the `redirect_uri` and `replace` it fixes, the PKCE verifier
(which never leaves the service) and when it expires (10 minutes). A state is used up by one conditional delete,
so of two requests that complete a sign-in with it at once exactly one links. DynamoDB's TTL removes the states
nobody used a while after they expire; whether one is still valid is decided by `expires_at`, never by the TTL.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from pydantic import BaseModel, SecretStr

from svcconf.store.dynamo import is_conditional_check_failure, table

# The TTL deletes an item this long after it expired (nothing relies on it).
KEEP_AFTER_EXPIRY_SECONDS = 3_600


def state_key(state: str) -> str:
    return "sha256:" + hashlib.sha256(state.encode()).hexdigest()


class SignInState(BaseModel):
    sub: str
    iss: str | None = None
    redirect_uri: str
    replace: bool = False
    code_verifier: SecretStr
    expires_at: datetime


class SignInStateRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    def put(self, state: str, minted: SignInState) -> None:
        item: dict[str, Any] = {
            **minted.model_dump(mode="json", exclude={"code_verifier"}, exclude_none=True),
            "state_key": state_key(state),
            "code_verifier": minted.code_verifier.get_secret_value(),
            "expiration": int(minted.expires_at.timestamp()) + KEEP_AFTER_EXPIRY_SECONDS,
        }
        self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(state_key)")

    def get(self, state: str) -> SignInState | None:
        item = self._table.get_item(Key={"state_key": state_key(state)}, ConsistentRead=True).get("Item")
        return SignInState.model_validate(item) if item else None

    def use(self, state: str) -> bool:
        """Use the state up: True for the one request that does, False when it was used (or never minted)."""
        try:
            self._table.delete_item(
                Key={"state_key": state_key(state)}, ConditionExpression="attribute_exists(state_key)"
            )
        except Exception as error:
            if is_conditional_check_failure(error):
                return False
            raise
        return True
