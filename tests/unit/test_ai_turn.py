"""svcAiChat's envelope, what the model may write: every field of the schema's models, but never the platform's ids."""

from __future__ import annotations

from typing import Any

from svcconf.config.channels import Channel
from svcconf.conversation.envelope import ChatTurn


def properties(schema: dict[str, Any], name: str) -> dict[str, Any]:
    return schema["$defs"][name]["properties"]


def test_what_an_edit_sets_or_a_build_writes_offers_every_schema_field_but_no_id() -> None:
    schema = ChatTurn.model_json_schema()

    edit_fields = properties(schema, "EditFields")
    built = [properties(schema, name) for name in ("CompactRole", "CompactCategory", "CompactChannel")]

    assert set(Channel.model_fields) - {"id"} <= set(edit_fields)
    assert "id" not in edit_fields
    assert all("id" not in fields for fields in built)
