"""The template library: a curated starter set and AI-generated templates, suggested by what a user asks for.

- `suggest_templates(messages_text, questionnaire_data, limit=3)`: svcAiChat's `suggested_templates`.
- `start_seeding` / `run_message`: seedTemplates and its worker (`seeding.py`).
Generation (`generation.py`) imports the AI SDK and is imported only by the worker, lazily.

May import: the foundation (errors, settings, clock, observability) and ai, api, config, store.
"""

from __future__ import annotations

from svcconf.templates.library import TemplateSummary, ensure_starter_set, library_summaries, suggest_templates

__all__ = ["TemplateSummary", "ensure_starter_set", "library_summaries", "suggest_templates"]
