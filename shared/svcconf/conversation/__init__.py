"""svcAiChat's conversation: the turn, its models, prompt and envelope, the live-guild turn and the input budget.
May import the foundation, api, ai (the provider), config, templates, caller_rights, deploy_engine, deployments."""
