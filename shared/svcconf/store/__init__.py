"""DynamoDB repositories, one per table: the only code that touches boto3 tables."""
