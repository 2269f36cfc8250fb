"""A restore's pure parts: ids that stay true (the id map followed only for ids the guild no longer has), the plan
kept to `only`, and the members' wanted roles with what the caller may hand out."""

from __future__ import annotations

from svcconf.config import ServerConfig
from svcconf.deploy_engine.id_map import resolve, translate
from svcconf.deploy_engine.member_grants import Reach, dangerous_refusals, grant_refusals, wanted_roles
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deployments.restore_parts import only_plan
from tests.helpers.live_guilds import GuildBuilder, overwrite


def test_an_id_the_guild_has_is_never_followed_and_one_it_lacks_is_followed_to_the_end_of_its_chain():
    ids = {"1": "2", "2": "3", "9": "8"}

    assert resolve("1", {"1", "3"}, ids) == "1"  # still there: itself, whatever the map says
    assert resolve("1", {"3"}, ids) == "3"  # re-created twice
    assert resolve("9", {"3"}, ids) == "9"  # its new one is gone too: unchanged
    assert resolve("5", {"3"}, ids) == "5"  # never re-created
    assert resolve(None, {"3"}, ids) is None
    assert resolve("1", {"3"}, {"1": "2", "2": "1"}) == "1"  # a loop ends


def test_a_configuration_renames_the_object_its_old_id_was_re_created_as():
    guild = GuildBuilder()
    lounge = guild.channel("lounge-renamed")
    config = ServerConfig.model_validate({"name": "G", "channels": [{"name": "lounge", "id": "1191999999999999999"}]})

    plain = plan_deployment(guild.build(), config)
    through = plan_deployment(guild.build(), translate(config, [lounge], {"1191999999999999999": lounge}))

    assert sorted(i.action for i in plain.items if i.kind == "channel") == ["create"]
    assert [(i.action, i.id, [c.field for c in i.changes]) for i in through.items if i.kind == "channel"] == [
        ("update", lounge, ["name"])
    ]


def _guild_and_config() -> tuple[GuildBuilder, ServerConfig]:
    guild = GuildBuilder()
    crew = guild.role("Crew", "SEND_MESSAGES")
    lobby = guild.category("Lobby")
    guild.channel("general", parent=lobby, overwrites=[overwrite(crew, allow=("SEND_MESSAGES",))])
    config = ServerConfig.model_validate(
        {
            "name": "Renamed",
            "everyone_permissions": ["VIEW_CHANNEL"],
            "roles": [{"name": "Crew", "permissions": ["SEND_MESSAGES"]}, {"name": "Guests", "permissions": []}],
            "categories": [
                {
                    "name": "Lobby",
                    "channels": [
                        {"name": "general", "overwrites": [{"role": "Crew", "allow": ["SEND_MESSAGES"]}]},
                        {"name": "memes", "overwrites": [{"role": "Guests", "deny": ["SEND_MESSAGES"]}]},
                    ],
                }
            ],
        }
    )
    return guild, config


def test_only_channels_keeps_roles_and_settings_out_and_drops_overwrites_of_roles_the_guild_lacks():
    guild, config = _guild_and_config()
    plan = plan_deployment(guild.build(), config)

    kept = only_plan(plan, ["channels"])

    assert {i.kind for i in kept.items} <= {"category", "channel", "overwrite"}
    assert {s.op for s in kept.steps} == {"create_channel"}
    memes = next(s for s in kept.steps if s.name == "Lobby / memes")
    assert [o.target for o in next(s for s in plan.steps if s.name == "Lobby / memes").overwrites] == ["role:guests"]
    assert memes.overwrites == []  # Guests is not in the guild, and roles are not restored
    assert not any(i.key.endswith("role:guests") for i in kept.items)
    assert [(i.name, i.action) for i in kept.items if i.kind == "overwrite"] == [("Lobby / general → Crew", "keep")]


def test_only_roles_and_only_settings_keep_their_own_steps():
    guild, config = _guild_and_config()
    plan = plan_deployment(guild.build(), config)

    roles = only_plan(plan, ["roles"])
    settings = only_plan(plan, ["settings"])

    assert [(s.op, s.name) for s in roles.steps] == [("create_role", "Guests")]
    assert {i.kind for i in roles.items} == {"role"}
    assert {s.op for s in settings.steps} == {"update_role", "modify_guild"}  # @everyone and the server's name
    assert only_plan(plan, ["roles", "channels", "settings", "members"]) is plan


def test_members_want_the_roles_the_backup_holds_in_user_id_order_and_refusals_name_each_role_once():
    config = ServerConfig.model_validate(
        {
            "name": "G",
            "roles": [
                {"name": "Admins", "id": "1191000000000000501", "permissions": ["ADMINISTRATOR"]},
                {"name": "Crew", "id": "1191000000000000502", "permissions": ["SEND_MESSAGES"]},
            ],
        }
    )
    wants = wanted_roles(
        config,
        [
            ("1191000000000000902", ["1191000000000000502", "1191000000000000999"]),  # a managed role: left out
            ("1191000000000000901", ["1191000000000000501", "1191000000000000502", "1191000000000000502"]),
            ("1191000000000000903", ["1191000000000000999"]),  # nothing the backup holds: nobody to grant
        ],
    )
    assert [(w.user_id, [r.name for r in w.roles]) for w in wants] == [
        ("1191000000000000901", ["Admins", "Crew"]),
        ("1191000000000000902", ["Crew"]),
    ]
    assert [d.field for d in dangerous_refusals(wants)] == ["members.roles.Admins"]
    assert "1 member" in dangerous_refusals(wants)[0].message

    guild = GuildBuilder()
    admins = guild.role("Admins", "ADMINISTRATOR", position=3)
    crew = guild.role("Crew", "SEND_MESSAGES", position=1)
    live = guild.build()
    ids = {"role:admins": admins, "role:crew": crew}
    assert (
        grant_refusals(wants, live, ids, Reach(top_position=2, manages_roles=True))[0].field == "members.roles.Admins"
    )
    assert len(grant_refusals(wants, live, ids, Reach(top_position=2, manages_roles=True))) == 1
    assert [r.field for r in grant_refusals(wants, live, ids, Reach(top_position=9, manages_roles=False))] == [
        "members"
    ]
