"""Configurations as answers give them: null fields left out (docs/05-deploy-engine.md, Configurations in answers).

Null and absent mean the same in a configuration ("as the server has it"), and a channel has about fifteen
optional fields, so a big server's answer was mostly nulls. Every answer that carries a configuration (svcAiChat,
deployToChat export, import and info, getConfigByCode) types it with `AnswerConfig` (or, for a stored document,
`NullsLeftOut`); requests keep taking the schema as it is, nulls included.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import WrapSerializer

from svcconf.config.schema import ServerConfig


def without_nulls(value: Any) -> Any:
    """`value` with every null member of its objects left out, at any depth (list items are kept as they are)."""
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


# A lambda, because a serializer's return annotation would become the JSON schema (`-> Any`: `{}`); without one,
# openapi.json keeps describing the one ServerConfig.
NullsLeftOut = WrapSerializer(lambda value, handler: without_nulls(handler(value)))
AnswerConfig = Annotated[ServerConfig, NullsLeftOut]
