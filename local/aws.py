"""Local AWS: a moto server, and template.yaml's tables, queues, buckets, secrets and KMS keys created in moto.

Provisioning does what CloudFormation would, in-process under `moto.mock_aws()` (endpoint_url None) or
against a moto server (endpoint_url). Properties come from the template and are resolved with the same
intrinsic resolver as the functions' environment, so the local resources cannot drift from the deployed ones.
"""

from __future__ import annotations

import json
import logging
import secrets as random_secrets
import string
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import boto3
from botocore.config import Config as BotoConfig

from local.template import (
    BUCKET_TYPE,
    KMS_ALIAS_TYPE,
    KMS_KEY_TYPE,
    LOCAL_NAME_PREFIX,
    LOCAL_REGION,
    QUEUE_TYPE,
    ROLE_TYPE,
    SCHEDULE_GROUP_TYPE,
    SECRET_TYPE,
    TABLE_TYPE,
    IntrinsicResolver,
    Resource,
    as_text,
    function_environment,
    referenced_logical_ids,
    resources_of_type,
)

if TYPE_CHECKING:
    from local.template import Template

LOCAL_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
# The services the template's resources live in (boto3's stubs type a client by its service's name).
Service = Literal["dynamodb", "sqs", "secretsmanager", "kms", "scheduler", "iam", "s3"]

# CloudFormation's AWS::SQS::Queue properties and the SQS attribute each one becomes.
_QUEUE_ATTRIBUTES = (
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "DelaySeconds",
    "FifoQueue",
    "FifoThroughputLimit",
    "KmsDataKeyReusePeriodSeconds",
    "KmsMasterKeyId",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "RedriveAllowPolicy",
    "RedrivePolicy",
    "SqsManagedSseEnabled",
    "VisibilityTimeout",
)
_GSI_KEYS = ("IndexName", "KeySchema", "Projection", "ProvisionedThroughput")
_LSI_KEYS = ("IndexName", "KeySchema", "Projection")


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

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log is noise here
        app = DomainDispatcherApplication(create_backend_app)
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


# ---------------------------------------------------------------- provisioning


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


def physical_name(logical_id: str, properties: dict[str, Any], name_property: str, resolver: IntrinsicResolver) -> str:
    if name_property in properties:
        return str(resolver.resolve(properties[name_property]))
    return f"{LOCAL_NAME_PREFIX}{logical_id}"


def provision(
    tpl: Template,
    *,
    secret_values: dict[str, str] | None = None,
    endpoint_url: str | None = None,
    region: str = LOCAL_REGION,
) -> ProvisionedResources:
    """Create every table, queue, secret and KMS key of the template; returns their refs and attrs.

    secret_values: logical id → SecretString; other secrets get CloudFormation's generated string.
    """
    provisioned = ProvisionedResources(tpl=tpl, region=region, endpoint_url=endpoint_url)
    client_options: dict[str, Any] = {"region_name": region}
    if endpoint_url:
        client_options |= {"endpoint_url": endpoint_url, **LOCAL_CREDENTIALS}
    creators = {
        KMS_KEY_TYPE: _create_kms_key,
        KMS_ALIAS_TYPE: _create_kms_alias,
        SECRET_TYPE: _create_secret,
        TABLE_TYPE: _create_table,
        QUEUE_TYPE: _create_queue,
        SCHEDULE_GROUP_TYPE: _create_schedule_group,
        ROLE_TYPE: _create_role,
        BUCKET_TYPE: _create_bucket,
    }
    clients: dict[str, Any] = {}

    def client(service: Service) -> Any:
        if service not in clients:
            clients[service] = boto3.client(service, **client_options)
        return clients[service]

    resources = [resource for resource_type in creators for resource in resources_of_type(tpl, resource_type)]
    for resource in _in_dependency_order(resources):
        creators[resource.type](resource, provisioned, client, secret_values or {})
    return provisioned


def _in_dependency_order(resources: list[Resource]) -> list[Resource]:
    """Resources after the ones their properties refer to (a DLQ before its queue, a key before its alias)."""
    by_id = {resource.logical_id: resource for resource in resources}
    ordered: list[Resource] = []
    done: set[str] = set()
    visiting: set[str] = set()

    def visit(resource: Resource) -> None:
        if resource.logical_id in done:
            return
        if resource.logical_id in visiting:
            raise ValueError(f"circular reference through {resource.logical_id}")
        visiting.add(resource.logical_id)
        for name in sorted(referenced_logical_ids(resource.properties)):
            if name in by_id and name != resource.logical_id:
                visit(by_id[name])
        visiting.discard(resource.logical_id)
        done.add(resource.logical_id)
        ordered.append(resource)

    for resource in resources:
        visit(resource)
    return ordered


def _resolved(provisioned: ProvisionedResources, properties: dict[str, Any], *names: str) -> dict[str, Any]:
    resolver = provisioned.resolver()
    return {name: resolver.resolve(properties[name]) for name in names if name in properties}


