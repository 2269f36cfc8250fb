"""The deploy engine: the live guild, the plan (pure), preflight, apply, the journal, rollback, export.
May import: the foundation (errors, settings, clock, observability) and chat, config.
"""
