"""Backups of a server: made, stored, listed and read (archive); read from the live guild (live); made on a schedule
(schedules).
May import: the foundation (errors, settings, clock, observability) and chat, config (a backup read as one),
deploy_engine, deployments (the refusal when the bot is not in the guild, with its install link), limits (the bot's
share of the platform's rate), store.
"""
