"""The models are told every permission the lint calls dangerous: a rule the prompt leaves out is a refusal or a
warning the user meets after the model's turn instead of a configuration that was right the first time."""

from __future__ import annotations

import re

import pytest

from svcconf.config.lint import DANGEROUS_PERMISSIONS
from svcconf.conversation.prompt import SYSTEM_PROMPT as CHAT_PROMPT
from svcconf.templates.generation import SYSTEM_PROMPT as TEMPLATE_PROMPT


@pytest.mark.parametrize("prompt", [CHAT_PROMPT, TEMPLATE_PROMPT], ids=["svcAiChat", "template generation"])
def test_each_prompt_names_every_dangerous_permission_of_the_lint(prompt: str) -> None:
    rule = prompt.split("dangerous permissions", 1)[1].split("\n- ", 1)[0]  # the rule's own lines

    assert [name for name in DANGEROUS_PERMISSIONS if name not in re.findall(r"[A-Z_]+", rule)] == []
