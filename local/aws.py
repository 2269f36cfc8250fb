"""Local AWS: a moto server, and what the template's resources became in it (what !Ref and !GetAtt yield).

local/provision.py creates the resources, as CloudFormation would.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import boto3
from botocore.config import Config as BotoConfig

from local.function_environment import function_environment
from local.intrinsics import IntrinsicResolver
from local.template import LOCAL_REGION

if TYPE_CHECKING:
    from local.template import Template

LOCAL_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
# The services the template's resources live in (boto3's stubs type a client by its service's name).
Service = Literal["dynamodb", "sqs", "secretsmanager", "kms", "scheduler", "iam", "s3"]


# ---------------------------------------------------------------- the moto server


class LocalAws:
    """moto in server mode (what moto's ThreadedMotoServer does), DynamoDB calls one at a time.

    moto evaluates a ConditionExpression and then writes without a lock, while DynamoDB's conditional
    writes are atomic: serialising DynamoDB requests makes "consumed exactly once" hold locally too.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, region: str = LOCAL_REGION):
        self.address = (host, port)
        self.region = region
        self.url = ""
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        class Dispatcher(DomainDispatcherApplication):
            """moto's dispatcher with each host's service looked up once: moto lists its package's folders on every
            request to find it, a third of the server's CPU per request (the queue pollers' receives included)."""

            def __init__(self, create_app: Any):
                super().__init__(create_app)
                self.backend_for_host: dict[str | None, Any] = {}

            def get_backend_for_host(self, host: str | None) -> Any:
                if host not in self.backend_for_host:
                    self.backend_for_host[host] = super().get_backend_for_host(host)
                return self.backend_for_host[host]

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log is noise here
        app = Dispatcher(create_backend_app)
        dynamodb_lock = threading.Lock()

        def application(environ: dict[str, Any], start_response: Any) -> Any:
            if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
                with dynamodb_lock:  # Flask runs the operation inside this call, so the lock covers it
                    return app(environ, start_response)
            return app(environ, start_response)

        self._server = make_server(*self.address, application, threaded=True, request_handler=MotoRequestHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), name="moto", daemon=True)
        self._thread.start()
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}"
        return self.url

    def environment(self) -> dict[str, str]:
        """The variables that point an AWS SDK at this server."""
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": LOCAL_CREDENTIALS["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": LOCAL_CREDENTIALS["aws_secret_access_key"],
            "AWS_DEFAULT_REGION": self.region,
            "AWS_REGION": self.region,
        }

    def client(self, service: Service, *, threads: int = 1) -> Any:
        """A client of the embedded moto; `threads` that share it get a connection each (botocore keeps 10, and
        warns "Connection pool is full" for every one past them when more threads hand theirs back)."""
        return boto3.client(
            service,
            region_name=self.region,
            endpoint_url=self.url,
            aws_access_key_id=LOCAL_CREDENTIALS["aws_access_key_id"],
            aws_secret_access_key=LOCAL_CREDENTIALS["aws_secret_access_key"],
            config=BotoConfig(max_pool_connections=max(threads, 10)),
        )

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=3)


# ---------------------------------------------------------------- the local stack


@dataclass
class ProvisionedResources:
    """What the local stack holds: `refs` is what !Ref yields, `attrs` what !GetAtt yields."""

    tpl: Template
    refs: dict[str, str] = field(default_factory=dict)
    attrs: dict[tuple[str, str], str] = field(default_factory=dict)
    region: str = LOCAL_REGION
    endpoint_url: str | None = None

    def environment_for(self, logical_id: str | None, overrides: dict[str, str] | None = None) -> dict[str, str]:
        """The function's template environment with these resources' names (logical_id None: Globals only)."""
        return function_environment(self.tpl, logical_id, self.refs, overrides, attrs=self.attrs, region=self.region)

    def resolver(self) -> IntrinsicResolver:
        return IntrinsicResolver(self.tpl, self.refs, self.attrs, region=self.region)
