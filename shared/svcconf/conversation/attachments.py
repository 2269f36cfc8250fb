"""What svcAiChat gives the model of the user's files (docs/06-ai.md, svcAiChat).

Images and PDFs go by URL (the provider fetches them; the service never does); any other file is not sent, and a
warning names it. An attachment whose analysis is done (`analysis_status` `done` or `completed`, with an
`analysis_result`) gives the model that text, its first 8,000 characters, as the user's own description of the
file, whatever its type: a text block of the user's turn, delimited and labelled with the file's name. The text is
another tool's reading of an upload, so it is untrusted: it stays inside its block (a closing tag or a service
context in it is defanged) and the system prompt says it is the user's material, never the service's word.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from svcconf.ai.token_estimate import estimated_tokens
from svcconf.config import LintWarning
from svcconf.conversation.models import Attachment
from svcconf.conversation.prompt import file_media_type

DESCRIPTION_OPEN, DESCRIPTION_CLOSE = "<file_description", "</file_description>"
# The tags that delimit what the service writes (its context) and the descriptions themselves: inside a description
# (or a file's name) their '<' becomes '&lt;', so the text cannot close its block or open one of the service's.
_TAGS = re.compile(r"<(\s*/?\s*(?:file_description|service_context))", re.IGNORECASE)


@dataclass(frozen=True)
class Described:
    """One attachment's finished analysis, as the model reads it: the request field it came from, its label."""

    field: str
    label: str
    text: str

    def block(self) -> dict[str, Any]:
        """The text block of the user's turn that carries it."""
        label = json.dumps(defanged(self.label), ensure_ascii=False)
        text = (
            f"{DESCRIPTION_OPEN} file={label}>\n"
            f"My description of the attached file {label} (from the app's analysis of it):\n"
            f"{defanged(self.text)}\n{DESCRIPTION_CLOSE}"
        )
        return {"type": "text", "text": text}

    def tokens(self) -> int:
        return estimated_tokens(str(self.block()["text"]))


def defanged(text: str) -> str:
    return _TAGS.sub(r"&lt;\1", text)


def described_files(attachments: list[Attachment]) -> list[Described]:
    """The attachments whose analysis the model is given, in the request's order."""
    return [
        Described(field=f"attachments[{index}].analysis_result", label=file.label(), text=text)
        for index, file in enumerate(attachments)
        if (text := file.analysis()) is not None
    ]


def sendable_files(attachments: list[Attachment], file_urls: list[str]) -> tuple[list[Attachment], list[LintWarning]]:
    """The files the model can read (images and PDFs), and a warning naming each other one: it is not sent (it was
    once sent labelled as a PDF); another tool's backup goes to deployToChat `import` as `data`."""
    named = [(f"attachments[{i}]", file) for i, file in enumerate(attachments)]
    named += [(f"file_urls[{i}]", Attachment(url=url)) for i, url in enumerate(file_urls)]
    sendable, unsent = [], []
    for field, file in named:
        if file_media_type(file) is not None:
            sendable.append(file)
            continue
        message = (
            f"{file.name or file.url} is neither an image nor a PDF: it was not sent to the model. To start from "
            "another tool's backup or export (JSON), send it to deployToChat `import` as `data`."
        )
        if file.analysis() is not None:
            message += " Its analysis (analysis_result) was given to the model as your description of it."
        unsent.append(LintWarning(field=field, rule="attachment-not-sent", message=message))
    return sendable, unsent
