"""seedTemplates and its worker: an administrator asks for `count` new templates; they arrive in the library.

The request takes the seeding lock with the new job record (one conditional transaction: a second request while
a job runs is told which job that is) and queues the job's first round. The worker handles two messages:

- a round: the templates the job still lacks, split into chunks of `CHUNK_SIZE`; one message per chunk. Only one
  delivery moves the job to the next round (a conditional update); every delivery (re)sends the round's chunk
  messages, which is harmless because chunks are idempotent.
- a chunk: the model writes `count` templates (kept in the chunk's record before anything is stored, so a
  re-delivered chunk stores the same ones instead of asking again); each is vetted by the schema and the lint, stored
  unless its name is taken, and counted into the job in the same transaction, which refuses once the job has
  all it asked for. The chunk is then marked done, adding its drops to the job once.

After each chunk the job advances: all stored, it succeeds and frees the lock; its round over and templates still
missing (some were dropped), the next round asks for exactly those, up to `MAX_ROUNDS`; after that it ends
`partial` (or `failed`, with nothing stored).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from svcconf.ai import require_provider
from svcconf.api.auth import BearerUser
from svcconf.clock import utc_now
from svcconf.errors import NotFound, ServiceUnavailable
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.store import queues
from svcconf.store.seeding_jobs import ChunkRecord, JobRecord, JobStatus, SeedingBusy
from svcconf.store.templates import TemplateRepository
from svcconf.templates.candidates import vet_all
from svcconf.templates.library import ensure_starter_set, repository

MIN_COUNT, MAX_COUNT, DEFAULT_COUNT = 5, 50, 10
CHUNK_SIZE = 5  # templates per model call: small enough to stay well inside the worker's timeout
MAX_ROUNDS = 4  # the first round and up to three more for what was dropped
LOCK_SECONDS = 3 * 3600  # MAX_ROUNDS x deliveries x visibility timeout of a chunk that keeps failing, and more
MAX_AVOID_NAMES = 300  # names already in the library that the model is told to avoid


class SeedJob(BaseModel):
    """A job's progress or result, as seedTemplates with `job_id` reads it."""

    job_id: str
    status: Literal["queued", "running", "succeeded", "partial", "failed"] = Field(
        description="queued until the worker plans its first round; then running until it ends."
    )
    requested: int
    stored: int = Field(description="Templates the job has stored so far.")
    failed: int = Field(description="Candidates the job dropped (invalid or duplicates); later rounds replace them.")
    started_at: datetime
    finished_at: datetime | None = Field(description="null while the job runs.")


class SeedAnswer(BaseModel):
    success: bool = True
    started: bool = Field(
        description="false: nothing was started (another job is still running, or a job was read by job_id)."
    )
    message: str
    job_id: str = Field(description="The job started, the one still running, or the one read.")
    requested: int
    stored: int = Field(description="Templates the job has stored so far.")
    job: SeedJob = Field(description="The job's progress: poll it with `job_id`.")


class NoSuchJob(NotFound):
    default_message = "No template generation job has this job_id."


class RoundMessage(BaseModel):
    kind: Literal["round"] = "round"
    job_id: str
    round: int


class ChunkMessage(BaseModel):
    kind: Literal["chunk"] = "chunk"
    job_id: str
    chunk_id: str
    count: int


TemplateMessage = Annotated[RoundMessage | ChunkMessage, Field(discriminator="kind")]


class ChunkRequest(BaseModel):
    """What one model call is asked for."""

    job_id: str
    chunk_id: str
    count: int
    avoid_names: list[str]


Generate = Callable[[ChunkRequest], list[dict[str, Any]]]


def new_job_id() -> str:
    return f"tj_{int(utc_now().timestamp() * 1000):012x}{secrets.token_hex(4)}"


def chunk_sizes(missing: int, size: int = CHUNK_SIZE) -> list[int]:
    """14 -> [5, 5, 4]: chunks of `size`, the last one smaller."""
    return [min(size, missing - start) for start in range(0, max(missing, 0), size)]


