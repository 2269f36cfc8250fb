"""template.yaml's resources in moto's in-process `mock_aws`: all of them (the `aws` fixture), or only some: a store's
tests need its table and bucket, not the whole stack (every table, queue, secret and key: half a second a test, paid
again for each mutant under mutmut; see docs/09-mutation-testing.md).

The resources come from the template's own definitions through the provisioning of the whole stack (local/provision.py),
and the functions see the Globals environment less the variables that name a resource left out.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import moto.kms.models
import pytest
from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber

from local.aws import ProvisionedResources
from local.function_environment import raw_environment
from local.intrinsics import referenced_logical_ids
from local.provision import provision
from local.template import Template, load_template
from svcconf.settings import get_settings
from tests.helpers.handlers import ROOT

# moto makes a 2048-bit RSA private key for every KMS key it creates, symmetric ones and DynamoDB's default key
# included (moto/kms/models.py, Key.__init__): a tenth of a second of CPU each, two or more a provisioning, a sixth
# of an integration test's time. The service's KMS keys only encrypt symmetrically, which never reads that private
# key: each key spec's is made once a process.
moto.kms.models.generate_private_key = cache(moto.kms.models.generate_private_key)

# moto evaluates a ConditionExpression and then writes without a lock, where DynamoDB's conditional writes are
# atomic: two threads' `take` could both pass the same counter's condition (parallel AI turns admitted three where
# the day holds two, on a busy machine). DynamoDB's requests go one at a time, as local/aws.py does for `make run`.
_moto_process_request = BotocoreStubber.process_request
_dynamodb_lock = threading.Lock()


def _process_request_atomically(stubber: BotocoreStubber, request: Any) -> Any:
    if request.headers.get("X-Amz-Target", b"").startswith(b"DynamoDB_"):  # botocore's prepared headers are bytes
        with _dynamodb_lock:
            return _moto_process_request(stubber, request)
    return _moto_process_request(stubber, request)


BotocoreStubber.process_request = _process_request_atomically  # type: ignore[method-assign]


@cache
def _template() -> Template:
    return load_template(ROOT / "template.yaml")


def _only(tpl: Template, logical_ids: tuple[str, ...]) -> Template:
    """The template with only these resources, and the Globals variables that name no other resource."""
    left_out = set(tpl.resources) - set(logical_ids)
    variables = {
        name: value
        for name, value in raw_environment(tpl, None).items()
        if not referenced_logical_ids(value) & left_out
    }
    function_globals = {**tpl.function_globals, "Environment": {"Variables": variables}}
    body = {
        **tpl.body,
        "Resources": {logical_id: tpl.resources[logical_id] for logical_id in logical_ids},
        "Globals": {**tpl.body["Globals"], "Function": function_globals},
    }
    return Template(body=body, root=tpl.root)


@contextmanager
def template_resources(
    monkeypatch: pytest.MonkeyPatch, *logical_ids: str, secret_values: dict[str, str] | None = None
) -> Iterator[ProvisionedResources]:
    """These resources of template.yaml (none named: all of them) in moto, and the environment the functions would
    have with only them. secret_values: a secret's logical id -> its value (others get a generated one)."""
    tpl = _only(_template(), logical_ids) if logical_ids else _template()
    # boto3's default session kept from test to test (moto makes a new one by default): its clients load their
    # service's model once, not twice a test (0.2 s -> 0.07 s of CPU); every credential is a fake (tests/conftest.py).
    with mock_aws(config={"core": {"reset_boto3_session": False}}):
        resources = provision(tpl, secret_values=secret_values)
        for name, value in resources.environment_for(None).items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        yield resources
    get_settings.cache_clear()
