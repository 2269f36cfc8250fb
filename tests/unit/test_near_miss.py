"""Near-miss field names found from the request models alone: through unions, lists, nested models and ShapedAs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from svcconf.api.near_miss import NearMiss, ShapedAs, near_misses


class Tag(BaseModel):
    tag_name: str


class Deploy(BaseModel):
    action: Literal["deploy"]
    guild_id: str
    tags: list[Tag] = Field(default_factory=list)


class Chat(BaseModel):
    action: Literal["chat"]
    currentConfig: Annotated[dict[str, Any] | None, ShapedAs(Tag)] = None  # noqa: N815 - a spelling under test
    user: str = Field("", alias="userName")


Request = Annotated[Deploy | Chat, Field(discriminator="action")]


def test_a_key_that_differs_only_in_case_or_underscores_names_the_field() -> None:
    assert near_misses(Deploy, {"action": "deploy", "Guild_ID": "1", "guildId": "1"}) == [
        NearMiss(loc=("Guild_ID",), name="Guild_ID", meant="guild_id"),
        NearMiss(loc=("guildId",), name="guildId", meant="guild_id"),
    ]


def test_exact_names_and_unknown_fields_that_are_no_near_miss_pass() -> None:
    assert near_misses(Deploy, {"action": "deploy", "guild_id": "1", "guild": "x", "extra": 1}) == []


def test_the_discriminator_picks_the_member_whose_fields_count() -> None:
    # guild_id belongs to deploy: for chat it is only an unknown field, not a near miss.
    assert near_misses(Request, {"action": "chat", "guild_id": "1", "current_config": {}}) == [
        NearMiss(loc=("current_config",), name="current_config", meant="currentConfig")
    ]


def test_lists_nested_models_and_shaped_objects_are_followed_with_their_paths() -> None:
    deploy = {"action": "deploy", "guild_id": "1", "tags": [{"tag_name": "a"}, {"TagName": "b"}]}
    chat = {"action": "chat", "currentConfig": {"tagName": "c"}}

    assert [miss.loc for miss in near_misses(Request, deploy, ("body",))] == [("body", "tags", 1, "TagName")]
    assert [miss.loc for miss in near_misses(Request, chat, ("body",))] == [("body", "currentConfig", "tagName")]


def test_an_alias_is_a_known_name_and_its_near_misses_name_the_alias_the_caller_sends() -> None:
    assert near_misses(Chat, {"action": "chat", "userName": "x"}) == []
    assert near_misses(Chat, {"action": "chat", "user_name": "x"}) == [
        NearMiss(loc=("user_name",), name="user_name", meant="userName")
    ]


def test_a_message_says_the_right_name() -> None:
    assert (
        NearMiss(loc=("x",), name="x", meant="currentConfig").message == "is not a field; did you mean `currentConfig`?"
    )
