"""DynamoDB repositories, one per table: the only code that touches boto3 tables.
May import: the foundation (errors, settings, clock, observability) and deploy_engine (the journal's kinds, the
quota's window).
"""
