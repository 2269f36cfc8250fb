"""`make invoke FN=<operation> [EVENT=events/<operation>.json]`: one function, once, with one event, no Docker.

What `sam local invoke` does, on the pieces `make run` uses: the chat-platform sandbox and moto with
template.yaml's tables, queues, secrets and keys (local/runner.py, local/provision.py), the same seeded data
(local/seed.py), and one Lambda sandbox process with the function's template environment
(local/lambda_runtime.py). Prints the function's log lines, its response and a REPORT line with its duration
and init duration; exits 1 when the operation did not succeed (a 4xx/5xx answer, a failed batch item, an error).

Things are adapted to the run, and said when they happen: a bearer token that does not verify with this
run's JWT settings (SVC_JWT_SECRET, issuer, audience) is replaced by a fresh one for the same `sub` and
`role`; a deploy job (the worker's SQS message) whose deployment is not stored gets one queued, as
deployToChat would have queued it; and chatAuth's code exchange gets the `state` of a sign-in started for its
bearer user and the sandbox's code for it, as the browser's round trip would bring them back.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from local.lambda_runtime import SANDBOX_INIT_TIMEOUT_SECONDS, FunctionRuntime, InvocationError
from local.resources import FunctionSpec, all_functions
from local.runner import Runner
from local.settings import REPO_ROOT, TEMPLATE_PATH, LocalSettings
from local.template import load_template

EVENTS_DIR = REPO_ROOT / "events"


def _functions_help(runner: Runner) -> str:
    rows = []
    for spec in all_functions(runner.tpl):
        event = EVENTS_DIR / f"{spec.code_dir.name}.json"
        rows.append(f"  {spec.code_dir.name:<20} {spec.logical_id:<28} {event.relative_to(REPO_ROOT)}")
    return "\n".join(rows)


# ---------------------------------------------------------------- the event, adapted to this run


def _header(event: dict[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if key.lower() == name:
            return str(value)
    return None


def _set_header(event: dict[str, Any], name: str, value: str) -> None:
    for field in ("headers", "multiValueHeaders"):
        headers = event.get(field) or {}
        for key in [key for key in headers if key.lower() == name]:
            headers[key] = [value] if field == "multiValueHeaders" else value


def refresh_bearer_token(runner: Runner, event: dict[str, Any]) -> str | None:
    """Replaces a bearer token that this run would refuse with a fresh one for its `sub`; says so, or None."""
    import jwt

    from local.tokens import issue_token

    authorization = _header(event, "authorization")
    if not authorization or not authorization.lower().startswith("bearer "):
        return None
    assert runner.provisioned is not None
    environment = runner.provisioned.environment_for(None)
    if environment.get("SVC_JWT_JWKS_URL"):
        return "the event's bearer token is sent as it is: SVC_JWT_JWKS_URL is set, tokens cannot be minted here"
    secret = runner.settings.values["SVC_JWT_SECRET"]
    issuer, audience = environment.get("SVC_JWT_ISSUER") or None, environment.get("SVC_JWT_AUDIENCE") or None
    token = authorization.split(None, 1)[1].strip()
    try:
        jwt.decode(
            token,
            secret,
            algorithms=["HS256"],
            issuer=issuer,
            audience=audience,
            options={"require": ["exp", "sub"], "verify_aud": audience is not None},
        )
        return None
    except jwt.PyJWTError as refused:
        reason = str(refused) or type(refused).__name__
    claims = jwt.decode(token, options={"verify_signature": False}) if token.count(".") == 2 else {}
    sub = str(claims.get("sub") or "dev-user")
    role = claims.get("role")
    fresh = issue_token(secret, sub, role=role, issuer=issuer, audience=audience)
    _set_header(event, "authorization", f"Bearer {fresh}")
    return f"the event's bearer token does not verify in this run ({reason}): replaced by a fresh one for sub {sub}"


def seed_sign_in(runner: Runner, spec: FunctionSpec, event: dict[str, Any]) -> list[str]:
    """chatAuth's second step (a `code` with a `state`): the state is one this run cannot know in advance, so a
    sign-in is started for the event's bearer user (chatAuth without `code`, `replace: true`: the seeding linked
    the dev user already) and the event's `state` and `code` are replaced by that state and a code the sandbox
    issues for it to the chat user whose fixture code the event names (its approval, with the PKCE challenge)."""
    import importlib

    import jwt

    from local.seed import layer_environment, start_sandbox_sign_in

    if spec.code_dir.name != "chatAuth":
        return []
    try:
        body = json.loads(str(event.get("body") or ""))
    except ValueError:
        return []
    authorization = _header(event, "authorization") or ""
    sandbox = getattr(runner.chat_sandbox, "state", None)
    if not (isinstance(body, dict) and {"code", "state", "redirect_uri"} <= body.keys()):
        return []
    if sandbox is None or not authorization.lower().startswith("bearer "):
        return ["no sign-in started for the event's state: no sandbox or no bearer token"]
    with sandbox.lock:
        fixture_code = sandbox.codes.get(str(body["code"]))
    if fixture_code is None:
        return [f"no sign-in started: the event's code {body['code']!r} is none of the sandbox's"]
    claims = jwt.decode(authorization.split(None, 1)[1].strip(), options={"verify_signature": False})
    with layer_environment(runner, "chatAuth"):
        user = importlib.import_module("svcconf.api.auth").BearerUser(sub=claims["sub"], iss=claims.get("iss"))
        state, code = start_sandbox_sign_in(runner, user, str(body["redirect_uri"]), fixture_code["user_id"])
    event["body"] = json.dumps({**body, "state": state, "code": code})
    return [
        f"a sign-in started for sub {claims['sub']} (chatAuth without `code`): the event's `state` and code "
        f"{body['code']!r} replaced by its state and the code the sandbox issued for it"
    ]


def seed_deploy_jobs(runner: Runner, event: dict[str, Any], chat_user_id: str | None) -> list[str]:
    """Queues the deployment each deploy job of an SQS event names, when it is not stored yet."""
    from local.seed import seed_deployment

    notes = []
    for job in _sqs_bodies(event):
        if not {"user_id", "project_id", "deployment_id"} <= job.keys():
            continue
        if chat_user_id is None:
            notes.append("no deployment seeded: no chat account is linked (the sandbox is not running)")
            continue
        notes.append(seed_deployment(runner, job, chat_user_id))
    return notes


def seed_template_jobs(runner: Runner, event: dict[str, Any]) -> list[str]:
    """Starts the template job each chunk message of an SQS event names, when it is not stored yet."""
    from local.seed import seed_template_job

    return [
        seed_template_job(runner, message)
        for message in _sqs_bodies(event)
        if message.get("kind") == "chunk" and {"job_id", "chunk_id", "count"} <= message.keys()
    ]


def template_job_outcomes(runner: Runner, event: dict[str, Any]) -> list[dict[str, Any]]:
    """The template jobs the chunk messages of an SQS event name, read after the run."""
    import importlib

    from local.seed import layer_environment

    found = []
    with layer_environment(runner, "seedTemplates"):
        store = importlib.import_module("svcconf.store.templates")
        settings = importlib.import_module("svcconf.settings").get_settings()
        repository = store.TemplateRepository(settings.templates_table)
        for job_id in {message["job_id"] for message in _sqs_bodies(event) if message.get("kind") == "chunk"}:
            job = repository.get_job(job_id)
            if job is not None:
                found.append({"job_id": job.job_id, "status": job.status, "stored": job.stored, "dropped": job.dropped})
    return found


def _sqs_bodies(event: dict[str, Any]) -> list[dict[str, Any]]:
    bodies = []
    for record in event.get("Records") or []:
        try:
            body = json.loads(str(record.get("body") or ""))
        except ValueError:
            continue
        if record.get("eventSource") == "aws:sqs" and isinstance(body, dict):
            bodies.append(body)
    return bodies


def deployment_outcomes(runner: Runner, event: dict[str, Any]) -> list[dict[str, Any]]:
    """The deployments the deploy jobs of an SQS event name, read after the run: {deployment_id, status, result}."""
    import importlib

    from local.seed import layer_environment

    found = []
    with layer_environment(runner, "deployToChat"):
        store = importlib.import_module("svcconf.store.deployment_records")
        settings = importlib.import_module("svcconf.settings").get_settings()
        repository = store.DeploymentRepository(settings.deployments_table)
        for record in event.get("Records") or []:
            try:
                job = json.loads(str(record.get("body") or ""))
                deployment = repository.get(job["user_id"], job["project_id"], job["deployment_id"])
            except (ValueError, KeyError, TypeError):
                continue
            if deployment is not None:
                found.append(
                    {
                        "deployment_id": deployment.deployment_id,
                        "status": deployment.status,
                        "result": deployment.result or deployment.error,
                    }
                )
    return found


# ---------------------------------------------------------------- one invocation


@contextlib.contextmanager
def captured_output() -> Iterator[list[str]]:
    """This process's stdout and stderr (file descriptors 1 and 2, which a spawned sandbox inherits) go to a
    file until the block ends; the list then holds its lines."""
    lines: list[str] = []
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 1)
        os.dup2(capture.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            capture.seek(0)
            lines.extend(capture.read().decode("utf-8", errors="replace").splitlines())


def invoke_once(runtime: FunctionRuntime, event: dict[str, Any]) -> tuple[Any, InvocationError | None, float, float]:
    """(result, error, init seconds, duration seconds): a fresh sandbox started, then invoked once."""
    started = time.monotonic()
    try:
        runtime.start_cold(SANDBOX_INIT_TIMEOUT_SECONDS)
    except InvocationError as failed:
        return None, failed, time.monotonic() - started, 0.0
    init_seconds = time.monotonic() - started
    started = time.monotonic()
    try:
        return runtime.invoke(event), None, init_seconds, time.monotonic() - started
    except InvocationError as failed:
        return None, failed, init_seconds, time.monotonic() - started
    finally:
        runtime.close()  # the sandbox exits, so its last log lines are written before they are read


def succeeded(result: Any, error: InvocationError | None) -> bool:
    if error is not None or not isinstance(result, dict):
        return error is None
    if "statusCode" in result:
        return int(result["statusCode"]) < 400
    return not result.get("batchItemFailures")


def render_result(result: Any) -> str:
    """An API Gateway proxy result as status, headers and parsed body; anything else as JSON."""
    if not (isinstance(result, dict) and "statusCode" in result):
        return json.dumps(result, indent=2)
    lines = [f"statusCode: {result['statusCode']}"]
    headers = {name: [value] for name, value in (result.get("headers") or {}).items()}
    headers |= result.get("multiValueHeaders") or {}
    lines += [f"{name}: {value}" for name, values in headers.items() for value in values]
    body = "" if result.get("body") is None else str(result["body"])
    with contextlib.suppress(ValueError):  # a body that is not JSON is shown as it is
        body = json.dumps(json.loads(body), indent=2)
    return "\n".join([*lines, "", body])


# ---------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make invoke", description=__doc__.splitlines()[0])
    parser.add_argument("function", nargs="?", help="operation (folder under functions/) or logical id")
    parser.add_argument("event", nargs="?", type=Path, help="event file (default: events/<operation>.json)")
    parser.add_argument("--json", action="store_true", help="print one JSON report (for scripts and tests)")
    parser.add_argument("--template", type=Path, default=TEMPLATE_PATH, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]

    settings = LocalSettings.from_environ(dict(os.environ))
    settings.concurrency = 1
    settings.preload_libraries = False  # the init duration it reports is Lambda's whole cold start
    if not settings.ai_provider and not os.environ.get("ANTHROPIC_API_KEY"):
        settings.ai_provider = "local"  # so the AI functions' events work as committed, without a key
    runner = Runner(tpl=load_template(args.template), settings=settings, quiet=True, silent=args.json)
    if not args.function:
        print(f"usage: make invoke FN=<operation> [EVENT=<file>]\n\n{_functions_help(runner)}")
        return 2
    try:
        spec: FunctionSpec = next(
            spec for spec in all_functions(runner.tpl) if args.function in (spec.logical_id, spec.code_dir.name)
        )
    except StopIteration:
        print(f"no function {args.function!r} in template.yaml; these are:\n{_functions_help(runner)}")
        return 2
    event_path = args.event or EVENTS_DIR / f"{spec.code_dir.name}.json"
    try:
        event = json.loads(event_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as unreadable:
        print(f"cannot read the event {event_path}: {unreadable}", file=sys.stderr)
        return 2

    from local.seed import seed_service

    runner.say(f"Invoking {spec.logical_id} ({spec.handler_module}.{spec.handler_attr}) with {event_path}")
    try:
        runner.start_backends()
        runner.say("  seeding         a sample code, SVC-DEMO-2026, the dev user linked to a sandbox account ...")
        seeded = seed_service(runner)
        notes = [*seeded.problems, *filter(None, [refresh_bearer_token(runner, event)])]
        linked = seeded.linked_chat_user
        notes += seed_deploy_jobs(runner, event, linked["id"] if linked else None)
        notes += seed_template_jobs(runner, event)
        notes += seed_sign_in(runner, spec, event)
        for note in notes:
            runner.say(f"  note            {note}")
        runtime = runner._runtime(spec)
        runner.say(f"  Lambda          starting a sandbox process for {runtime.function_name} and invoking it ...")
        with captured_output() as log_lines:
            result, error, init_seconds, duration_seconds = invoke_once(runtime, event)
        outcomes = deployment_outcomes(runner, event) if "Records" in event else []
        template_jobs = template_job_outcomes(runner, event) if "Records" in event else []
    finally:
        runner.shutdown()

    ok = (
        succeeded(result, error)
        and all(outcome["status"] == "succeeded" for outcome in outcomes)
        and all(job["stored"] > 0 for job in template_jobs)
    )
    report = {
        "function": spec.logical_id,
        "event": str(event_path),
        "notes": notes,
        "log_lines": log_lines,
        "error": str(error) if error is not None else None,
        "response": result,
        "deployments": outcomes,
        "template_jobs": template_jobs,
        "duration_ms": round(duration_seconds * 1000, 1),
        "init_duration_ms": round(init_seconds * 1000, 1),
        "succeeded": ok,
    }
    if args.json:
        print(json.dumps(report))
        return 0 if ok else 1
    print(f"\nLog lines ({len(log_lines)}):")
    for line in log_lines:
        print(f"  {line}")
    print(f"\nError: {error}" if error is not None else f"\nResponse:\n{render_result(result)}")
    for outcome in outcomes:
        print(f"deployment {outcome['deployment_id']}: {outcome['status']}. {outcome['result'] or ''}".rstrip())
    for job in template_jobs:
        print(f"template job {job['job_id']}: {job['status']}, {job['stored']} stored, {job['dropped']} dropped")
    print(
        f"\nREPORT {spec.logical_id}  Duration: {report['duration_ms']} ms  Init Duration: {report['init_duration_ms']}"
        f" ms  Memory Size: {spec.memory_size} MB  Timeout: {spec.timeout} s"
    )
    print("OK: the operation succeeded" if ok else "FAILED: the operation did not succeed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
