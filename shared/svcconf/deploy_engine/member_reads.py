"""What each member holds now, as a restore walks the backup's members in user-id order (`member_grants`).

The guild's member list is read page by page (1,000 a page, `ChatClient.member_pages`) along with the walk: the
first page starts just below the first member asked for (a run resumed at its cursor reads from there), and the next
page is asked for only when the walk passes the last one's highest id, so a plan or a run reads each page at most
once and none past its last member. A member the list does not hold has left the server. Without the platform's
privileged member access (403 50001, the GUILD_MEMBERS intent) each member is read alone with
`GET /guilds/{id}/members/{user}`, and `one_by_one` says so (the dry run warns, the worker logs it).
"""

from __future__ import annotations

from collections.abc import Iterator

from svcconf.chat import ChatClient, MissingAccess, UnknownMember
from svcconf.chat.models import GuildMember
from svcconf.config.lint import LintWarning
from svcconf.observability import logger, metrics

ONE_BY_ONE_RULE = "members-read-one-by-one"


class HeldRoles:
    """The roles each member holds, asked for in ascending user-id order (a repeated id answers the same set)."""

    def __init__(self, client: ChatClient, guild_id: str):
        self._client = client
        self._guild_id = guild_id
        self._pages: Iterator[list[GuildMember]] | None = None
        self._page: dict[int, set[str]] = {}
        self._top = -1  # the highest user id the pages read so far reach
        self._listed_all = False
        self.one_by_one = False
        self.reads = 0  # members read alone

    def of(self, user_id: str) -> set[str] | None:
        """The member's roles now (the same set on a second ask, so a caller may add what it granted); None when
        they are not in the server."""
        if not user_id.isdigit():
            return None  # no snowflake: nobody the platform knows
        if not self.one_by_one:
            try:
                return self._listed(int(user_id))
            except MissingAccess:
                self.one_by_one = True
                logger.warning(
                    "the member list is refused: members are read one by one", extra={"guild_id": self._guild_id}
                )
                metrics.add_metric(name="MemberListRefused", unit="Count", value=1)
        return self._alone(user_id)

    def _listed(self, wanted: int) -> set[str] | None:
        while wanted > self._top and not self._listed_all:
            if self._pages is None:
                self._pages = self._client.member_pages(self._guild_id, after=str(max(wanted - 1, 0)))
            page = next(self._pages, None)
            if page is None:
                self._listed_all = True
                break
            self._page = {int(member.user.id): set(member.roles) for member in page if member.user is not None}
            self._top = max(self._page, default=self._top)
        return self._page.get(wanted)

    def _alone(self, user_id: str) -> set[str] | None:
        self.reads += 1
        try:
            return set(self._client.get_guild_member(self._guild_id, user_id).roles)
        except UnknownMember:
            return None

    def warnings(self) -> list[LintWarning]:
        """The dry run's word on how members were read: nothing when the list answered."""
        if not self.one_by_one:
            return []
        message = (
            "the bot lacks the platform's privileged member access (the GUILD_MEMBERS intent, 403 50001): the member "
            f"list is refused, so {self.reads} member(s) were read one request each, and the restore will read them "
            "so too; switch the intent on for the bot to read them 1,000 a page"
        )
        return [LintWarning(field="members", rule=ONE_BY_ONE_RULE, message=message)]
