"""Export is exact: for generated live guilds (channels with more, fewer and neutral overwrites than their category,
private categories, @everyone denies, member overwrites, voice rooms), the exported configuration grants per place
and role what the guild does, and deploys back with no write. The counts are printed."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from svcconf.chat import Guild
from svcconf.config import EVERYONE
from svcconf.config.access import access_differences, config_access
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import LiveGuild, guild_access
from svcconf.deploy_engine.plan import plan_deployment
from tests.helpers.generated_configs import ROLE_NAMES, ROLE_PERMISSIONS, overwrites
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, overwrite

MEMBER_ID = "1191000000000000101"
EXAMPLES = 100


@st.composite
def live_overwrites(draw: st.DrawFn, role_ids: dict[str, str]) -> list[dict[str, object]]:
    """A configuration's kind of overwrites (allows, denies, neutral ones) for the guild's roles by id, and
    sometimes a member's (not a role's)."""
    found = [
        overwrite(role_ids[o["role"]], allow=tuple(o["allow"]), deny=tuple(o["deny"]))
        for o in draw(overwrites([name for name in role_ids if name != EVERYONE]))
    ]
    if draw(st.booleans()):
        found.append({"id": MEMBER_ID, "type": 1, "allow": "1024", "deny": "0"})
    return found


@st.composite
def live_guilds(draw: st.DrawFn) -> LiveGuild:
    guild = GuildBuilder()
    names = draw(st.lists(st.sampled_from(ROLE_NAMES), unique=True, max_size=3))
    role_ids = {EVERYONE: GUILD_ID}
    for name in names:
        role_ids[name] = guild.role(name, *draw(st.lists(st.sampled_from(ROLE_PERMISSIONS), unique=True)))
    for c in range(draw(st.integers(0, 3))):
        category_overwrites = draw(live_overwrites(role_ids))
        category = guild.category(f"Area {c}", category_overwrites)
        for n, kind in enumerate(draw(st.lists(st.sampled_from(["text", "voice"]), max_size=3))):
            # a copy of its category's (synced), or overwrites of its own: more, fewer, neutral ones
            own = category_overwrites if draw(st.booleans()) else draw(live_overwrites(role_ids))
            guild.channel(f"room-{c}-{n}", kind, parent=category, overwrites=own)
    for n in range(draw(st.integers(0, 2))):
        guild.channel(f"lobby-{n}", overwrites=draw(live_overwrites(role_ids)))
    return guild.build()


def test_a_generated_guilds_export_grants_what_the_guild_does_and_deploys_back_with_no_write():
    counts: Counter[str] = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True)
    @given(live_guilds())
    def exports_exactly(live: LiveGuild) -> None:
        exported = export_config(live, Guild(id=GUILD_ID, name="g"))
        found = guild_access(live)
        differences = access_differences(found, config_access(exported.config))
        counts["guilds"] += 1
        counts["places x roles"] += len(found)
        counts["differences"] += len(differences)
        assert differences == []
        assert [w.message for w in exported.warnings if w.rule == "unrepresentable"] == []
        assert plan_deployment(live, exported.config).steps == []

    exports_exactly()

    print(f"\ngenerated guilds exported: {dict(counts)}")
    assert counts["guilds"] == EXAMPLES
    assert counts["differences"] == 0
