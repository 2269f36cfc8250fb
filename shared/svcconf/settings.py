"""Configuration: environment variables (and, in AWS, Secrets Manager) read once into one model.

The only module that reads `os.environ`. Secrets may be given in clear for local use
(`SVC_BOT_TOKEN`) or by Secrets Manager id in AWS (`SVC_BOT_TOKEN_SECRET_ID`); the id wins.
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING, Annotated, cast

from pydantic import BaseModel, BeforeValidator, Field, PrivateAttr, SecretStr

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.parameters import SecretsProvider


def _csv(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


CsvList = Annotated[list[str], BeforeValidator(_csv)]

SECRET_MAX_AGE_SECONDS = 300


class Settings(BaseModel):
    # DynamoDB tables and queues (names come from template.yaml through the function's environment)
    codes_table: str = Field("svc-deployment-codes", alias="CODES_TABLE_NAME")
    backups_table: str = Field("svc-backups", alias="BACKUPS_TABLE_NAME")
    chat_links_table: str = Field("svc-chat-links", alias="CHAT_LINKS_TABLE_NAME")
    chat_cache_table: str = Field("svc-chat-cache", alias="CHAT_CACHE_TABLE_NAME")
    sign_in_states_table: str = Field("svc-sign-in-states", alias="SIGN_IN_STATES_TABLE_NAME")
    deployments_table: str = Field("svc-deployments", alias="DEPLOYMENTS_TABLE_NAME")
    idempotency_table: str = Field("svc-idempotency", alias="IDEMPOTENCY_TABLE_NAME")
    deploy_queue_url: str | None = Field(None, alias="DEPLOY_QUEUE_URL")
    # Documents too big for their item (a deployment's configuration, a code's, a snapshot) are stored here.
    documents_bucket: str | None = Field(None, alias="DOCUMENTS_BUCKET_NAME")
    # The deploy worker hands the rest to the next invocation when its own has less than this left.
    deploy_margin_seconds: float = Field(30.0, ge=0, alias="SVC_DEPLOY_MARGIN_SECONDS")
    deploy_max_receives: int = Field(5, ge=1, alias="DEPLOY_MAX_RECEIVES")  # the deploy queue's maxReceiveCount
    # A deployment waiting out the platform's creation quota (hours) resumes by an EventBridge Scheduler one-time
    # schedule that sends its job to the deploy queue, assuming this role.
    deploy_queue_arn: str | None = Field(None, alias="DEPLOY_QUEUE_ARN")
    deploy_scheduler_role_arn: str | None = Field(None, alias="DEPLOY_SCHEDULER_ROLE_ARN")
    deploy_schedule_group: str = Field("default", alias="DEPLOY_SCHEDULE_GROUP")
    # Scheduled backups (manageBackup `schedule`): one recurring EventBridge Scheduler schedule per guild sends
    # the guild's job to the backup queue, assuming this role; the backup worker makes the backup.
    backup_queue_arn: str | None = Field(None, alias="BACKUP_QUEUE_ARN")
    backup_scheduler_role_arn: str | None = Field(None, alias="BACKUP_SCHEDULER_ROLE_ARN")
    backup_schedule_group: str = Field("default", alias="BACKUP_SCHEDULE_GROUP")

    # The template library and its seeding jobs
    templates_table: str = Field("svc-templates", alias="TEMPLATES_TABLE_NAME")
    template_queue_url: str | None = Field(None, alias="TEMPLATE_QUEUE_URL")
    template_max_receives: int = Field(3, ge=1, alias="TEMPLATE_MAX_RECEIVES")  # the template queue's maxReceiveCount

    # Bearer tokens (JWT)
    jwt_secret: SecretStr | None = Field(None, alias="SVC_JWT_SECRET")
    jwt_secret_id: str | None = Field(None, alias="SVC_JWT_SECRET_ID")
    jwt_jwks_url: str | None = Field(None, alias="SVC_JWT_JWKS_URL")
    jwt_issuer: str | None = Field(None, alias="SVC_JWT_ISSUER")
    jwt_audience: str | None = Field(None, alias="SVC_JWT_AUDIENCE")
    # Clock skew allowed on exp and nbf (and a future iat) between the token's issuer and Lambda.
    jwt_leeway_seconds: int = Field(30, ge=0, le=300, alias="SVC_JWT_LEEWAY_SECONDS")

    # The chat-platform bot's token: authenticates the bot to us and us to the platform
    bot_token: SecretStr | None = Field(None, alias="SVC_BOT_TOKEN")
    bot_token_secret_id: str | None = Field(None, alias="SVC_BOT_TOKEN_SECRET_ID")
    # v4: a key of its own for the bot's calls to this service (x-bot-token), so the platform's bot token is used
    # only towards the platform and the two rotate apart. Unset: the bot token (template parameter BotApiKeySecretArn).
    bot_api_key: SecretStr | None = Field(None, alias="SVC_BOT_API_KEY")
    bot_api_key_secret_arn: str | None = Field(None, alias="SVC_BOT_API_KEY_SECRET_ARN")

    # Deployment codes and backups
    code_ttl_hours: int = Field(168, ge=1, le=24 * 365, alias="SVC_CODE_TTL_HOURS")
    backups_per_guild: int = Field(50, ge=1, le=1000, alias="SVC_BACKUPS_PER_GUILD")

    # The chat platform
    chat_api_base_url: str = Field("https://discord.com/api/v10", alias="CHAT_API_BASE_URL")
    chat_oauth_token_url: str | None = Field(None, alias="CHAT_OAUTH_TOKEN_URL")
    chat_cdn_base_url: str = Field("https://cdn.discordapp.com", alias="CHAT_CDN_BASE_URL")
    chat_authorize_url: str = Field("https://discord.com/oauth2/authorize", alias="CHAT_AUTHORIZE_URL")
    chat_client_id: str | None = Field(None, alias="CHAT_CLIENT_ID")
    chat_client_secret: SecretStr | None = Field(None, alias="CHAT_CLIENT_SECRET")
    chat_client_secret_id: str | None = Field(None, alias="CHAT_CLIENT_SECRET_ID")
    chat_redirect_uris: CsvList = Field(default_factory=list, alias="CHAT_REDIRECT_URIS")
    chat_invite_hosts: CsvList = Field(
        default_factory=lambda: ["discord.gg", "discord.com", "discordapp.com"], alias="CHAT_INVITE_HOSTS"
    )
    # Where the platform's server-template links live: a host and the path before the code.
    chat_template_links: CsvList = Field(
        default_factory=lambda: ["discord.new", "discord.com/template", "discordapp.com/template"],
        alias="CHAT_TEMPLATE_LINKS",
    )
    # One request's timeout, and one call's whole time (requests, rate-limit waits, retries). Both are clipped to
    # the invocation's time left (svcconf.api.budget); the defaults alone already end a call inside a 15 s function.
    chat_timeout_seconds: float = Field(5.0, gt=0, alias="CHAT_TIMEOUT_SECONDS")
    chat_max_wait_seconds: float = Field(10.0, ge=0, alias="CHAT_MAX_WAIT_SECONDS")
    kms_key_id: str | None = Field(None, alias="CHAT_TOKENS_KMS_KEY_ID")
    # getChatGuilds answers bot presence from the bot's guild set shared in the chat-cache table, fetched again
    # when older than this; 0 pages through the bot's guilds on every call (what it did before the cache).
    chat_bot_guilds_cache_seconds: float = Field(60.0, ge=0, alias="CHAT_BOT_GUILDS_CACHE_SECONDS")

    # The AI provider (Messages API): the key in clear locally, by Secrets Manager id in AWS
    anthropic_api_key: SecretStr | None = Field(None, alias="ANTHROPIC_API_KEY")
    anthropic_api_key_secret_id: str | None = Field(None, alias="ANTHROPIC_API_KEY_SECRET_ID")
    anthropic_base_url: str | None = Field(None, alias="ANTHROPIC_BASE_URL")
    ai_model: str = Field("claude-sonnet-5-5", min_length=1, alias="SVC_AI_MODEL")
    template_model: str = Field("claude-haiku-5-5", min_length=1, alias="SVC_TEMPLATE_MODEL")
    # One provider call's own cap; the invocation's time left (svcconf.api.budget) clips it further.
    ai_timeout_seconds: float = Field(25.0, gt=0, alias="SVC_AI_TIMEOUT_SECONDS")
    ai_max_tokens: int = Field(8192, ge=256, le=21333, alias="SVC_AI_MAX_TOKENS")
    # The model's pace (a Sonnet-class model's): max_tokens is what it writes in the time a turn has left.
    ai_first_token_seconds: float = Field(1.8, ge=0, alias="SVC_AI_FIRST_TOKEN_SECONDS")
    ai_output_tokens_per_second: float = Field(63.0, gt=0, alias="SVC_AI_OUTPUT_TOKENS_PER_SECOND")

    # Limits per user (`sub`), counted in the usage table across every instance (docs/07-operations.md, Limits)
    usage_table: str = Field("svc-usage", alias="USAGE_TABLE_NAME")
    ai_turns_per_minute: int = Field(10, ge=1, alias="SVC_AI_TURNS_PER_MINUTE")
    ai_tokens_per_day: int = Field(1_000_000, ge=1, alias="SVC_AI_TOKENS_PER_DAY")
    platform_reads_per_minute: int = Field(30, ge=1, alias="SVC_PLATFORM_READS_PER_MINUTE")
    # What one turn may send the model (estimated before the call): the system prompt, the configuration, and
    # the newest messages that fit.
    ai_max_input_tokens: int = Field(60_000, ge=4_000, alias="SVC_AI_MAX_INPUT_TOKENS")
    # Requests a second that users' requests may make the bot send, all instances together: half the platform's
    # global 50, so the deploy workers keep their pace. 0: no share is kept (one instance, tests of the client).
    chat_user_requests_per_second: int = Field(25, ge=0, alias="CHAT_USER_REQUESTS_PER_SECOND")
    # What the bot does on its own (a scheduled backup) runs inside that share, each guild's taking at most this
    # many requests a second of it, so no schedule starves users' requests or a deploy. 0: no per-guild share.
    chat_bot_own_guild_requests_per_second: int = Field(5, ge=0, alias="CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND")

    # CORS for the web app
    cors_allow_origin: str = Field("*", alias="SVC_CORS_ALLOW_ORIGIN")

    model_config = {"populate_by_name": True, "extra": "ignore", "frozen": True}
    _secrets: SecretsProvider | None = PrivateAttr(None)  # made at the first secret read, kept with the settings

    def _resolve_secret(self, clear: SecretStr | None, secret_id: str | None) -> str | None:
        if not secret_id:
            return clear.get_secret_value() if clear else None
        if self._secrets is None:
            # Imported here: Parameters costs ~150 ms of init and only AWS deployments need it. The client is on
            # boto3's default session, whose service models load once a process (Powertools' default provider
            # opens a session of its own, and loads Secrets Manager's model again).
            import boto3
            from aws_lambda_powertools.utilities.parameters import SecretsProvider

            self._secrets = SecretsProvider(boto3_client=boto3.client("secretsmanager"))
        # No transform: a SecretString comes back as the string (what `get_secret` is typed to return).
        return cast("str | None", self._secrets.get(secret_id, max_age=SECRET_MAX_AGE_SECONDS))

    def resolved_bot_token(self) -> str | None:
        return self._resolve_secret(self.bot_token, self.bot_token_secret_id)

    def resolved_bot_api_key(self) -> str | None:
        """What `x-bot-token` must equal: the bot's own API key when one is set, else the bot token."""
        return self._resolve_secret(self.bot_api_key, self.bot_api_key_secret_arn) or self.resolved_bot_token()

    def resolved_jwt_secret(self) -> str | None:
        return self._resolve_secret(self.jwt_secret, self.jwt_secret_id)

    def resolved_chat_client_secret(self) -> str | None:
        return self._resolve_secret(self.chat_client_secret, self.chat_client_secret_id)

    def resolved_anthropic_api_key(self) -> str | None:
        return self._resolve_secret(self.anthropic_api_key, self.anthropic_api_key_secret_id)


@cache
def get_settings() -> Settings:
    return Settings.model_validate(dict(os.environ))
