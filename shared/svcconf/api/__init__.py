"""The HTTP transport: the resolver, auth, the body decoder, near misses, field types, pasted links, the examples,
the docs page and the time budget.

May import: the foundation (errors, settings, clock, observability), nothing else.
"""