# ---------------------------------------------------------------- DynamoDB


def _create_table(resource: Resource, provisioned: ProvisionedResources, client: Any, _: dict[str, str]) -> None:
    properties = resource.properties
    name = physical_name(resource.logical_id, properties, "TableName", provisioned.resolver())
    spec = _resolved(
        provisioned,
        properties,
        "KeySchema",
        "AttributeDefinitions",
        "BillingMode",
        "ProvisionedThroughput",
        "GlobalSecondaryIndexes",
        "LocalSecondaryIndexes",
        "StreamSpecification",
        "SSESpecification",
        "TimeToLiveSpecification",
        "PointInTimeRecoverySpecification",
    )
    request: dict[str, Any] = {
        "TableName": name,
        "KeySchema": spec["KeySchema"],
        "AttributeDefinitions": spec["AttributeDefinitions"],
        "BillingMode": spec.get("BillingMode", "PROVISIONED"),
    }
    if "ProvisionedThroughput" in spec:
        request["ProvisionedThroughput"] = spec["ProvisionedThroughput"]
    if spec.get("GlobalSecondaryIndexes"):
        request["GlobalSecondaryIndexes"] = [_only(index, _GSI_KEYS) for index in spec["GlobalSecondaryIndexes"]]
    if spec.get("LocalSecondaryIndexes"):
        request["LocalSecondaryIndexes"] = [_only(index, _LSI_KEYS) for index in spec["LocalSecondaryIndexes"]]
    if spec.get("StreamSpecification"):
        request["StreamSpecification"] = {"StreamEnabled": True, **spec["StreamSpecification"]}
    if spec.get("SSESpecification"):
        sse = spec["SSESpecification"]
        request["SSESpecification"] = {
            "Enabled": bool(sse.get("SSEEnabled", False)),
            **_only(sse, ("SSEType",)),
            **({"KMSMasterKeyId": sse["KMSMasterKeyId"]} if "KMSMasterKeyId" in sse else {}),
        }
    dynamodb = client("dynamodb")
    description = dynamodb.create_table(**request)["TableDescription"]
    ttl = spec.get("TimeToLiveSpecification")
    if ttl and ttl.get("Enabled"):
        dynamodb.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]}
        )
    recovery = spec.get("PointInTimeRecoverySpecification")
    if recovery and recovery.get("PointInTimeRecoveryEnabled"):
        dynamodb.update_continuous_backups(
            TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
    provisioned.refs[resource.logical_id] = name
    provisioned.attrs[(resource.logical_id, "Arn")] = description["TableArn"]
    if description.get("LatestStreamArn"):
        provisioned.attrs[(resource.logical_id, "StreamArn")] = description["LatestStreamArn"]


def _only(mapping: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: mapping[key] for key in keys if key in mapping}


# ---------------------------------------------------------------- S3


def _create_bucket(resource: Resource, provisioned: ProvisionedResources, client: Any, _: dict[str, str]) -> None:
    # Its name and lifecycle; encryption, public access and the bucket policy are AWS's to enforce.
    name = physical_name(resource.logical_id, resource.properties, "BucketName", provisioned.resolver()).lower()
    s3 = client("s3")
    s3.create_bucket(Bucket=name)  # us-east-1 takes no location constraint; the local region is us-east-1
    lifecycle = _resolved(provisioned, resource.properties, "LifecycleConfiguration").get("LifecycleConfiguration")
    if lifecycle:
        s3.put_bucket_lifecycle_configuration(
            Bucket=name, LifecycleConfiguration={"Rules": [_lifecycle_rule(rule) for rule in lifecycle["Rules"]]}
        )
    provisioned.refs[resource.logical_id] = name
    provisioned.attrs[(resource.logical_id, "Arn")] = f"arn:aws:s3:::{name}"


def _lifecycle_rule(rule: dict[str, Any]) -> dict[str, Any]:
    """CloudFormation's lifecycle rule in the S3 API's words."""
    api: dict[str, Any] = {"ID": rule["Id"], "Status": rule["Status"], "Filter": {"Prefix": rule.get("Prefix", "")}}
    if "ExpirationInDays" in rule:
        api["Expiration"] = {"Days": int(rule["ExpirationInDays"])}
    if "AbortIncompleteMultipartUpload" in rule:
        days = int(rule["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"])
        api["AbortIncompleteMultipartUpload"] = {"DaysAfterInitiation": days}
    return api


# ---------------------------------------------------------------- SQS


def _create_queue(resource: Resource, provisioned: ProvisionedResources, client: Any, _: dict[str, str]) -> None:
    properties = resource.properties
    name = physical_name(resource.logical_id, properties, "QueueName", provisioned.resolver())
    spec = _resolved(provisioned, properties, *_QUEUE_ATTRIBUTES)
    if spec.get("FifoQueue") and not name.endswith(".fifo"):
        name += ".fifo"
    attributes = {key: as_text(value) for key, value in spec.items()}
    sqs = client("sqs")
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    provisioned.refs[resource.logical_id] = url
    provisioned.attrs[(resource.logical_id, "Arn")] = arn
    provisioned.attrs[(resource.logical_id, "QueueUrl")] = url
    provisioned.attrs[(resource.logical_id, "QueueName")] = name


# ---------------------------------------------------------------- Secrets Manager


def generate_secret_string(options: dict[str, Any] | None) -> str:
    """CloudFormation's GenerateSecretString (a 32-character password when the secret sets no value)."""
    options = options or {}
    alphabet = ""
    if not options.get("ExcludeLowercase"):
        alphabet += string.ascii_lowercase
    if not options.get("ExcludeUppercase"):
        alphabet += string.ascii_uppercase
    if not options.get("ExcludeNumbers"):
        alphabet += string.digits
    if not options.get("ExcludePunctuation"):
        alphabet += string.punctuation
    if options.get("IncludeSpace"):
        alphabet += " "
    excluded = set(str(options.get("ExcludeCharacters", "")))
    alphabet = "".join(ch for ch in alphabet if ch not in excluded) or string.ascii_letters
    password = "".join(random_secrets.choice(alphabet) for _ in range(int(options.get("PasswordLength", 32))))
    if "SecretStringTemplate" in options and "GenerateStringKey" in options:
        document = json.loads(options["SecretStringTemplate"])
        document[options["GenerateStringKey"]] = password
        return json.dumps(document)
    return password


def _create_secret(
    resource: Resource, provisioned: ProvisionedResources, client: Any, secret_values: dict[str, str]
) -> None:
    properties = resource.properties
    name = physical_name(resource.logical_id, properties, "Name", provisioned.resolver())
    spec = _resolved(provisioned, properties, "Description", "KmsKeyId", "SecretString", "GenerateSecretString")
    if resource.logical_id in secret_values:
        value = secret_values[resource.logical_id]
    elif "SecretString" in spec:
        value = str(spec["SecretString"])
    else:
        value = generate_secret_string(spec.get("GenerateSecretString"))
    request = {"Name": name, "SecretString": value, **_only(spec, ("Description", "KmsKeyId"))}
    arn = client("secretsmanager").create_secret(**request)["ARN"]
    provisioned.refs[resource.logical_id] = arn
    provisioned.attrs[(resource.logical_id, "Id")] = arn
    provisioned.attrs[(resource.logical_id, "Arn")] = arn


# ---------------------------------------------------------------- KMS


def _create_kms_key(resource: Resource, provisioned: ProvisionedResources, client: Any, _: dict[str, str]) -> None:
    # The key policy is left out: it names the deploying account's principals and moto does not enforce it.
    spec = _resolved(provisioned, resource.properties, "Description", "KeyUsage", "KeySpec", "EnableKeyRotation")
    kms = client("kms")
    metadata = kms.create_key(**_only(spec, ("Description", "KeyUsage", "KeySpec")))["KeyMetadata"]
    if spec.get("EnableKeyRotation"):
        kms.enable_key_rotation(KeyId=metadata["KeyId"])
    provisioned.refs[resource.logical_id] = metadata["KeyId"]
    provisioned.attrs[(resource.logical_id, "KeyId")] = metadata["KeyId"]
    provisioned.attrs[(resource.logical_id, "Arn")] = metadata["Arn"]


# ---------------------------------------------------------------- EventBridge Scheduler and IAM


def _create_schedule_group(
    resource: Resource, provisioned: ProvisionedResources, client: Any, _: dict[str, str]
) -> None:
    name = physical_name(resource.logical_id, resource.properties, "Name", provisioned.resolver())
    arn = client("scheduler").create_schedule_group(Name=name)["ScheduleGroupArn"]
    provisioned.refs[resource.logical_id] = name
    provisioned.attrs[(resource.logical_id, "Arn")] = arn


def _create_role(resource: Resource, provisioned: ProvisionedResources, client: Any, _: dict[str, str]) -> None:
    # Only its name and trust: moto does not enforce policies, and what a role may do is AWS's to check.
    name = physical_name(resource.logical_id, resource.properties, "RoleName", provisioned.resolver())
    trust = provisioned.resolver().resolve(resource.properties["AssumeRolePolicyDocument"])
    role = client("iam").create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    provisioned.refs[resource.logical_id] = name
    provisioned.attrs[(resource.logical_id, "Arn")] = role["Arn"]


def _create_kms_alias(resource: Resource, provisioned: ProvisionedResources, client: Any, _: dict[str, str]) -> None:
    spec = _resolved(provisioned, resource.properties, "AliasName", "TargetKeyId")
    client("kms").create_alias(AliasName=spec["AliasName"], TargetKeyId=spec["TargetKeyId"])
    provisioned.refs[resource.logical_id] = spec["AliasName"]
