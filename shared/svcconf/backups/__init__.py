"""Backups of a server: made, stored, listed and read (archive). May import the foundation, store and config."""
