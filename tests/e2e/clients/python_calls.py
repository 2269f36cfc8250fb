"""Three operations of a running service through the client openapi-python-client generated (package svc_client).

Run by tests/e2e/test_generated_clients.py in .venv-clients, with the generated package on PYTHONPATH:
python_calls.py BASE_URL USER_TOKEN BOT_TOKEN OAUTH_CODE REDIRECT_URI. Prints what it got back, as JSON.
"""

import json
import sys

from svc_client import AuthenticatedClient, Client
from svc_client.api.bot import manage_backup
from svc_client.api.servers import get_chat_guilds
from svc_client.api.sign_in import chat_auth
from svc_client.models import (
    BackupCreated,
    BackupListWithSchedule,
    ChatAuthRequest,
    ChatIdentity,
    CreateBackupRequest,
    CreateBackupRequestBackupDataType0,
    GuildList,
    ListBackupsRequest,
)

GUILD_ID = "1191000000000001001"


def main(base_url: str, user_token: str, bot_token: str, code: str, redirect_uri: str) -> None:
    user = AuthenticatedClient(base_url=base_url, token=user_token)
    bot = AuthenticatedClient(base_url=base_url, token=bot_token, prefix="", auth_header_name="x-bot-token")

    guilds = get_chat_guilds.sync(client=user)
    assert isinstance(guilds, GuildList), guilds

    data = CreateBackupRequestBackupDataType0.from_dict({"roles": [{"name": "Moderator"}], "channels": []})
    created = manage_backup.sync(
        client=bot, body=CreateBackupRequest(action="create", guild_id=GUILD_ID, backup_data=data, label="client")
    )
    assert isinstance(created, BackupCreated), created
    listed = manage_backup.sync(client=bot, body=ListBackupsRequest(action="list", guild_id=GUILD_ID))
    assert isinstance(listed, BackupListWithSchedule), listed

    identity = chat_auth.sync(
        client=Client(base_url=base_url), body=ChatAuthRequest(code=code, redirect_uri=redirect_uri)
    )
    assert isinstance(identity, ChatIdentity), identity

    print(
        json.dumps(
            {
                "getChatGuilds": [guild.name for guild in guilds.guilds],
                "manageBackup.create": {"action": created.action, "backup_id": created.data.backup_id},
                "manageBackup.list": [backup.backup_id for backup in listed.backups],
                "manageBackup.list.schedule": listed.schedule,
                "chatAuth": {"chatUsername": identity.chat_username, "linked": identity.linked},
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
