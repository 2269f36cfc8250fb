"""Dangerous grants need an acknowledgement: a configuration that gives @everyone (its server-wide permissions or an
overwrite) or every role (of two or more) a dangerous permission (the lint's list, docs/05-deploy-engine.md) is
deployed only when the request names those lint rules in `acknowledge`.

An AI answer steered by a prompt or an attachment, or an imported public template, can carry such a grant without
anyone having asked for it; the dry run shows the same findings as warnings, svcAiChat as `problems`.
"""

from __future__ import annotations

from collections.abc import Iterable

from svcconf.config import LintWarning, ServerConfig, lint_config
from svcconf.errors import Conflict, FieldError

# The lint's rules that find a dangerous permission given to every member.
DANGEROUS_GRANT_RULES = frozenset(
    {"everyone-permissions-dangerous", "everyone-dangerous-permission", "every-role-dangerous-permission"}
)


class GrantNotAcknowledged(Conflict):
    default_message = "The configuration gives every member dangerous permissions: name the rules in acknowledge."


def dangerous_grants(config: ServerConfig) -> list[LintWarning]:
    """The lint's findings of dangerous permissions given to every member (svcAiChat's `problems` use these too)."""
    return [warning for warning in lint_config(config) if warning.rule in DANGEROUS_GRANT_RULES]


def require_acknowledged(config: ServerConfig, acknowledge: Iterable[str], live: ServerConfig | None = None) -> None:
    """409 with one detail per dangerous grant whose rule `acknowledge` does not name. What the server already
    grants (`live`, the server read as a configuration) needs none: the platform's default @everyone mentions
    everyone, and deploying a server back as it is gives no one anything."""
    acknowledged = set(acknowledge)
    standing = {(w.rule, w.field, w.message) for w in dangerous_grants(live)} if live is not None else set()
    pending = [
        warning
        for warning in dangerous_grants(config)
        if warning.rule not in acknowledged and (warning.rule, warning.field, warning.message) not in standing
    ]
    if pending:
        rules = sorted({warning.rule for warning in pending})
        raise GrantNotAcknowledged(
            f"The configuration gives every member dangerous permissions; to deploy it anyway, send acknowledge: "
            f"{rules}.",
            details=[FieldError(field=w.field, rule=w.rule, message=w.message) for w in pending],
        )
