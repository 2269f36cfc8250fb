"""A user's chat-platform account: sign-in, the link to the bearer user, their servers.
May import: the foundation (errors, settings, clock, observability) and api, chat, store.
"""
