"""seedTemplates and the template worker under moto: who may start a job, the lock that keeps one job at a time,
and a job of 50 ending with exactly 50 distinct valid templates however often its messages are delivered."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import boto3
import pytest

from local.ai_model import LOCAL_API_KEY, LocalModelServer, Request, Step
from local.template import LOCAL_REGION
from local.template_writer import write_templates
from svcconf.clock import utc_now
from svcconf.config import ServerConfig, lint_config
from svcconf.settings import get_settings
from svcconf.store.templates import StoredTemplate, TemplateRepository
from svcconf.templates import library, seeding
from svcconf.templates.candidates import template_id
from tests.helpers.ai_provider import system_is_cached
from tests.helpers.deploy_worker import sqs_record
from tests.helpers.handlers import bearer
from tests.helpers.template_worker import TemplateQueue

ADMIN = {"role": "admin"}


@dataclass
class Model:
    """The local model the worker talks to over HTTP, with what it was asked."""

    server: LocalModelServer

    @property
    def template_requests(self) -> list[dict]:
        """The task line of each template request, in order."""
        return [
            json.loads(Request(r.body).last_text().splitlines()[-1])
            for r in self.server.requests
            if (Request(r.body).schema or {}).get("title") == "TemplateBatch"
        ]

    def chunks_asked(self) -> Counter:
        return Counter(task["chunk_id"] for task in self.template_requests)


@pytest.fixture
def model(aws, function_environment, local_model_server, monkeypatch) -> Iterator[Model]:
    """The seeding functions' environment, their AI key in its secret, the provider being the local model."""
    boto3.client("secretsmanager", region_name=LOCAL_REGION).put_secret_value(
        SecretId=aws.refs["AiApiKeySecret"], SecretString=LOCAL_API_KEY
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", local_model_server.base_url)
    function_environment("SeedTemplatesFunction", "TemplateWorkerFunction")
    local_model_server.reset()
    library.clear_cache()
    yield Model(local_model_server)
    library.clear_cache()
    assert all(system_is_cached(request.body) for request in local_model_server.requests)


def repository() -> TemplateRepository:
    return TemplateRepository(get_settings().templates_table)


def seed(invoke, body=None, **claims):
    return invoke(
        "seedTemplates", body if body is not None else {"count": 10}, headers=bearer("admin-1", **(claims or ADMIN))
    )


# ---------------------------------------------------------------- the request


def test_an_administrator_starts_a_job_answered_202_with_its_id(invoke, model, aws):
    response = invoke("seedTemplates", {"count": 12}, headers=bearer("admin-1", **ADMIN))

    assert response.status == 202
    assert response.body["success"] is True
    assert response.body["started"] is True
    job_id = response.body["job_id"]
    assert job_id.startswith("tj_")
    assert job_id in response.body["message"]
    job = repository().get_job(job_id)
    assert (job.requested, job.stored, job.status, job.requested_by) == (12, 0, "running", "admin-1")
    assert repository().lock_holder() == job_id
    assert TemplateQueue(aws).waiting() == 1


def test_an_empty_body_asks_for_the_default_ten(invoke, model):
    response = invoke("seedTemplates", "", headers=bearer("admin-1", **ADMIN))

    assert response.status == 202
    assert repository().get_job(response.body["job_id"]).requested == 10


def test_a_user_who_is_not_an_administrator_is_refused_403(invoke, model, aws):
    for claims in ({}, {"role": "user"}, {"role": "Admin"}):
        response = invoke("seedTemplates", {"count": 10}, headers=bearer("user-1", **claims))

        assert response.status == 403, claims
        assert response.body["error"] == "Forbidden"
        assert response.body["code"] == 403
    assert repository().lock_holder() is None
    assert TemplateQueue(aws).waiting() == 0


def test_no_or_a_bad_token_is_401_before_the_body_is_looked_at(invoke, model):
    missing = invoke("seedTemplates", {"count": "many"}, drop_headers=("Authorization",))
    bad = invoke("seedTemplates", {"count": 10}, headers={"Authorization": "Bearer not-a-jwt"})

    assert missing.status == 401
    assert "details" not in missing.body
    assert bad.status == 401
    assert bad.body["error"] == "Unauthorized"


@pytest.mark.parametrize("count", [4, 51, 0, -5, "10", 10.5, True, None, [10]])
def test_a_count_outside_5_to_50_or_not_an_integer_is_400_naming_count(invoke, model, count):
    response = seed(invoke, {"count": count})

    assert response.status == 400
    assert response.body["details"][0]["field"] == "count"
    assert repository().lock_holder() is None


def test_without_an_ai_provider_nothing_is_started_and_the_answer_is_503(
    invoke, aws, function_environment, monkeypatch
):
    function_environment("SeedTemplatesFunction")
    monkeypatch.setenv("ANTHROPIC_API_KEY_SECRET_ID", "")  # no key anywhere
    get_settings.cache_clear()

    response = seed(invoke, {"count": 10})

    assert response.status == 503
    assert response.body["error"] == "Service Unavailable"
    assert "requestId" in response.body
    assert repository().lock_holder() is None
    assert TemplateQueue(aws).waiting() == 0


def test_a_second_request_while_a_job_runs_starts_nothing_and_names_the_running_job(invoke, model, aws):
    first = seed(invoke, {"count": 20}).body

    second = seed(invoke, {"count": 5})

    assert second.status == 200
    assert second.body["started"] is False
    assert second.body["success"] is True
    assert second.body["job_id"] == first["job_id"]
    assert first["job_id"] in second.body["message"]
    assert (second.body["requested"], second.body["stored"]) == (20, 0)
    assert TemplateQueue(aws).waiting() == 1, "only the first job's message was queued"


def test_once_the_job_has_ended_a_new_one_can_start(invoke, model, aws):
    first = seed(invoke, {"count": 5}).body
    TemplateQueue(aws).drain()

    again = seed(invoke, {"count": 5})

    assert repository().get_job(first["job_id"]).status == "succeeded"
    assert again.status == 202
    assert again.body["job_id"] != first["job_id"]


def test_a_lock_left_by_an_ended_job_is_freed_for_the_next(invoke, model, aws):
    first = seed(invoke, {"count": 5}).body
    templates = repository()
    job = templates.get_job(first["job_id"])
    # The job ended but its worker died before it freed the lock.
    templates._table.update_item(
        Key={"pk": f"JOB#{job.job_id}", "sk": "JOB"},
        UpdateExpression="SET #s = :s",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": "failed"},
    )

    again = seed(invoke, {"count": 5})

    assert again.status == 202
    assert again.body["started"] is True
    assert templates.lock_holder() == again.body["job_id"]


# ---------------------------------------------------------------- the worker


def assert_library_holds(job_id: str, count: int) -> None:
    stored = repository().templates(job_id=job_id)
    assert len(stored) == count
    assert len({template.id for template in stored}) == count
    assert len({template_id(template.name) for template in repository().templates()}) == len(repository().templates())
    for template in stored:
        config = ServerConfig.model_validate(template.configuration)
        assert lint_config(config) == [], template.name
        assert template.description
        assert template.tags
        assert template.source == "generated"


def test_a_job_of_50_stores_exactly_50_distinct_valid_templates(invoke, model, aws):
    job_id = seed(invoke, {"count": 50}).body["job_id"]

    TemplateQueue(aws).drain()

    assert_library_holds(job_id, 50)
    job = repository().get_job(job_id)
    assert (job.status, job.stored, job.requested) == ("succeeded", 50, 50)
    assert job.dropped > 0, "the writer's flawed templates were dropped, and made up for"
    assert job.round >= 2
    assert job.chunks_done == job.chunks_planned
    assert repository().lock_holder() is None
    starters = [t for t in repository().templates() if t.source == "starter"]
    assert len(starters) == len(library.starter_set()) >= 12


def test_every_message_delivered_once_more_still_leaves_50(invoke, model, aws):
    job_id = seed(invoke, {"count": 50}).body["job_id"]
    queue = TemplateQueue(aws)
    queue.drain()
    first_pass = list(queue.delivered)
    asked = len(model.template_requests)

    answers = [queue.deliver(record) for record in first_pass]

    assert all(answer == {"batchItemFailures": []} for answer in answers)
    assert_library_holds(job_id, 50)
    assert len(model.template_requests) == asked, "no chunk asked the model again"
    assert queue.waiting() == 0


def test_without_the_message_idempotency_records_a_redelivery_still_leaves_50(invoke, model, aws):
    """Beneath Powertools' per-message idempotency, each chunk is idempotent by itself."""
    job_id = seed(invoke, {"count": 50}).body["job_id"]
    queue = TemplateQueue(aws)
    queue.drain()
    idempotency = boto3.resource("dynamodb", region_name=LOCAL_REGION).Table(get_settings().idempotency_table)
    for item in idempotency.scan()["Items"]:
        idempotency.delete_item(Key={"id": item["id"]})
    asked = len(model.template_requests)

    for record in list(queue.delivered):
        queue.deliver(record)
    queue.drain()  # whatever the redelivered round messages sent again

    assert_library_holds(job_id, 50)
    assert len(model.template_requests) == asked
    assert repository().get_job(job_id).stored == 50


def test_a_chunk_cut_short_after_two_stores_stores_the_rest_once_when_delivered_again(invoke, model, aws):
    job_id = seed(invoke, {"count": 5}).body["job_id"]
    queue = TemplateQueue(aws)
    (round_message,) = queue.receive()
    queue.deliver(sqs_record(round_message, queue.arn))
    (chunk_message,) = queue.receive()
    chunk = seeding.ChunkMessage.model_validate_json(chunk_message["Body"])
    # The first delivery kept the model's candidates and stored the first two valid ones; then its worker died.
    templates = repository()
    candidates = write_templates(job_id, chunk.chunk_id, chunk.count, ["gaming clan", "book club", "choir"])
    kept = templates.keep_candidates(seeding.ChunkRecord(job_id=job_id, chunk_id=chunk.chunk_id, candidates=candidates))
    valid, _ = seeding.vet_all(kept.candidates)
    for position, draft in valid[:2]:
        assert templates.store_generated(_stored(draft, job_id, chunk.chunk_id, position)) == "stored"

    queue.deliver(sqs_record(chunk_message, queue.arn))
    queue.drain()

    stored = templates.templates(job_id=job_id)
    assert len(stored) == 5 == templates.get_job(job_id).stored
    first_chunk = [t for t in stored if t.chunk_id == chunk.chunk_id]
    assert len(first_chunk) == len(valid), "the chunk's own candidates, each stored once"
    assert model.chunks_asked()[chunk.chunk_id] == 0, "the kept candidates were stored, the model not asked again"


def _stored(draft, job_id, chunk_id, position):
    return StoredTemplate(
        id=draft.id,
        name=draft.name,
        description=draft.description,
        tags=draft.tags,
        configuration=draft.config.model_dump(mode="json", exclude_unset=True),
        source="generated",
        job_id=job_id,
        chunk_id=chunk_id,
        position=position,
        created_at=utc_now(),
    )


def test_a_chunk_whose_every_delivery_fails_is_made_up_for_by_the_next_round(invoke, model, aws):
    job_id = seed(invoke, {"count": 10}).body["job_id"]
    # Every request for the first chunk is refused (400: not retried by the adapter); the others are answered.
    model.server.script(
        *[lambda request: Step(status=400) if '"chunk_id": "1-0"' in request.last_text() else Step()] * 30
    )

    answers = TemplateQueue(aws).drain()

    failures = sum(1 for answer in answers if answer["batchItemFailures"])
    assert failures == get_settings().template_max_receives
    assert_library_holds(job_id, 10)
    job = repository().get_job(job_id)
    assert job.status == "succeeded"
    assert job.round >= 2


def test_a_full_job_stores_nothing_more(model, invoke):
    job_id = seed(invoke, {"count": 5}).body["job_id"]
    templates = repository()
    kinds = ["gaming clan", "book club", "running club", "choir", "astronomy club", "pets", "bakery", "chess"]
    drafts = [draft for _, draft in seeding.vet_all(write_templates("fixed-job", "1-0", 8, kinds))[0]]
    assert len(drafts) >= 6

    outcomes = Counter(templates.store_generated(_stored(d, job_id, "1-0", i)) for i, d in enumerate(drafts))

    assert outcomes["stored"] == 5
    assert outcomes["quota_full"] == len(drafts) - 5
    assert templates.get_job(job_id).stored == 5


# ---------------------------------------------------------------- the library


def test_the_starter_set_is_loaded_once_and_suggestions_work_before_any_seeding(model):
    added = library.ensure_starter_set()
    again = library.ensure_starter_set()
    summaries = library.library_summaries(fresh=True)

    assert added == len(library.starter_set()) >= 12
    assert again == 0
    assert len(summaries) == added
    suggested = library.suggest_templates("We are a few friends who play games together and want voice lobbies", {})
    assert suggested[0].name == "Gaming Community"
    assert 1 <= len(suggested) <= 3
    assert set(suggested[0].model_dump()) == {"id", "name", "description", "tags"}


def test_a_generated_template_named_like_a_starter_is_dropped_as_a_duplicate(invoke, model, aws):
    job_id = seed(invoke, {"count": 5}).body["job_id"]
    library.ensure_starter_set()
    templates = repository()
    draft = seeding.vet_all(write_templates("fixed-job", "1-0", 5, ["gaming clan"]))[0][0][1]
    draft.name = "gaming  COMMUNITY!"

    outcome = templates.store_generated(_stored(draft, job_id, "1-0", 0))

    assert outcome == "duplicate"
    assert templates.get("gaming-community").source == "starter"
    assert templates.get_job(job_id).stored == 0


# ---------------------------------------------------------------- reading a job


def test_a_job_read_by_its_id_is_queued_before_the_worker_plans_it(invoke, model, aws):
    job_id = seed(invoke, {"count": 5}).body["job_id"]

    read = seed(invoke, {"job_id": job_id})

    assert read.status == 200
    assert read.body["started"] is False
    job = read.body["job"]
    assert (job["job_id"], job["status"], job["requested"], job["stored"], job["failed"]) == (job_id, "queued", 5, 0, 0)
    assert datetime.fromisoformat(job["started_at"]) == repository().get_job(job_id).created_at
    assert job["finished_at"] is None


def test_a_finished_job_reads_back_succeeded_with_its_counts_and_reading_again_starts_nothing(invoke, model, aws):
    job_id = seed(invoke, {"count": 5}).body["job_id"]
    TemplateQueue(aws).drain()

    first = seed(invoke, {"job_id": job_id})
    second = seed(invoke, {"job_id": job_id})

    assert first.status == second.status == 200
    assert first.body["job"]["status"] == "succeeded"
    assert (first.body["job"]["requested"], first.body["job"]["stored"]) == (5, 5)
    assert first.body["job"]["finished_at"] is not None
    assert first.body["message"] == f"Template generation job {job_id} succeeded (5 of 5 stored)."
    assert second.body == first.body
    assert repository().lock_holder() is None, "no job was started by reading"
    assert TemplateQueue(aws).waiting() == 0
    assert len(repository().templates(job_id=job_id)) == 5


def test_every_answer_carries_the_job_that_a_poll_by_job_id_reads(invoke, model, aws):
    started = seed(invoke, {"count": 20}).body
    running = seed(invoke, {"count": 5}).body

    assert started["job"]["status"] == "queued"
    assert running["job"]["job_id"] == started["job_id"]
    assert running["job"] == seed(invoke, {"job_id": started["job_id"]}).body["job"]


def test_an_unknown_job_is_404_and_starts_nothing(invoke, model, aws):
    response = seed(invoke, {"job_id": "tj_000000000000deadbeef"})

    assert response.status == 404
    assert response.body["message"] == "No template generation job has this job_id."
    assert repository().lock_holder() is None
    assert TemplateQueue(aws).waiting() == 0


def test_job_id_with_count_is_400_naming_job_id(invoke, model, aws):
    response = seed(invoke, {"count": 5, "job_id": "tj_000000000000deadbeef"})

    assert response.status == 400
    assert response.body["details"][0]["field"] == "job_id"
    assert repository().lock_holder() is None


def test_reading_a_job_is_for_administrators_only(invoke, model, aws):
    job_id = seed(invoke, {"count": 5}).body["job_id"]

    response = invoke("seedTemplates", {"job_id": job_id}, headers=bearer("user-1"))

    assert response.status == 403
