"""Which library templates fit what a conversation and a questionnaire ask for: deterministic and explainable.

The words of the conversation and of the questionnaire's answers (string values, list items, and the names of
options answered `true`) are reduced to stems: lowercased, split on anything not a letter or digit, common words
dropped, and simple English endings removed (gamers, games, gaming -> gam). A template scores, for each stem
the request contains, 3 if one of its tags has that stem, else 2 if its name has it, else 1 if its description
has it. Templates scoring 0 are never suggested; the rest come highest score first, then by more tags matched,
then by name (case ignored), so equal requests always get the same suggestions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

TAG_WEIGHT, NAME_WEIGHT, DESCRIPTION_WEIGHT = 3, 2, 1
_WORD = re.compile(r"[^\W_]+")
_SUFFIXES = ("ing", "ers", "ies", "es", "er", "s")
MIN_STEM = 3
# Words that say nothing about the kind of server (every template is a server with channels and members).
STOP_WORDS = frozenset(
    """a an and are as at be but by can do for from have i in into is it its me my need of on or our so some that
    the their them then there these they this to us want we what when where which who will with would you your
    like just also please make create build set up setup server servers channel channels role roles category
    categories chat community group people members member new get one more than about all any help
    yes no true false other""".split()  # noqa: SIM905 - a word list reads best as words
)


class Summary(Protocol):
    name: str
    description: str
    tags: list[str]


def stem(word: str) -> str:
    word = word.casefold()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > MIN_STEM else word


def stems(text: str) -> set[str]:
    return {stem(word) for word in _WORD.findall(text.casefold()) if word not in STOP_WORDS and len(word) > 1}


def questionnaire_words(data: Any) -> Iterable[str]:
    """The answers of a questionnaire: strings and numbers as they are, an option answered `true` by its name."""
    if isinstance(data, dict):
        for key, value in data.items():
            if value is True:
                yield str(key).replace("_", " ")
            elif value is not False:
                yield from questionnaire_words(value)
    elif isinstance(data, list):
        for item in data:
            yield from questionnaire_words(item)
    elif isinstance(data, str):
        yield data


@dataclass(frozen=True)
class Match:
    score: int
    tags: int
    name_key: str


def score(summary: Summary, wanted: set[str]) -> Match:
    tag_stems = set().union(*(stems(tag.replace("-", " ")) for tag in summary.tags)) if summary.tags else set()
    name_stems = stems(summary.name)
    description_stems = stems(summary.description)
    total = tags = 0
    for word in wanted:
        if word in tag_stems:
            total += TAG_WEIGHT
            tags += 1
        elif word in name_stems:
            total += NAME_WEIGHT
        elif word in description_stems:
            total += DESCRIPTION_WEIGHT
    return Match(total, tags, summary.name.casefold())


def rank[S: Summary](summaries: Sequence[S], messages_text: str, questionnaire_data: Any, limit: int = 3) -> list[S]:
    wanted = stems(" ".join([messages_text or "", *questionnaire_words(questionnaire_data or {})]))
    if not wanted or limit <= 0:
        return []
    scored = [(score(summary, wanted), summary) for summary in summaries]
    scored = [(match, summary) for match, summary in scored if match.score > 0]
    scored.sort(key=lambda pair: (-pair[0].score, -pair[0].tags, pair[0].name_key))
    return [summary for _, summary in scored[:limit]]
