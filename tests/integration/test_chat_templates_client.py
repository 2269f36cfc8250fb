"""The chat client's template lookup over HTTP against the sandbox: by the bot, anonymously, and unknown codes."""

from __future__ import annotations

import pytest

from local.chat_sandbox import SandboxState
from svcconf.chat import ChatClient, UnknownTemplate
from tests.helpers.chat_sandbox import chat_settings_for, new_chat_client


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
