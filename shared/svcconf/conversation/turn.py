"""svcAiChat: a conversation with the AI that builds or changes a server configuration (docs/06-ai.md).

One turn is one structured call (the `ChatTurn` envelope, svcconf.conversation.envelope). With a current
configuration the model answers with edits (svcconf.config.edits), which the service applies and validates; without
one it writes a first build in the compact form (svcconf.config.compact), which the service expands. So a turn costs
output tokens in proportion to what it changes, not to the server. `max_tokens` is what the model can write in the
invocation's time left, keeping time for a repair round; a cut-off answer keeps its complete edits.

An answer that does not apply (its JSON, an edit naming what does not exist, a schema rule broken) gets one repair
round with the reasons; if that fails too the previous `currentConfig` (if it is valid itself) is returned and the
reply says so. An invalid configuration is never returned. Files reach the model as URL blocks: the service never
fetches a URL itself; a finished analysis of an attachment reaches it as the user's description of the file
(svcconf.conversation.attachments).

On a live guild (`guild`, svcconf.conversation.live_guild) the model is told what the bot and the caller may grant
there; each answer carries what a deploy would do with its configuration (`plan`, `plan_id`) and refuse
(`problems`). An answer that brings problems a deploy would refuse gets the repair round too; what it cannot repair
stays in `problems` and the reply says so. The platform's ids stay with the service: the model addresses objects by
name, and its edits keep each object's id through renames and moves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from svcconf.ai import AiFailed, AiOutputInvalid, AiRefused, AiTimeout, AiTruncated, require_provider
from svcconf.ai.client import StructuredAnswer, ask_structured, output_schema
from svcconf.ai.errors import problems_of
from svcconf.ai.pace import turn_max_tokens
from svcconf.ai.token_estimate import estimated_request_tokens, file_block_tokens
from svcconf.api import budget
from svcconf.config import ServerConfig, lint_config
from svcconf.config.apply_edits import apply_edits, apply_prefix
from svcconf.config.compact import expand
from svcconf.config.edits import ConfigChange, EditsRejected
from svcconf.conversation.attachments import described_files, sendable_files
from svcconf.conversation.envelope import ChatTurn, build_of, edits_of, salvage
from svcconf.conversation.input_budget import FixedPart, first_sent, fixed_fields, fixed_tail, turn_reservation
from svcconf.conversation.models import (
    MAX_SUGGESTED_TEMPLATES,
    Attachment,
    ChatAnswer,
    ChatMessage,
    LiveGuildChecks,
    clean_quick_replies,
)
from svcconf.conversation.prompt import (
    SYSTEM_PROMPT,
    build_messages,
    file_block,
    refused_turns,
    repair_turns,
)
from svcconf.errors import BadRequest, FieldError
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.templates import TemplateSummary, suggest_templates

# A repair round is not started with less time than this left: it would only turn a usable reply into a 504.
MIN_REPAIR_SECONDS = 4.0
# The output a repair round is given time for: the edits of an ordinary request, again.
REPAIR_TOKENS = 400
# What the model is shown of a configuration: no ids (it addresses objects by name; the service keeps the ids).
_NO_IDS: dict[str, Any] = {
    "roles": {"__all__": {"id"}},
    "categories": {"__all__": {"id": True, "channels": {"__all__": {"id"}}}},
    "channels": {"__all__": {"id"}},
}


def take_turn(
    *,
    messages: list[ChatMessage],
    current_config: dict[str, Any] | None = None,
    style: dict[str, Any] | None = None,
    questionnaire_data: dict[str, Any] | None = None,
    attachments: list[Attachment] | None = None,
    file_urls: list[str] | None = None,
    guild: LiveGuildChecks | None = None,
    config_field: str = "currentConfig",
    reserve: Callable[[int], None] | None = None,
) -> ChatAnswer:
    """One turn of the conversation: the model's reply and a configuration that is valid, or none; on a live
    `guild`, with what a deploy of it would do and refuse there. `config_field` names the configuration's field in a
    400 of the input budget (`guild_id` when it is the live guild's); `reserve` takes the day's tokens the turn may
    spend before the provider is called (svcconf.limits.ai_turn)."""
    if not any(message.role == "user" for message in messages) and not questionnaire_data:
        raise BadRequest.for_field("messages", "needs at least one user message, or questionnaire_data")
    require_provider()
    previous = _valid_config(current_config)
    files, unsent = sendable_files(attachments or [], file_urls or [])
    described = described_files(attachments or [])
    descriptions = [file.block() for file in described]
    max_tokens = turn_max_tokens(reserve_tokens=REPAIR_TOKENS)
    # The model edits the configuration the service will edit: the valid one, or none (a first build).
    known = previous.model_dump(mode="json", exclude_defaults=True, exclude=_NO_IDS) if previous else None
    grants = guild.grants() if guild is not None else None
    budget_tokens = get_settings().ai_max_input_tokens
    # The fixed part (everything but the older messages) alone must fit the budget; the older ones go as they fit.
    tail_start = fixed_tail(messages)
    older, tail = messages[:tail_start], messages[tail_start:]
    fixed = build_messages(
        tail, known, style, questionnaire_data, files, max_tokens, grants=grants, descriptions=descriptions
    )
    fixed_tokens = estimated_request_tokens(SYSTEM_PROMPT, fixed, output_schema(ChatTurn))
    file_tokens = {
        # the files sent, at their allowances (a file neither an image nor a PDF is not sent: it costs nothing)
        "attachments": sum(file_block_tokens(file_block(file)) for file in attachments or [] if file in files),
        "file_urls": sum(file_block_tokens(file_block(Attachment(url=url))) for url in file_urls or []),
        **{file.field: file.tokens() for file in described},
    }
    FixedPart(
        fixed_tokens,
        fixed_fields(
            tail=tail,
            tail_start=tail_start,
            config_field=config_field,
            config=known,
            style=style,
            questionnaire_data=questionnaire_data,
            file_tokens=file_tokens,
        ),
    ).check(budget_tokens)
    sent = [*older[first_sent(older, budget_tokens - fixed_tokens, keep_newest=False) :], *tail]
    prompt = build_messages(
        sent, known, style, questionnaire_data, files, max_tokens, grants=grants, descriptions=descriptions
    )
    if reserve is not None:  # the day's tokens, before the call: this call and one repair round at most
        input_tokens = estimated_request_tokens(SYSTEM_PROMPT, prompt, output_schema(ChatTurn))
        repair_max_tokens = min(get_settings().ai_max_tokens, max_tokens + REPAIR_TOKENS)
        reserve(turn_reservation(input_tokens, max_tokens, repair_max_tokens))
    wanted = "\n".join(message.content for message in messages if message.role == "user")
    suggestions = suggest_templates(wanted, questionnaire_data, limit=MAX_SUGGESTED_TEMPLATES)
    answer = _answered(prompt, previous, suggestions, max_tokens, guild)
    answer.history_trimmed = len(messages) - len(sent)
    if answer.history_trimmed:
        metrics.add_metric(name="AiChatHistoryTrimmed", unit="Count", value=1)
    answer = answer if guild is None else _reviewed(answer, guild)
    answer.warnings = [*unsent, *answer.warnings]
    answer.attachments_used = [file.label for file in described]
    return answer


def _answered(
    prompt: list[dict[str, Any]],
    previous: ServerConfig | None,
    suggestions: list[TemplateSummary],
    max_tokens: int,
    guild: LiveGuildChecks | None,
) -> ChatAnswer:
    """The model's answer to the prompt, applied; a refusal, a cut or an invalid answer as the module says, and on
    a live guild the repair round of what a deploy would refuse."""
    try:
        answer = ask_structured(ChatTurn, system=SYSTEM_PROMPT, messages=prompt, max_tokens=max_tokens, purpose="chat")
        applied = _applied(answer, previous, suggestions)
    except AiRefused:
        metrics.add_metric(name="AiChatRefused", unit="Count", value=1)
        return _answer(REFUSED_REPLY, previous, [], suggestions, complete=False)
    except AiTruncated as cut:
        partial = _partial(cut, previous, suggestions)
        if partial is not None:
            return partial
        return _repaired(prompt, cut, previous, suggestions)
    except AiOutputInvalid as first:
        return _repaired(prompt, first, previous, suggestions)
    if guild is None or applied.config is None:
        return applied
    return _deployable(applied, answer.text, prompt, previous, suggestions, guild)


REFUSED_REPLY = "I can't help with that request. Your configuration is unchanged; try asking differently."
KEPT_REPLY = "(The changes I proposed did not pass the checks, so your previous configuration is kept.)"
NOT_BUILT_REPLY = "(The configuration I proposed did not pass the checks, so none is returned yet.)"
UNUSABLE_REPLY = "I could not produce a valid configuration this time; your previous configuration is kept."
PARTIAL_REPLY = "(I ran out of time for this turn after {done} change(s); the rest is not made yet. Say go on.)"
REFUSED_REST_REPLY = "(I made {done} change(s) before one that cannot be made: {why}.)"
NOTHING_MADE_REPLY = "None of the changes I started could be made: {why}. Your configuration is unchanged."
GO_ON = "Go on"
DEPLOY_REFUSES_REPLY = "(A deploy to this server would refuse {count} in this configuration: {what}.)"


def _applied(
    answer: StructuredAnswer[ChatTurn], previous: ServerConfig | None, suggestions: list[TemplateSummary]
) -> ChatAnswer:
    """The answer applied: its edits to `previous`, or its build expanded (`AiOutputInvalid` when it does not)."""
    turn = answer.output
    config: ServerConfig | None
    try:
        if turn.build is not None and (previous is None or not turn.edits):
            config = expand(build_of(turn) or {})
            changes = _built(config)
        elif turn.edits and previous is not None:
            result = apply_edits(previous, edits_of(turn.edits))
            config, changes = result.config, result.changes
        elif turn.edits:
            raise EditsRejected([FieldError(field="edits", message="there is no configuration yet: write a build")])
        else:
            config, changes = previous, []
    except EditsRejected as exc:
        raise AiOutputInvalid(problems=exc.problems, text=answer.text, usage=answer.usage) from None
    except ValidationError as exc:
        raise AiOutputInvalid(problems=_in_build(exc), text=answer.text, usage=answer.usage) from None
    quick = [GO_ON, *turn.quick_replies] if turn.rest else turn.quick_replies
    complete = turn.is_complete and config is not None and not turn.rest
    return _answer(turn.reply, config, quick, suggestions, complete=complete, changes=changes)


def _built(config: ServerConfig) -> list[ConfigChange]:
    data = config.model_dump(mode="json")
    added = [
        ConfigChange(op="add", path=f"{key}[{i}]", new=item)
        for key in ("roles", "categories", "channels", "automod")
        for i, item in enumerate(data[key] or [])
    ]
    return added + [
        ConfigChange(op="add", path=key, new=data[key]) for key in ("onboarding", "welcome_screen") if data[key]
    ]


def _in_build(exc: ValidationError) -> list[Any]:
    return [problem.model_copy(update={"field": f"build.{problem.field}"}) for problem in problems_of(exc)]


def _partial(cut: AiTruncated, previous: ServerConfig | None, suggestions: list[TemplateSummary]) -> ChatAnswer | None:
    """A cut-off answer's complete edits applied (the longest prefix that applies), or None when there are none."""
    reply, edits = salvage(cut.text)
    if previous is None or not edits:
        return None
    result, done, refused = apply_prefix(previous, edits_of(edits))
    if done == 0 and refused is not None:
        # Its first edit cannot be made (at the platform's cap of 500 channels, say): a repair round that writes
        # the same request again would only spend the turn's time; the user is told why at once.
        return _answer(NOTHING_MADE_REPLY.format(why=refused), previous, [], suggestions, complete=False, changes=[])
    if done == 0:
        return None
    metrics.add_metric(name="AiChatPartialTurns", unit="Count", value=1)
    note = PARTIAL_REPLY.format(done=done) if refused is None else REFUSED_REST_REPLY.format(done=done, why=refused)
    text = f"{reply} {note}" if reply else note
    quick = [GO_ON] if refused is None else []
    return _answer(text, result.config, quick, suggestions, complete=False, changes=result.changes)


def _repaired(
    prompt: list[dict[str, Any]],
    first: AiOutputInvalid | AiTruncated,
    previous: ServerConfig | None,
    suggestions: list[TemplateSummary],
) -> ChatAnswer:
    """The repair round: the answer's problems sent back once. Its failure keeps `previous` (the reply says so)."""
    metrics.add_metric(name="AiChatRepairs", unit="Count", value=1)
    salvaged = salvage(first.text)[0]
    if not _time_for_repair():
        return _kept(first, salvaged, previous, suggestions)
    repair = [*prompt, *repair_turns(first)]
    try:
        answer = ask_structured(
            ChatTurn,
            system=SYSTEM_PROMPT,
            messages=repair,
            max_tokens=turn_max_tokens(reserve_tokens=0),
            purpose="chat-repair",
        )
        return _applied(answer, previous, suggestions)
    except AiTruncated as second:
        partial = _partial(second, previous, suggestions)
        return partial or _kept(first, salvaged or salvage(second.text)[0], previous, suggestions)
    except (AiOutputInvalid, AiRefused) as second:
        logger.warning("the repair round failed too", extra={"error": type(second).__name__})
        return _kept(first, salvaged or salvage(second.text)[0], previous, suggestions)
    except (AiTimeout, AiFailed) as second:
        logger.warning("the repair round could not be made", extra={"error": type(second).__name__})
        return _kept(first, salvaged, previous, suggestions)


def _time_for_repair() -> bool:
    left = budget.seconds_left()
    if left is not None and left - budget.ANSWER_MARGIN_SECONDS < MIN_REPAIR_SECONDS:
        logger.warning("no time left for a repair round")
        return False
    return True


def _deployable(
    applied: ChatAnswer,
    text: str,
    prompt: list[dict[str, Any]],
    previous: ServerConfig | None,
    suggestions: list[TemplateSummary],
    guild: LiveGuildChecks,
) -> ChatAnswer:
    """An answer that brings problems a deploy to the guild would refuse gets the repair round; when that fails
    or does not help, the answer stands (valid, its problems listed by `_reviewed`)."""
    before = guild.review(previous).problems if previous is not None else []
    brought = _brought(before, guild.review(applied.config).problems)
    if not brought or not _time_for_repair():
        return applied
    metrics.add_metric(name="AiChatRepairs", unit="Count", value=1)
    try:
        answer = ask_structured(
            ChatTurn,
            system=SYSTEM_PROMPT,
            messages=[*prompt, *refused_turns(text, brought)],
            max_tokens=turn_max_tokens(reserve_tokens=0),
            purpose="chat-repair",
        )
        return _applied(answer, previous, suggestions)
    except (AiOutputInvalid, AiTruncated, AiRefused, AiTimeout, AiFailed) as failed:
        logger.warning("the repair round of a deploy's problems failed", extra={"error": type(failed).__name__})
        return applied


def _brought(before: list[FieldError], after: list[FieldError]) -> list[FieldError]:
    """The problems `after` has that `before` did not, by message (an added role shifts the paths of the others)."""
    known = Counter(problem.message for problem in before)
    brought = []
    for problem in after:
        if known[problem.message]:
            known[problem.message] -= 1
        else:
            brought.append(problem)
    return brought


def _reviewed(answer: ChatAnswer, guild: LiveGuildChecks) -> ChatAnswer:
    """The answer with what a deploy of its configuration would do on the guild, warn of, and refuse (said in the
    reply)."""
    review = guild.review(answer.config)
    update: dict[str, Any] = {"plan": review.plan, "plan_id": review.plan_id, "problems": review.problems}
    update["warnings"] = [*answer.warnings, *guild.warnings(answer.config)]
    if review.problems:
        what = "; ".join(f"{problem.field}: {problem.message}" for problem in review.problems[:3])
        more = f"; and {len(review.problems) - 3} more" if len(review.problems) > 3 else ""
        count = f"{len(review.problems)} thing{'' if len(review.problems) == 1 else 's'}"
        note = DEPLOY_REFUSES_REPLY.format(count=count, what=what + more)
        update["reply"] = f"{answer.reply} {note}"
    return answer.model_copy(update=update)


def _kept(
    first: AiOutputInvalid | AiTruncated,
    salvaged: str | None,
    previous: ServerConfig | None,
    suggestions: list[TemplateSummary],
) -> ChatAnswer:
    metrics.add_metric(name="AiChatConfigKept", unit="Count", value=1)
    if salvaged is None:
        if previous is None:
            raise first  # nothing usable at all: 502
        return _answer(UNUSABLE_REPLY, previous, [], suggestions, complete=False)
    note = KEPT_REPLY if previous is not None else NOT_BUILT_REPLY
    return _answer(f"{salvaged} {note}", previous, [], suggestions, complete=False)


def _valid_config(config: dict[str, Any] | None) -> ServerConfig | None:
    if not config:
        return None
    try:
        return ServerConfig.model_validate(config)
    except ValidationError as exc:
        logger.info("currentConfig is not valid; it is never returned", extra={"problems": len(exc.errors())})
        return None


def _answer(
    reply: str,
    config: ServerConfig | None,
    quick_replies: list[str],
    suggestions: list[TemplateSummary],
    *,
    complete: bool,
    changes: list[ConfigChange] | None = None,
) -> ChatAnswer:
    return ChatAnswer(
        reply=reply,
        config=config,
        quick_replies=clean_quick_replies(quick_replies),
        suggested_templates=suggestions,
        is_complete=complete,
        changes=changes or [],
        warnings=lint_config(config) if config is not None else [],
    )
