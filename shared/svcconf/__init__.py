"""svcconf: the Server Configuration Service's shared layer.

Kept import-free on purpose: each handler imports only the modules it needs (cold start).
"""
