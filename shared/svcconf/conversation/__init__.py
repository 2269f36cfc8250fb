"""svcAiChat's conversation: the turn, its models, prompt and envelope, the live-guild turn and the input budget.
May import: the foundation (errors, settings, clock, observability) and ai, api, caller_rights, config,
deploy_engine, deployments, templates.
"""
