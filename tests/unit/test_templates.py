"""The template library's pure parts: the starter set, vetting candidates, ranking suggestions, chunking a job."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import pytest

from local.template_writer import write_templates
from svcconf.config import lint_config
from svcconf.templates.candidates import Drop, TemplateDraft, template_id, vet, vet_all
from svcconf.templates.generation import SERVER_KINDS, TemplateBatch, kinds_for, prompt
from svcconf.templates.library import starter_set
from svcconf.templates.ranking import questionnaire_words, rank, stem, stems
from svcconf.templates.seeding import ChunkRequest, chunk_sizes


@dataclass
class Summary:
    name: str
    description: str
    tags: list[str] = field(default_factory=list)


def starter_dict(name: str) -> dict:
    draft = next(draft for draft in starter_set() if draft.name == name)
    return copy.deepcopy(draft.model_dump(mode="json", exclude_unset=True))


# ---------------------------------------------------------------- the starter set


def test_the_starter_set_has_at_least_12_distinct_templates_each_valid_and_lint_clean():
    drafts = starter_set()

    assert len(drafts) >= 12
    assert len({draft.id for draft in drafts}) == len(drafts)
    for draft in drafts:
        assert lint_config(draft.config) == [], draft.name
        assert 2 <= len(draft.tags) <= 8, draft.name
        assert draft.config.roles, draft.name
        assert draft.config.channel_count() >= 5, draft.name


def test_the_starter_set_covers_common_kinds_of_servers():
    tags = {tag for draft in starter_set() for tag in draft.tags}

    assert {"gaming", "education", "business", "open-source", "friends", "support", "art", "music"} <= tags


# ---------------------------------------------------------------- vetting


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Gaming Community", "gaming-community"),
        ("  gaming   COMMUNITY!! ", "gaming-community"),
        ("Café Club", "café-club"),
    ],
)
def test_a_template_is_identified_by_its_normalised_name(name, expected):
    assert template_id(name) == expected


def test_a_candidate_invalid_by_the_schema_is_dropped_with_the_field_named():
    raw = starter_dict("Gaming Community")
    raw["config"]["categories"][2]["overwrites"][1]["role"] = "Mods"

    outcome = vet(raw, 3)

    assert isinstance(outcome, Drop)
    assert outcome.position == 3
    assert outcome.name == "Gaming Community"
    assert outcome.reason.startswith("invalid: config.categories[2].overwrites[1].role")


def test_a_valid_but_unsafe_candidate_is_dropped_naming_the_lint_rule():
    raw = starter_dict("Friends Hangout")
    raw["config"]["channels"][0]["overwrites"] = [{"role": "@everyone", "allow": ["MENTION_EVERYONE"]}]

    outcome = vet(raw)

    assert isinstance(outcome, Drop)
    assert outcome.reason == "unsafe: everyone-dangerous-permission at channels[0].overwrites[0].allow"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"description": ""}, "description"),
        ({"tags": []}, "tags"),
        ({"name": "x" * 101}, "name"),
        ({"config": "a server"}, "config"),
    ],
)
def test_a_candidate_without_a_proper_name_description_or_tags_is_dropped(change, field):
    raw = {**starter_dict("Book Club"), **change}

    outcome = vet(raw)

    assert isinstance(outcome, Drop)
    assert outcome.reason.startswith(f"invalid: {field}")


def test_a_name_without_letters_or_digits_is_dropped():
    assert isinstance(vet({**starter_dict("Book Club"), "name": "!!!"}), Drop)


def test_a_second_candidate_of_the_same_normalised_name_in_a_chunk_is_dropped():
    first = starter_dict("Book Club")
    second = {**starter_dict("Fitness Club"), "name": "book  CLUB"}

    kept, dropped = vet_all([first, second, starter_dict("Esports Team")])

    assert [(position, draft.name) for position, draft in kept] == [(0, "Book Club"), (2, "Esports Team")]
    assert [(drop.position, drop.reason) for drop in dropped] == [(1, "duplicate name in the same chunk")]


def test_tags_are_normalised_like_names():
    draft = TemplateDraft.model_validate({**starter_dict("Book Club"), "tags": ["Board Games", "RPG"]})

    assert draft.tags == ["board-games", "rpg"]


# ---------------------------------------------------------------- ranking


LIBRARY = [
    Summary("Gaming Community", "Game chat, looking-for-group and voice lobbies.", ["gaming", "voice", "lfg"]),
    Summary("Esports Team", "Rosters, scrims and strategy for a competitive team.", ["esports", "gaming", "team"]),
    Summary("Study Group", "Students study together with voice rooms.", ["study", "education", "students"]),
    Summary("Book Club", "Reading one book a month.", ["books", "reading"]),
    Summary("Anime Fans", "Seasonal anime, manga and watch parties.", ["anime", "manga"]),
]


def test_endings_are_reduced_so_that_related_words_match():
    assert stem("gamers") == stem("games") == stem("gaming") == stem("game")
    assert stem("studies") == stem("study")
    assert stems("The Books we are READING") == {"book", "read"}


def test_a_tag_match_outranks_a_name_match_which_outranks_a_description_match():
    ranked = rank(LIBRARY, "a server for gamers who like voice chat", {})

    assert [summary.name for summary in ranked] == ["Gaming Community", "Esports Team", "Study Group"]


def test_questionnaire_answers_and_options_answered_true_count():
    questionnaire = {"server_type": "school", "topics": ["Reading", "books"], "voice": False, "students": True}

    assert sorted(questionnaire_words(questionnaire)) == ["Reading", "books", "school", "students"]
    assert [summary.name for summary in rank(LIBRARY, "", questionnaire)] == ["Book Club", "Study Group"]


def test_templates_that_match_nothing_are_never_suggested():
    assert rank(LIBRARY, "cooking recipes and gardening", {"budget": 3}) == []
    assert rank(LIBRARY, "", None) == []


def test_equal_scores_are_ordered_by_name_and_the_limit_holds():
    tied = [Summary(name, "Plain.", ["chess"]) for name in ("Zeta Chess", "alpha chess", "Mid Chess", "Beta Chess")]

    ranked = rank(tied, "we play chess", {}, limit=3)

    assert [summary.name for summary in ranked] == ["alpha chess", "Beta Chess", "Mid Chess"]
    assert rank(tied, "chess", {}, limit=0) == []


def test_the_same_request_always_gets_the_same_suggestions():
    text = "students reading anime and playing games"

    assert rank(LIBRARY, text, {}) == rank(list(reversed(LIBRARY)), text, {})


def test_the_starter_set_answers_plain_requests():
    summaries = list(starter_set())

    def best(text: str) -> str:
        return rank(summaries, text, {})[0].name

    assert best("A server for our gaming clan") == "Gaming Community"
    assert best("my band wants a place for rehearsals and fans") == "Music Band"
    assert best("a helpdesk for customers of our product") == "Tech Support Helpdesk"
    assert best("we run a D&D campaign, dnd with friends") == "Tabletop RPG Campaign"
    assert best("private workspace for my company team") == "Small Business Team"


# ---------------------------------------------------------------- jobs and generation


@pytest.mark.parametrize(("missing", "sizes"), [(50, [5] * 10), (14, [5, 5, 4]), (5, [5]), (3, [3]), (0, []), (-2, [])])
def test_a_round_asks_for_what_is_missing_in_chunks_of_five(missing, sizes):
    assert chunk_sizes(missing) == sizes


def test_each_chunk_is_about_stable_kinds_of_servers_and_the_prompt_carries_the_request():
    request = ChunkRequest(job_id="tj_1", chunk_id="1-3", count=5, avoid_names=["Gaming Community"])

    kinds = kinds_for(request)

    assert kinds == kinds_for(request.model_copy())
    assert len(set(kinds)) == 5
    assert set(kinds) <= set(SERVER_KINDS)
    assert kinds != kinds_for(request.model_copy(update={"chunk_id": "1-4"}))
    assert '"avoid_names": ["Gaming Community"]' in prompt(request)


def test_the_models_answer_is_parsed_without_validating_each_configuration():
    bad = {"name": "Broken", "description": "x", "tags": ["x"], "config": {"name": "", "roles": "nope"}}

    batch = TemplateBatch.model_validate({"templates": [bad, starter_dict("Book Club")]})

    assert len(batch.templates) == 2
    assert isinstance(vet({**bad, "config": batch.templates[0].config}), Drop)


def test_the_local_writer_is_deterministic_and_mostly_right():
    chunks = [write_templates("tj_x", f"1-{index}", 40, list(SERVER_KINDS)) for index in range(5)]

    assert chunks[0] == write_templates("tj_x", "1-0", 40, list(SERVER_KINDS))
    dropped = [drop for chunk in chunks for drop in vet_all(chunk)[1]]
    assert 10 <= len(dropped) <= 45, "about one in eight is flawed"
    assert {drop.reason.split(":")[0] for drop in dropped} == {"invalid", "unsafe"}