def _queue_url() -> str:
    url = get_settings().template_queue_url
    if not url:
        logger.error("the template queue is not configured (TEMPLATE_QUEUE_URL)")
        raise ServiceUnavailable("Template generation is not configured.")
    return url


# ---------------------------------------------------------------- the request side


def start_seeding(user: BearerUser, count: int) -> SeedAnswer:
    url = _queue_url()
    require_provider()  # 503 now, rather than a job whose every chunk fails
    templates = repository()
    now = utc_now()
    job = JobRecord(job_id=new_job_id(), requested=count, requested_by=user.sub, created_at=now, updated_at=now)
    epoch = int(now.timestamp())
    for _ in range(2):
        try:
            templates.start(job, lock_expiration=epoch + LOCK_SECONDS, now=epoch)
            break
        except SeedingBusy:
            holder = templates.lock_holder()
            running = templates.get_job(holder) if holder else None
            if running is not None and not running.finished:
                return _answer(
                    running,
                    f"Template generation job {running.job_id} is still running "
                    f"({running.stored} of {running.requested} stored); nothing new was started.",
                )
            if holder:  # a lock its ended job failed to free: free it and try once more
                templates.release(holder)
    else:
        raise ServiceUnavailable("Template generation could not be started; try again.")
    try:
        queues.send(url, RoundMessage(job_id=job.job_id, round=1).model_dump())
    except Exception:
        templates.finish(job, "failed", "The job could not be queued.", utc_now())
        raise
    metrics.add_metric(name="TemplateJobStarted", unit="Count", value=1)
    logger.info("template job started", extra={"job_id": job.job_id, "requested": count})
    return _answer(job, f"Generating {count} templates into the library as job {job.job_id}.", started=True)


def read_job(job_id: str) -> SeedAnswer:
    """A job's progress or result; reading never starts a job (unknown: 404)."""
    job = repository().get_job(job_id)
    if job is None:
        raise NoSuchJob()
    view = job_view(job)
    progress = f"{job.stored} of {job.requested} stored"
    if view.status in ("queued", "running"):
        return _answer(job, f"Template generation job {job.job_id} is {view.status} ({progress}).")
    ending = f": {job.error}" if job.error else "."
    return _answer(job, f"Template generation job {job.job_id} {view.status} ({progress}){ending}")


def job_view(job: JobRecord) -> SeedJob:
    # A running job whose first round the worker has not planned yet has not begun: it is queued.
    status = "queued" if job.status == "running" and job.round == 0 else job.status
    return SeedJob(
        job_id=job.job_id,
        status=status,
        requested=job.requested,
        stored=job.stored,
        failed=job.dropped,
        started_at=job.created_at,
        finished_at=job.finished_at,
    )


def _answer(job: JobRecord, message: str, *, started: bool = False) -> SeedAnswer:
    return SeedAnswer(
        started=started,
        message=message,
        job_id=job.job_id,
        requested=job.requested,
        stored=job.stored,
        job=job_view(job),
    )


# ---------------------------------------------------------------- the worker side


def run_message(message: RoundMessage | ChunkMessage, *, generate: Generate, last_delivery: bool) -> None:
    """Handles one queue message; on the last delivery a failure still lets the job go on (or end)."""
    logger.append_keys(job_id=message.job_id)
    try:
        if isinstance(message, RoundMessage):
            plan_round(message)
        else:
            run_chunk(message, generate)
    except Exception as failure:
        if last_delivery:
            _give_up(message, f"{type(failure).__name__} on its last delivery")
        raise


def plan_round(message: RoundMessage) -> None:
    templates = repository()
    job = templates.get_job(message.job_id)
    if job is None or job.finished or job.round > message.round:
        return
    if job.round == message.round - 1:
        missing = job.requested - job.stored
        if missing <= 0:
            advance(job.job_id)
            return
        chunks = {f"{message.round}-{index}": size for index, size in enumerate(chunk_sizes(missing))}
        if not templates.start_round(job, message.round, chunks, utc_now()):
            job = templates.get_job(message.job_id)  # another delivery moved it first
            if job is None or job.round != message.round:
                return
        else:
            job.round, job.round_chunks = message.round, chunks
    if job.round != message.round:
        return
    logger.info("round planned", extra={"round": job.round, "chunks": job.round_chunks})
    url = _queue_url()
    for chunk_id, size in job.round_chunks.items():
        queues.send(url, ChunkMessage(job_id=job.job_id, chunk_id=chunk_id, count=size).model_dump())


