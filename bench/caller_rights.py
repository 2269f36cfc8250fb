"""What a caller may do, at the platform's caps: their view of a 500-channel, 250-role server (every channel's
overwrites applied to them) and the per-object checks of a plan that changes every object. Both run on every
deploy, dry run, export and svcAiChat turn with a guild, so they must stay small beside the platform reads."""

from __future__ import annotations

import statistics
import sys
import timeit
from pathlib import Path
from typing import Any

from bench.quick import scaled

ROOT = Path(__file__).resolve().parents[1]
RUNS = scaled(21, 1)
GUILD = "1191000000000090000"


def _median_ms(action: Any) -> float:
    return statistics.median(timeit.repeat(action, number=1, repeat=RUNS)) * 1000


def run() -> None:
    sys.path[:0] = [str(ROOT / "shared")]
    from svcconf.caller_rights import caller_view, plan_refusals, standing_of
    from svcconf.chat import Channel, Role
    from svcconf.config import ServerConfig, to_bitfield
    from svcconf.deploy_engine.export import export_config
    from svcconf.deploy_engine.live import LiveGuild
    from svcconf.deploy_engine.plan import plan_deployment

    roles = [Role(id=GUILD, name="@everyone", permissions=to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES"]))]
    roles += [Role(id=str(int(GUILD) + n), name=f"role-{n}", permissions="0", position=n) for n in range(1, 249)]
    bot = str(int(GUILD) + 249)
    roles.append(Role(id=bot, name="bot", permissions=to_bitfield(["ADMINISTRATOR"]), position=249, managed=True))
    manager = str(int(GUILD) + 248)  # the highest ordinary role: MANAGE_ROLES, MANAGE_CHANNELS, MANAGE_GUILD
    roles[-2] = roles[-2].model_copy(
        update={"permissions": to_bitfield(["MANAGE_ROLES", "MANAGE_CHANNELS", "MANAGE_GUILD"])}
    )
    channels = []
    for c in range(10):
        category = str(int(GUILD) + 1000 + c * 50)
        hide = [{"id": GUILD, "type": 0, "allow": "0", "deny": to_bitfield(["VIEW_CHANNEL"])}] if c % 2 else []
        channels.append(Channel(id=category, type=4, name=f"area-{c}", permission_overwrites=hide))
        for n in range(49):
            overwrites = [
                {"id": str(int(GUILD) + 1 + (n % 200)), "type": 0, "allow": to_bitfield(["VIEW_CHANNEL"]), "deny": "0"},
                *hide,
            ]
            channels.append(
                Channel(
                    id=str(int(category) + 1 + n),
                    type=0,
                    name=f"room-{c}-{n}",
                    parent_id=category,
                    position=n,
                    permission_overwrites=overwrites,
                )
            )
    live = LiveGuild(id=GUILD, name="Bench", roles=roles, channels=channels, features=[], bot_role_ids=[bot])
    standing = standing_of(live, "1191000000000099999", [manager])
    view = caller_view(live, standing)
    config = export_config(view.live, view.live.settings).config.model_dump(mode="json")
    for category in config["categories"]:
        for channel in category["channels"]:
            channel["topic"] = "changed"  # every channel updated
    for role in config["roles"]:
        role["color"] = "#123456"  # every role updated
    plan = plan_deployment(view.live, ServerConfig.model_validate(config))
    refused = plan_refusals(standing, view.live, plan)

    print(
        f"\nWhat a caller may do in a server of {len(live.channels)} channels and {len(roles)} roles, median of {RUNS}"
    )
    print(f"  {'step':<62} {'objects':>8} {'time':>11}")
    rows = (
        ("the caller's view (every channel's overwrites)", len(live.channels), lambda: caller_view(live, standing)),
        (
            f"per-object checks of a plan changing every object ({len(refused)} refused)",
            len(plan.items),
            lambda: plan_refusals(standing, view.live, plan),
        ),
    )
    for label, count, action in rows:
        print(f"  {label:<62} {count:>8} {_median_ms(action):>8.2f} ms")
