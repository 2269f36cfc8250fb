"""template.yaml's tables, queues, buckets, secrets, KMS keys, schedule groups and roles created in moto.

Provisioning does what CloudFormation would, in-process under `moto.mock_aws()` (endpoint_url None) or
against a moto server (endpoint_url). Properties come from the template and are resolved with the same
intrinsic resolver as the functions' environment, so the local resources cannot drift from the deployed ones.
"""

from __future__ import annotations

import functools
import json
import secrets as random_secrets
import string
from typing import TYPE_CHECKING, Any

import boto3

from local.aws import LOCAL_CREDENTIALS, ProvisionedResources, Service
from local.intrinsics import IntrinsicResolver, as_text, referenced_logical_ids
from local.resources import Resource, resources_of_type
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
)

if TYPE_CHECKING:
    from local.template import Template

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

    def client(service: Service) -> Any:
        return _client(service, endpoint_url, region)

    resources = [resource for resource_type in creators for resource in resources_of_type(tpl, resource_type)]
    for resource in _in_dependency_order(resources):
        creators[resource.type](resource, provisioned, client, secret_values or {})
    return provisioned


@functools.cache
def _client(service: Service, endpoint_url: str | None, region: str) -> Any:
    """One client a service, endpoint and region, kept from provisioning to provisioning: the tests provision the
    template in moto once a test, and making the seven clients again was an eighth of an integration test's CPU."""
    options: dict[str, Any] = {"region_name": region}
    if endpoint_url:
        options |= {"endpoint_url": endpoint_url, **LOCAL_CREDENTIALS}
    return boto3.client(service, **options)


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