def run_chunk(message: ChunkMessage, generate: Generate) -> None:
    templates = repository()
    job = templates.get_job(message.job_id)
    if job is None or job.finished:
        return
    chunk = templates.get_chunk(message.job_id, message.chunk_id)
    if chunk is None:
        ensure_starter_set(templates)  # its names are taken before generated ones can take them
        request = ChunkRequest(
            job_id=message.job_id,
            chunk_id=message.chunk_id,
            count=message.count,
            avoid_names=sorted(summary["name"] for summary in templates.summaries())[:MAX_AVOID_NAMES],
        )
        candidates = generate(request)
        chunk = templates.keep_candidates(
            ChunkRecord(job_id=message.job_id, chunk_id=message.chunk_id, candidates=candidates)
        )
    if not chunk.done:
        _store_chunk(templates, chunk)
    advance(message.job_id)


def _store_chunk(templates: TemplateRepository, chunk: ChunkRecord) -> None:
    kept, dropped = vet_all(chunk.candidates)
    drops = [f"#{drop.position} {drop.name or '(no name)'}: {drop.reason}" for drop in dropped]
    stored = surplus = 0
    for position, draft in kept:
        outcome = templates.store_generated(
            draft.stored(
                source="generated",
                created_at=utc_now(),
                job_id=chunk.job_id,
                chunk_id=chunk.chunk_id,
                position=position,
            )
        )
        if outcome in ("stored", "already_stored"):
            stored += 1
        elif outcome == "duplicate":
            drops.append(f"#{position} {draft.name}: duplicate of a template in the library ({draft.id})")
        else:
            surplus += 1
    chunk.stored, chunk.dropped, chunk.surplus, chunk.drops = stored, len(drops), surplus, drops
    if templates.finish_chunk(chunk, utc_now()):
        logger.info("chunk stored", extra={"chunk_id": chunk.chunk_id, "stored": stored, "drops": drops})
        metrics.add_metric(name="TemplatesStored", unit="Count", value=stored)
        metrics.add_metric(name="TemplatesDropped", unit="Count", value=len(drops))


def advance(job_id: str) -> None:
    """Ends the job when it has all it asked for; else, once its round is over, queues the next round or ends."""
    templates = repository()
    job = templates.get_job(job_id)
    if job is None or job.finished:
        return
    if job.stored >= job.requested:
        _finish(templates, job, "succeeded", None)
    elif job.chunks_done >= job.chunks_planned and job.round > 0:
        if job.round >= MAX_ROUNDS:
            reason = f"{job.stored} of {job.requested} templates after {MAX_ROUNDS} rounds; {job.dropped} dropped."
            _finish(templates, job, "partial" if job.stored else "failed", reason)
        else:
            queues.send(_queue_url(), RoundMessage(job_id=job_id, round=job.round + 1).model_dump())


def _finish(templates: TemplateRepository, job: JobRecord, status: JobStatus, error: str | None) -> None:
    if templates.finish(job, status, error, utc_now()):
        metrics.add_metric(name=f"TemplateJob{status.capitalize()}", unit="Count", value=1)
        logger.info(
            "template job finished",
            extra={"status": status, "stored": job.stored, "requested": job.requested, "dropped": job.dropped},
        )


def _give_up(message: RoundMessage | ChunkMessage, reason: str) -> None:
    """A message's last delivery failed: a chunk counts as done with nothing stored, so the round can end; a
    round that cannot be queued ends the job, freeing the lock."""
    templates = repository()
    if isinstance(message, ChunkMessage):
        failed = ChunkRecord(job_id=message.job_id, chunk_id=message.chunk_id, error=reason)
        if templates.finish_chunk(failed, utc_now()):
            advance(message.job_id)
        return
    job = templates.get_job(message.job_id)
    if job is not None:
        _finish(templates, job, "partial" if job.stored else "failed", f"Round {message.round} failed: {reason}.")
