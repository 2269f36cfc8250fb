"""A deterministic local model that speaks the Messages API (POST /v1/messages) on loopback HTTP.

`make run` starts it when `SVC_AI_PROVIDER=local` and points the AI functions at it (`ANTHROPIC_BASE_URL`, a
dummy key): the adapter cannot tell it from the real provider. Tests use it as the fake provider, with
scripted answers, delays and error statuses (`server.script(Step(...))`) and the recorded requests.

    server.py      the HTTP server, the API's checks, prompt-cache and token accounting, scripted steps
    responders.py  the registry: answers by the requested schema's title (how to add one is written there)
    chat.py        svcAiChat's `ChatTurn`: a compact first build, then edits, from the conversation's keywords

Run alone: `python -m local.ai_model --port 8791`.
"""

from __future__ import annotations

from local.ai_model.responders import Request, instance_of, responder
from local.ai_model.server import LocalModelServer, RecordedRequest, Step, start_local_model

LOCAL_API_KEY = "local-model-key"

__all__ = [
    "LOCAL_API_KEY",
    "LocalModelServer",
    "RecordedRequest",
    "Request",
    "Step",
    "instance_of",
    "responder",
    "start_local_model",
]
