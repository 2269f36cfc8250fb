"""The template library: the curated starter set, loaded once into the table, and what is read from it.

The starter set (`starter.json`, written for this project) is loaded the first time anything reads the library
in a stack: each template with a conditional put (a name already there stays as it is), then a marker naming the
set's version, so a changed starter set loads its new templates once too. Readers keep the summaries for a minute
per Lambda instance: suggestions are asked on every chat turn, and a newly seeded template may wait that long.
"""

from __future__ import annotations

import hashlib
import json
import time
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from svcconf.clock import utc_now
from svcconf.observability import logger
from svcconf.settings import get_settings
from svcconf.store.templates import TemplateRepository
from svcconf.templates.candidates import TemplateDraft
from svcconf.templates.ranking import rank

STARTER_FILE = Path(__file__).with_name("starter.json")
SUMMARY_CACHE_SECONDS = 60.0


class TemplateSummary(BaseModel):
    """A library template as svcAiChat suggests it."""

    id: str = Field(description="The template's normalised name.", examples=["gaming-community"])
    name: str
    description: str
    tags: list[str]


def repository() -> TemplateRepository:
    return TemplateRepository(get_settings().templates_table)


@cache
def _starter_file() -> bytes:
    return STARTER_FILE.read_bytes()


def starter_version() -> str:
    return hashlib.sha256(_starter_file()).hexdigest()[:12]


@cache
def starter_set() -> tuple[TemplateDraft, ...]:
    return tuple(TemplateDraft.model_validate(entry) for entry in json.loads(_starter_file()))


def ensure_starter_set(templates: TemplateRepository | None = None) -> int:
    """Loads the starter set into the table unless this version of it is there; how many templates were added."""
    templates = templates or repository()
    version = starter_version()
    if templates.has_starter_set(version):
        return 0
    now = utc_now()
    added = sum(templates.add_starter(draft.stored(source="starter", created_at=now)) for draft in starter_set())
    templates.mark_starter_set(version, len(starter_set()), now)
    logger.info("starter set loaded", extra={"version": version, "added": added})
    return added


_cached: tuple[float, list[TemplateSummary]] | None = None


def library_summaries(*, fresh: bool = False) -> list[TemplateSummary]:
    """Every template's summary, the starter set loaded first if it is not yet; cached for a minute."""
    global _cached
    if not fresh and _cached is not None and time.monotonic() - _cached[0] < SUMMARY_CACHE_SECONDS:
        return _cached[1]
    templates = repository()
    ensure_starter_set(templates)
    summaries = [TemplateSummary.model_validate(item) for item in templates.summaries()]
    _cached = (time.monotonic(), summaries)
    return summaries


def clear_cache() -> None:
    global _cached
    _cached = None


def suggest_templates(
    messages_text: str, questionnaire_data: dict[str, Any] | None, limit: int = 3
) -> list[TemplateSummary]:
    """Up to `limit` library templates that fit what the conversation and the questionnaire ask for (see ranking).

    Suggestions are a help, not the answer: when the library cannot be read, the failure is logged and none are
    suggested.
    """
    try:
        summaries = library_summaries()
    except Exception:
        logger.exception("the template library could not be read: no suggestions")
        return []
    return rank(summaries, messages_text, questionnaire_data, limit)
