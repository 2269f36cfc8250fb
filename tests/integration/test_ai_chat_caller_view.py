"""svcAiChat with guild_id sees the guild as its caller does: a channel hidden from them is in neither the model's
context nor the answer's configuration or plan."""

from __future__ import annotations

import json

import pytest

from tests.helpers.chat_sandbox import BOB_ID, RIGHTS_LAB
from tests.helpers.deploy_worker import USER, link
from tests.helpers.handlers import bearer

HIDDEN_NAME, HIDDEN_TOPIC = "staff-secrets", "the raise list"


@pytest.fixture
def bob_chats(chat, invoke, platform):
    """svcAiChat as in AWS (the shared `chat` fixture), its user linked to bob (MANAGE_GUILD only in the lab)."""
    link(invoke, platform, chat_user=BOB_ID)
    return chat


def test_the_models_context_and_the_answer_leave_out_the_channel_hidden_from_the_caller(invoke, bob_chats):
    message = {"role": "user", "content": "Add a text channel called notices."}

    response = invoke("svcAiChat", {"messages": [message], "guild_id": RIGHTS_LAB}, headers=bearer(USER))

    assert response.status == 200, response.body
    context = json.dumps([request.body for request in bob_chats.requests])  # every call the turn made
    assert "lounge" in context  # the guild as bob sees it was given
    assert HIDDEN_NAME not in context
    assert HIDDEN_TOPIC not in context
    answer = json.dumps(response.body)
    assert HIDDEN_NAME not in answer
    assert HIDDEN_TOPIC not in answer
    assert not any(item["action"] == "delete" for item in response.body["plan"])
