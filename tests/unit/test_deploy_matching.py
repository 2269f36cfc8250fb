"""with_ids: the configuration a deploy answers with, each object given the live id its key matched or created."""

from __future__ import annotations

from svcconf.config import ServerConfig
from svcconf.deploy_engine.matching import config_channel_key, match_objects, with_ids
from svcconf.deploy_engine.steps import category_key, role_key
from tests.helpers.live_guilds import GuildBuilder

QUIET, ARCHIVE, LOBBY = "1191000000000000778", "1191000000000000779", "1191000000000000780"
CONFIG = ServerConfig.model_validate(
    {
        "name": "Study Hall",
        "roles": [{"name": "Tutors"}, {"name": "Guests", "id": "1191000000000000777"}],
        "categories": [
            {"name": "Rooms", "channels": [{"name": "Maths Help"}, {"name": "Quiet", "type": "voice", "id": QUIET}]},
            {"name": "Archive", "id": ARCHIVE},
        ],
        "channels": [{"name": "rules"}, {"name": "lobby", "id": LOBBY}],
    }
)
IDS = {
    role_key("Tutors"): "1191000000000000701",
    category_key("Rooms"): "1191000000000000702",
    config_channel_key("Rooms", CONFIG.categories[0].channels[0]): "1191000000000000703",
    config_channel_key(None, CONFIG.channels[0]): "1191000000000000704",
}


def test_each_object_gets_the_id_its_key_names_and_an_object_it_does_not_name_keeps_its_own():
    result = with_ids(CONFIG, IDS)

    assert [role.id for role in result.roles] == ["1191000000000000701", "1191000000000000777"]
    assert [category.id for category in result.categories] == ["1191000000000000702", ARCHIVE]
    assert [channel.id for channel in result.categories[0].channels] == ["1191000000000000703", QUIET]
    assert [channel.id for channel in result.channels] == ["1191000000000000704", LOBBY]


def test_nothing_but_the_ids_changes():
    result = with_ids(CONFIG, IDS).model_dump(mode="json")

    for objects in (result["roles"], result["categories"], result["categories"][0]["channels"], result["channels"]):
        for item in objects:
            item.pop("id", None)
    expected = CONFIG.model_dump(mode="json")
    for objects in (
        expected["roles"],
        expected["categories"],
        expected["categories"][0]["channels"],
        expected["channels"],
    ):
        for item in objects:
            item.pop("id", None)
    assert result == expected
    assert with_ids(CONFIG, {}) == CONFIG


def test_a_category_is_matched_by_its_id_before_any_name():
    guild = GuildBuilder()
    chat, lounge = guild.category("Chat"), guild.category("Lounge")
    config = ServerConfig.model_validate({"name": "s", "categories": [{"name": "Lounge", "id": chat}]})

    matches = match_objects(guild.build(), config)

    assert matches.categories[category_key("Lounge")].id == chat  # renamed Chat, not the live Lounge
    assert lounge not in matches.claimed


def test_channels_after_one_matched_by_id_or_one_whose_category_is_new_are_still_matched_by_name():
    guild = GuildBuilder()
    chat = guild.category("Chat")
    general, memes = guild.channel("general", parent=chat), guild.channel("memes", parent=chat)
    rules = guild.channel("rules")
    config = ServerConfig.model_validate(
        {
            "name": "s",
            "categories": [
                {"name": "Chat", "channels": [{"name": "general", "id": general}, {"name": "memes"}]},
                {"name": "New", "channels": [{"name": "fresh"}]},
            ],
            "channels": [{"name": "rules"}],
        }
    )

    matches = match_objects(guild.build(), config)

    assert {key: channel.id for key, channel in matches.channels.items()} == {
        config_channel_key("Chat", config.categories[0].channels[0]): general,
        config_channel_key("Chat", config.categories[0].channels[1]): memes,
        config_channel_key(None, config.channels[0]): rules,
    }


def test_a_nameless_live_channel_is_taken_for_no_configured_name():
    guild = GuildBuilder()
    nameless = guild.channel("general")
    built = guild.build()
    live = built.model_copy(update={"channels": [c.model_copy(update={"name": None}) for c in built.channels]})
    config = ServerConfig.model_validate({"name": "s", "channels": [{"name": "General"}]})

    matches = match_objects(live, config)

    assert matches.channels == {}
    assert nameless not in matches.claimed


def test_a_configured_role_with_the_guild_s_id_is_not_taken_for_everyone():
    guild = GuildBuilder()
    built = guild.build()
    # @everyone's id is the guild's: a configuration that names it as a role's id names no role it may edit
    config = ServerConfig.model_validate({"name": "s", "roles": [{"name": "Members", "id": built.id}]})

    matches = match_objects(built, config)

    assert matches.roles == {}
    assert built.id not in matches.claimed_roles
