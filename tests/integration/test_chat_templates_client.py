"""The chat client's template lookup over HTTP against the sandbox: by the bot, anonymously, unknown codes, and
answers it cannot read."""

from __future__ import annotations

import logging

import pytest

from local.chat_sandbox import SandboxState
from svcconf.chat import ChatClient, UnknownTemplate
from svcconf.chat.errors import ChatUnreadableAnswer
from tests.helpers.chat_sandbox import DEMO_GUILD, chat_settings_for, new_chat_client


def test_a_template_is_read_with_the_bot_token_and_its_placeholders_stay_placeholders(
    chat_client: ChatClient, chat_state: SandboxState
):
    template = chat_client.get_template("svcGameNight")

    snapshot = template.serialized_source_guild
    assert (template.code, template.name, template.usage_count) == ("svcGameNight", "Game Night", 129034)
    assert [role.id for role in snapshot.roles] == ["0", "1", "2", "3"]
    assert snapshot.afk_channel_id == "8"
    assert {channel.parent_id for channel in snapshot.channels} == {None, "2", "6", "10"}
    assert chat_state.request_log[0]["auth"] == "Bot"


def test_without_a_bot_token_the_lookup_is_anonymous(chat_sandbox, chat_state: SandboxState):
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, SVC_BOT_TOKEN=None))

    assert client.get_template("svcPlainClub").name == "Plain Club"
    assert chat_state.request_log[0]["auth"] is None


def test_an_unknown_code_is_unknown_template_a_404(chat_client: ChatClient):
    with pytest.raises(UnknownTemplate) as caught:
        chat_client.get_template("svcstudyhall")  # codes are case-sensitive

    assert (caught.value.platform_code, caught.value.status) == (10057, 404)


def test_a_template_in_the_older_serialisation_reads_its_overwrites_types_by_name(chat_client: ChatClient):
    template = chat_client.get_template("svcOldGuard")  # overwrites of type "role", bitfields as numbers

    veterans = template.serialized_source_guild.channels[2]
    assert [(o.id, o.type, o.allow, o.deny) for o in veterans.permission_overwrites] == [
        ("0", 0, "0", "1024"),
        ("1", 0, "1024", "0"),
    ]


def test_a_template_answer_in_a_shape_no_platform_release_gives_is_a_502_naming_the_field(
    chat_client: ChatClient, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.ERROR, logger="svcconf.chat")

    with pytest.raises(ChatUnreadableAnswer) as caught:
        chat_client.get_template("svcOddShape")  # an overwrite of type "moderator"

    field = "serialized_source_guild.channels.2.permission_overwrites.0.type"
    assert (caught.value.status, caught.value.field, caught.value.route) == (502, field, "GET /guilds/templates/{code}")
    assert caught.value.message.startswith("The chat platform answered GET /guilds/templates/{code} in a shape")
    assert [record.getMessage() for record in caplog.records] == [
        f"chat platform answer to GET /guilds/templates/{{code}} unreadable at {field}: "
        "Input should be a valid integer, unable to parse string as an integer (a str)"
    ]


def test_a_channel_list_the_client_cannot_read_is_a_502_too(chat_client: ChatClient, chat_state: SandboxState):
    with chat_state.lock:
        channel = next(iter(chat_state.guilds[DEMO_GUILD]["channels"].values()))
        channel["type"] = "text"

    with pytest.raises(ChatUnreadableAnswer) as caught:
        chat_client.list_channels(DEMO_GUILD)

    assert caught.value.status == 502
    assert caught.value.field.endswith(".type")
