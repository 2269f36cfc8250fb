"""A gradient on an existing role of a guild without ENHANCED_ROLE_COLORS: the warning names the role's own path."""

from __future__ import annotations

from svcconf.config import ServerConfig
from svcconf.deploy_engine.plan import plan_deployment
from tests.helpers.live_guilds import GuildBuilder


def test_an_existing_roles_gradient_without_the_feature_warns_at_its_colors() -> None:
    built = GuildBuilder()
    built.role("Mods", color=1)
    config = ServerConfig.model_validate(
        {"name": "Community", "roles": [{"name": "Mods", "colors": {"primary": 1, "secondary": 2}}]}
    )
    plan = plan_deployment(built.build(), config)
    assert [(w.field, w.rule) for w in plan.warnings] == [("roles[0].colors", "gradient-unavailable")]
