"""The edit function's property: no edit of a category's overwrite opens a channel that has overwrites of its own.

Apart from tests/unit/test_config_edits.py because it is slow for a mutation run (60 generated configurations for each
mutant it reaches): the mutation gate selects the examples, `make unit` runs both.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from svcconf.config import CHANNEL_TYPES, from_bitfield
from svcconf.config.access import config_access, place_label
from svcconf.config.apply_edits import apply_edits
from svcconf.config.edits import Edit
from tests.helpers.generated_configs import OVERWRITE_PERMISSIONS, configurations


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(st.data())
def test_no_category_overwrite_edit_opens_a_channel_with_overwrites_of_its_own(data: st.DataObject) -> None:
    config = data.draw(configurations(min_categories=1))
    category = data.draw(st.sampled_from(config.categories))
    role = data.draw(st.sampled_from(["@everyone", *(r.name for r in config.roles)]))
    allow = data.draw(st.lists(st.sampled_from(OVERWRITE_PERMISSIONS), unique=True, max_size=3))
    deny = data.draw(st.lists(st.sampled_from([p for p in OVERWRITE_PERMISSIONS if p not in allow]), max_size=2))
    exists = any(o.role == role for o in category.overwrites)
    op = data.draw(st.sampled_from(["update", "remove"] if exists else ["add"]))
    change = {"set": {"allow": allow, "deny": list(dict.fromkeys(deny))}} if op != "remove" else {}

    result = apply_edits(
        config, [Edit.model_validate({"op": op, "kind": "overwrite", "name": role, "cat": category.name, **change})]
    )

    before, after = config_access(config), config_access(result.config)
    for channel in category.channels:
        if channel.overwrites:
            place = place_label(CHANNEL_TYPES[channel.type], channel.name, category.name)
            for holder in ["@everyone", *(r.name for r in config.roles)]:
                gained = after[place, holder] & ~before[place, holder]
                assert not gained, (place, holder, from_bitfield(gained))
