"""What the local model answers: a registry of responders keyed by the requested JSON schema's title.

A structured-output request carries `output_config.format.schema`; its `title` is the envelope model's class
name (`ChatTurn` for svcAiChat). A responder registered for that title writes the answer; a request whose
title has none gets a generic instance of the schema, and a request without a schema a short text.

Add one in a module of this package (every module here is imported when the server starts)::

    from local.ai_model.responders import Request, responder

    @responder("TemplateBatch")                  # the title of the schema it answers
    def template_batch(request: Request) -> dict:
        return {"templates": [...]}               # JSON matching the schema (a str is sent as it is)

`Request` gives the body (`request.body`), the schema, the system prompt, the messages and `request.text()`
(all user text of the conversation). Answers must be deterministic: the same request, the same answer.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_REGISTRY: dict[str, Callable[[Request], Any]] = {}


@dataclass(frozen=True)
class Request:
    """One POST /v1/messages body, with the parts a responder reads."""

    body: dict[str, Any]

    @property
    def schema(self) -> dict[str, Any] | None:
        output_format = (self.body.get("output_config") or {}).get("format") or {}
        schema = output_format.get("schema") if output_format.get("type") == "json_schema" else None
        return schema if isinstance(schema, dict) else None

    @property
    def system(self) -> str:
        system = self.body.get("system")
        if isinstance(system, str):
            return system
        return "\n".join(block.get("text", "") for block in system or [] if isinstance(block, dict))

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    def blocks(self, role: str = "user") -> list[dict[str, Any]]:
        """Every content block of the messages of `role`, in order (a string content is one text block)."""
        blocks: list[dict[str, Any]] = []
        for message in self.messages:
            if not isinstance(message, dict) or message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                blocks.append({"type": "text", "text": content})
            elif isinstance(content, list):
                blocks.extend(block for block in content if isinstance(block, dict))
        return blocks

    def text(self, role: str = "user") -> str:
        return "\n".join(b.get("text", "") for b in self.blocks(role) if b.get("type") == "text")

    @staticmethod
    def text_of(message: dict[str, Any]) -> str:
        """The text of one message (its text blocks joined)."""
        content = message.get("content")
        if isinstance(content, str):
            return content
        blocks = content if isinstance(content, list) else []
        return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")

    def last_text(self, role: str = "user") -> str:
        for message in reversed(self.messages):
            if isinstance(message, dict) and message.get("role") == role:
                return self.text_of(message)
        return ""


def responder(title: str) -> Callable[[Callable[[Request], Any]], Callable[[Request], Any]]:
    """Register the function that answers structured requests whose schema is titled `title`."""

    def register(function: Callable[[Request], Any]) -> Callable[[Request], Any]:
        _REGISTRY[title] = function
        return function

    return register


def load_responders() -> dict[str, Callable[[Request], Any]]:
    """Import every module of this package (each registers its responders); the registry."""
    for module in pkgutil.iter_modules(importlib.import_module(__package__).__path__):
        if module.name not in ("server", "responders", "__main__"):
            importlib.import_module(f"{__package__}.{module.name}")
    return dict(_REGISTRY)


def answer(request: Request) -> Any:
    """The answer's JSON value (structured requests) or text."""
    schema = request.schema
    if schema is None:
        return f"Local model: received {len(request.messages)} message(s)."
    function = _REGISTRY.get(str(schema.get("title", "")))
    if function is not None:
        return function(request)
    return instance_of(schema, schema)


def instance_of(schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> Any:
    """A small deterministic value that matches `schema` (types, enums, required properties, $ref)."""
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return instance_of((root.get("$defs") or {}).get(name, {}), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [option for option in schema[key] if option.get("type") != "null"] or schema[key]
            return instance_of(options[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        required = schema.get("required") or list(properties)
        return {name: instance_of(properties[name], root, depth + 1) for name in required if name in properties}
    if kind == "array":
        return [] if depth > 6 else [instance_of(schema.get("items") or {}, root, depth + 1)]
    if kind == "string":
        return "local"
    if kind == "integer":
        return 0
    if kind == "number":
        return 0.0
    if kind == "boolean":
        return False
    return None
