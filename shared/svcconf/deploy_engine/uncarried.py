"""What a format read as a configuration cannot hold of version 4, said once per kind (deployToChat `import`, backups).

A native template (`serialized_source_guild`) has roles (their `colors` included since 2025) and channels, no AutoMod
rules, onboarding or welcome screen; discord-backup's `BackupData` has those neither, and one colour per role; the
platform format is the guild's, roles' and channels' GET answers, none of which holds the three. The configuration
then leaves the field out, and the plan (`plan_community.py`) leaves what a configuration leaves out as the server has
it, with `prune` too: saying so tells the user their server keeps its own, not that it loses them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from svcconf.config.lint import LintWarning

NOT_CARRIED = "not-carried"
Kind = Literal["automod", "onboarding", "welcome_screen", "colors"]
COMMUNITY_KINDS: tuple[Kind, ...] = ("automod", "onboarding", "welcome_screen")

_WHAT = {
    "automod": ("AutoMod rules", "`automod`", "the server's AutoMod rules as they are"),
    "onboarding": ("onboarding", "`onboarding`", "the server's onboarding as it is"),
    "welcome_screen": ("welcome screen", "`welcome_screen`", "the server's welcome screen as it is"),
}


def not_carried(source: str, kinds: Iterable[Kind]) -> list[LintWarning]:
    """One warning per kind `source` (e.g. "a native template") cannot hold: what the configuration lacks, and what a
    deploy of it does instead."""
    warnings = []
    for kind in kinds:
        if kind == "colors":
            message = (
                f"{source} keeps one colour per role, no gradient or holographic colours: the configuration's roles"
                " have no `colors`, and a deploy of it sends each role's plain `color` alone"
            )
            warnings.append(LintWarning(field="roles", rule=NOT_CARRIED, message=message))
            continue
        holds, field, servers = _WHAT[kind]
        message = (
            f"{source} holds no {holds}: the configuration has no {field}, and a deploy of it leaves {servers}, with"
            " `prune` too"
        )
        warnings.append(LintWarning(field=kind, rule=NOT_CARRIED, message=message))
    return warnings
