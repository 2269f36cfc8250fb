"""Backups of a server: made, stored, listed and read (archive).
May import: the foundation (errors, settings, clock, observability) and config (a backup read as one), store.
"""
