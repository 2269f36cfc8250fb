"""Configuration version 4 (onboarding, AutoMod, the welcome screen, role colours): a configuration at each limit that
depends on it alone is valid, one past it is refused naming the field; the names these objects give are the
configuration's own."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from svcconf.config import ServerConfig
from svcconf.errors import field_path

Body = dict[str, Any]


def base() -> Body:
    return {
        "name": "Arcade",
        "roles": [{"name": "Mods", "permissions": ["MANAGE_MESSAGES"]}, {"name": "EU"}, {"name": "NA"}],
        "channels": [{"name": "general"}, {"name": "mod-log"}, {"name": "Lobby", "type": "voice"}],
        "automod": [
            {"name": "Links", "trigger": "keyword", "keywords": ["discord.gg*"], "actions": [{"type": "block"}]},
        ],
        "onboarding": {
            "enabled": True,
            "default_channels": ["general"],
            "prompts": [{"title": "Region?", "options": [{"title": "EU", "roles": ["EU"], "channels": ["general"]}]}],
        },
        "welcome_screen": {"description": "Hi", "channels": [{"channel": "general", "description": "Say hello"}]},
    }


def problems(body: Body) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as caught:
        ServerConfig.model_validate(body)
    return [(field_path(error["loc"]), error["msg"]) for error in caught.value.errors()]


def paths(body: Body) -> list[str]:
    return [path for path, _ in problems(body)]


def with_change(change: Callable[[Body], None]) -> Body:
    body = copy.deepcopy(base())
    change(body)
    return body


def rule(body: Body) -> Body:
    return body["automod"][0]


def prompt(body: Body) -> Body:
    return body["onboarding"]["prompts"][0]


def keyword_rules(count: int) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        body["automod"] = [
            {"name": f"k{n}", "trigger": "keyword", "keywords": ["x"], "actions": [{"type": "block"}]}
            for n in range(count)
        ]

    return change


def set_in(getter: Callable[[Body], Body], field: str, value: Any) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        getter(body)[field] = value

    return change


def screen(body: Body) -> Body:
    return body["welcome_screen"]


def onboarding(body: Body) -> Body:
    return body["onboarding"]


def welcome_channels(count: int) -> list[Body]:
    return [{"channel": "general", "description": "d"} for _ in range(count)]


def options(count: int) -> list[Body]:
    return [{"title": f"o{n}"} for n in range(count)]


def prompts(count: int) -> list[Body]:
    return [{"title": f"p{n}", "options": [{"title": "o"}]} for n in range(count)]


# (name, the change at the limit, the change one past it, the field the refusal names)
LIMITS: list[tuple[str, Callable[[Body], None], Callable[[Body], None], str]] = [
    ("keyword rules", keyword_rules(6), keyword_rules(7), "config.automod[6].trigger"),
    ("keywords", set_in(rule, "keywords", ["k"] * 1000), set_in(rule, "keywords", ["k"] * 1001), "automod[0].keywords"),
    ("keyword size", set_in(rule, "keywords", ["k" * 60]), set_in(rule, "keywords", ["k" * 61]), "keywords[0]"),
    ("regexes", set_in(rule, "regex", ["a"] * 10), set_in(rule, "regex", ["a"] * 11), "automod[0].regex"),
    ("regex size", set_in(rule, "regex", ["a" * 260]), set_in(rule, "regex", ["a" * 261]), "automod[0].regex[0]"),
    ("allow list", set_in(rule, "allow", ["a"] * 100), set_in(rule, "allow", ["a"] * 101), "automod[0].allow"),
    (
        "exempt roles",
        set_in(rule, "exempt_roles", ["EU"] * 20),
        set_in(rule, "exempt_roles", ["EU"] * 21),
        "exempt_roles",
    ),
    (
        "exempt channels",
        set_in(rule, "exempt_channels", ["general"] * 50),
        set_in(rule, "exempt_channels", ["general"] * 51),
        "automod[0].exempt_channels",
    ),
    (
        "actions",
        set_in(rule, "actions", [{"type": "block"}] * 5),
        set_in(rule, "actions", [{"type": "block"}] * 6),
        "actions",
    ),
    (
        "timeout",
        set_in(rule, "actions", [{"type": "timeout", "seconds": 2419200}]),
        set_in(rule, "actions", [{"type": "timeout", "seconds": 2419201}]),
        "automod[0].actions[0].seconds",
    ),
    (
        "block message",
        set_in(rule, "actions", [{"type": "block", "message": "m" * 150}]),
        set_in(rule, "actions", [{"type": "block", "message": "m" * 151}]),
        "automod[0].actions[0].message",
    ),
    (
        "welcome channels",
        set_in(screen, "channels", welcome_channels(5)),
        set_in(screen, "channels", welcome_channels(6)),
        "welcome_screen.channels",
    ),
    (
        "welcome description",
        set_in(screen, "description", "d" * 140),
        set_in(screen, "description", "d" * 141),
        "welcome_screen.description",
    ),
    (
        "prompts",
        set_in(onboarding, "prompts", prompts(15)),
        set_in(onboarding, "prompts", prompts(16)),
        "onboarding.prompts",
    ),
    ("options", set_in(prompt, "options", options(50)), set_in(prompt, "options", options(51)), "prompts[0].options"),
]


@pytest.mark.parametrize(("name", "at", "past", "field"), LIMITS, ids=[limit[0] for limit in LIMITS])
def test_a_configuration_at_each_limit_is_valid_and_one_past_it_names_the_field(
    name: str, at: Callable[[Body], None], past: Callable[[Body], None], field: str
) -> None:
    # Given a configuration at the limit, Then it is valid
    ServerConfig.model_validate(with_change(at))
    # When one past it, Then the refusal names the field
    found = paths(with_change(past))
    assert any(field.removeprefix("config.") in path for path in found), found


def test_a_welcome_channel_description_is_1_to_50() -> None:
    ok = with_change(lambda b: screen(b)["channels"][0].update(description="d" * 50))
    ServerConfig.model_validate(ok)
    assert paths(with_change(lambda b: screen(b)["channels"][0].update(description="d" * 51))) == [
        "welcome_screen.channels[0].description"
    ]
    assert paths(with_change(lambda b: screen(b)["channels"][0].update(description=""))) == [
        "welcome_screen.channels[0].description"
    ]


def test_one_rule_of_each_other_trigger_and_a_second_is_refused() -> None:
    def rules(extra: Body | None) -> Callable[[Body], None]:
        def change(body: Body) -> None:
            body["automod"] = [
                {"name": "spam", "trigger": "spam", "actions": [{"type": "block"}]},
                {"name": "preset", "trigger": "keyword_preset", "presets": ["slurs"], "actions": [{"type": "block"}]},
                {"name": "mentions", "trigger": "mention_spam", "mention_limit": 50, "actions": [{"type": "block"}]},
                {
                    "name": "profile",
                    "trigger": "member_profile",
                    "keywords": ["x"],
                    "actions": [{"type": "block_interaction"}],
                },
                *([extra] if extra else []),
            ]

        return change

    ServerConfig.model_validate(with_change(rules(None)))
    second = {"name": "more mentions", "trigger": "mention_spam", "actions": [{"type": "block"}]}
    assert problems(with_change(rules(second))) == [
        ("automod[4].trigger", "the platform allows at most 1 mention_spam rule(s) in a server")
    ]


def test_a_trigger_takes_only_its_own_fields_and_actions() -> None:
    def spam(body: Body) -> None:
        body["automod"] = [
            {"name": "s", "trigger": "spam", "keywords": ["x"], "actions": [{"type": "timeout", "seconds": 60}]}
        ]

    assert sorted(paths(with_change(spam))) == ["automod[0].actions[0].type", "automod[0].keywords"]
    interaction = set_in(rule, "actions", [{"type": "block_interaction"}])
    assert paths(with_change(interaction)) == ["automod[0].actions[0].type"]
    assert paths(with_change(set_in(rule, "mention_limit", 51))) == ["automod[0].mention_limit"]


def test_an_action_takes_the_fields_of_its_type() -> None:
    assert paths(with_change(set_in(rule, "actions", [{"type": "alert"}]))) == ["automod[0].actions[0].channel"]
    assert paths(with_change(set_in(rule, "actions", [{"type": "block", "channel": "general"}]))) == [
        "automod[0].actions[0].channel"
    ]
    assert paths(with_change(set_in(rule, "actions", []))) == ["automod[0].actions"]


def test_a_preset_rule_allows_1000_entries() -> None:
    def preset(count: int) -> Callable[[Body], None]:
        def change(body: Body) -> None:
            body["automod"] = [
                {"name": "p", "trigger": "keyword_preset", "allow": ["a"] * count, "actions": [{"type": "block"}]}
            ]

        return change

    ServerConfig.model_validate(with_change(preset(1000)))
    assert paths(with_change(preset(1001))) == ["automod[0].allow"]


def test_names_are_the_configurations_own() -> None:
    def wrong(body: Body) -> None:
        rule(body)["exempt_roles"] = ["@everyone", "Ghosts"]
        rule(body)["exempt_channels"] = ["nowhere"]
        rule(body)["actions"] = [{"type": "alert", "channel": "Lobby"}]  # a voice channel cannot take alerts
        prompt(body)["options"][0]["roles"] = ["@everyone"]  # an option hands out a role of the configuration
        screen(body)["channels"][0]["channel"] = "gone"

    assert sorted(paths(with_change(wrong))) == [
        "automod[0].actions[0].channel",
        "automod[0].exempt_channels[0]",
        "automod[0].exempt_roles[1]",
        "onboarding.prompts[0].options[0].roles[0]",
        "welcome_screen.channels[0].channel",
    ]


def test_rules_prompts_and_options_are_matched_by_name_so_names_differ() -> None:
    def rules(body: Body) -> None:
        body["automod"].append({**rule(body), "name": "LINKS"})

    def titles(body: Body) -> None:
        prompt(body)["options"].append({"title": "eu"})
        onboarding(body)["prompts"].append({"title": "region?", "options": [{"title": "x"}]})

    assert paths(with_change(rules)) == ["automod[1].name"]
    assert paths(with_change(titles)) == ["onboarding.prompts[0].options[1].title"]  # the inner object first
    del prompt(body := with_change(titles))["options"][1]
    assert paths(body) == ["onboarding.prompts[1].title"]


def test_colours_primary_is_the_roles_colour_and_holographic_is_the_platforms_set() -> None:
    def colours(role: Body) -> Callable[[Body], None]:
        return lambda body: body["roles"].__setitem__(0, {"name": "Mods", **role})

    config = ServerConfig.model_validate(with_change(colours({"colors": {"primary": "#FF0000", "secondary": 255}})))
    assert config.roles[0].color == 0xFF0000
    assert config.roles[0].colors is not None
    assert config.roles[0].colors.platform() == {
        "primary_color": 0xFF0000,
        "secondary_color": 255,
        "tertiary_color": None,
    }
    assert paths(with_change(colours({"color": 1, "colors": {"primary": 2}}))) == ["roles[0].color"]
    ServerConfig.model_validate(with_change(colours({"color": 2, "colors": {"primary": 2}})))
    holographic = ServerConfig.model_validate(
        with_change(colours({"colors": {"primary": 11127295, "holographic": True}}))
    ).roles[0]
    assert holographic.colors is not None
    assert holographic.colors.platform() == {
        "primary_color": 11127295,
        "secondary_color": 16759788,
        "tertiary_color": 16761760,
    }
    assert paths(with_change(colours({"colors": {"primary": 1, "holographic": True}}))) == ["roles[0].colors"]
    assert paths(with_change(colours({"colors": {"primary": 1, "secondary": 16777216}}))) == [
        "roles[0].colors.secondary"
    ]


def test_a_version_3_configuration_means_the_same() -> None:
    body = with_change(lambda b: [b.pop(key) for key in ("automod", "onboarding", "welcome_screen")])
    config = ServerConfig.model_validate(body)
    assert (config.automod, config.onboarding, config.welcome_screen) == (None, None, None)
    assert "automod" not in config.model_dump(exclude_none=True)
