"""The compact form of first builds: expanded into the schema, and every configuration compacted without loss."""

from __future__ import annotations

import json

import pytest

from local.samples import large_community
from svcconf.config import ServerConfig
from svcconf.config.compact import ROLE_PRESETS, compact, expand

COMPACT = {
    "name": "Study Hall",
    "roles": [
        {"name": "Admin", "permissions": "admin", "color": 15158332, "hoist": True},
        {"name": "Tutor", "permissions": "moderator"},
        {"name": "Student", "permissions": ["VIEW_AUDIT_LOG", "STREAM"]},
    ],
    "categories": [
        {"name": "Information", "read_only": True, "channels": ["rules", "announcements"]},
        {"name": "Study", "channels": ["homework-help", {"name": "Study Room", "type": "voice", "user_limit": 8}]},
        {"name": "Staff", "private_to": ["Admin", "Tutor"], "channels": ["staff-chat"]},
        {
            "name": "Vault",
            "private_to": ["Admin"],
            "read_only": True,
            "overwrites": [{"role": "Tutor", "deny": ["SPEAK"]}],
        },
    ],
    "channels": ["lobby"],
}


def test_the_compact_form_expands_to_the_schemas_facts() -> None:
    config = expand(COMPACT)

    assert [role.permissions for role in config.roles[:2]] == [ROLE_PRESETS["admin"], ROLE_PRESETS["moderator"]]
    info, study, staff, vault = config.categories
    assert [(o.role, o.allow, o.deny) for o in info.overwrites] == [("@everyone", [], ["SEND_MESSAGES"])]
    assert [(c.name, c.type) for c in study.channels] == [("homework-help", "text"), ("Study Room", "voice")]
    assert [(o.role, o.allow, o.deny) for o in staff.overwrites] == [
        ("@everyone", [], ["VIEW_CHANNEL"]),
        ("Admin", ["VIEW_CHANNEL"], []),
        ("Tutor", ["VIEW_CHANNEL"], []),
    ]
    assert [o.role for o in vault.overwrites] == ["@everyone", "Admin", "Tutor"]
    assert vault.overwrites[0].deny == ["VIEW_CHANNEL", "SEND_MESSAGES"]
    assert config.channels[0].name == "lobby"


def test_a_compact_form_round_trips_through_the_schema() -> None:
    assert compact(expand(COMPACT)) == COMPACT


@pytest.mark.parametrize("sizes", [(5, 3, 15), (20, 6, 60), (40, 8, 120), (250, 10, 480)])
def test_every_schema_configuration_compacts_without_losing_a_fact(sizes) -> None:
    config = ServerConfig.model_validate(large_community(*sizes))

    short = compact(config)

    assert expand(short) == config
    assert len(json.dumps(short)) < len(json.dumps(config.model_dump(mode="json")))


def test_what_the_compact_form_says_wrongly_the_schema_refuses() -> None:
    with pytest.raises(ValueError, match="overwrite names role 'Ghost'"):
        expand({"name": "A", "categories": [{"name": "Staff", "private_to": ["Ghost"]}]})
    with pytest.raises(ValueError, match="unknown permission 'superuser'"):
        expand({"name": "A", "roles": [{"name": "Boss", "permissions": "superuser"}]})


def test_a_neutral_overwrite_stays_in_the_compact_form_as_its_role_alone() -> None:
    config = ServerConfig.model_validate(
        {
            "name": "Alliance",
            "roles": [{"name": "Moderator"}],
            "categories": [
                {
                    "name": "Administration",
                    "overwrites": [
                        {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                        {"role": "Moderator", "allow": ["VIEW_CHANNEL"]},
                    ],
                    "channels": [{"name": "admin", "overwrites": [{"role": "Moderator", "allow": [], "deny": []}]}],
                }
            ],
        }
    )

    short = compact(config)

    assert short["categories"][0]["channels"] == [{"name": "admin", "overwrites": [{"role": "Moderator"}]}]
    assert expand(short) == config


def test_the_compact_form_keeps_the_ids_of_a_live_servers_objects() -> None:
    config = ServerConfig.model_validate(
        {
            "name": "Live",
            "roles": [{"id": "1191000000000009001", "name": "Admin", "permissions": ["ADMINISTRATOR"]}],
            "categories": [
                {
                    "id": "1191000000000009011",
                    "name": "Community",
                    "channels": [{"id": "1191000000000009021", "name": "general"}],
                }
            ],
            "channels": [{"id": "1191000000000009024", "name": "welcome"}, {"name": "new-here"}],
        }
    )

    short = compact(config)

    assert expand(short) == config
    assert short["categories"][0]["channels"] == [{"id": "1191000000000009021", "name": "general"}]
    assert short["channels"] == [{"id": "1191000000000009024", "name": "welcome"}, "new-here"]
