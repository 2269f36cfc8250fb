"""JSON documents kept beside a DynamoDB item: compressed inside it when they fit, in the documents bucket when not.

A deployment's configuration, a deployment code's and a deployment snapshot may each be close to a MiB of JSON
(the request body's limit) and compress badly when their text is long and varied; a DynamoDB item holds 400 KB
with everything else it carries. So a document whose compressed form passes `INLINE_LIMIT_BYTES` goes to S3 under
a key its owner names, and the item keeps a small reference: `{"s3_key": ..., "stored_bytes": ...}`. The
attribute's form tells which: binary is the compressed document itself (what items always held before).
"""

from __future__ import annotations

from typing import Any

from svcconf.settings import get_settings
from svcconf.store import blobs
from svcconf.store.dynamo import s3

# What a compressed document may take of its item: the rest is room for the item's journal and counts.
INLINE_LIMIT_BYTES = 96 * 1024


def is_external(attribute: Any) -> bool:
    return isinstance(attribute, dict) and "s3_key" in attribute


def stored(document: Any, s3_key: str) -> Any:
    """The attribute that keeps `document`: its compressed bytes, or a reference to the object written at `s3_key`."""
    blob = blobs.pack(blobs.json_bytes(document))
    if len(blob) <= INLINE_LIMIT_BYTES:
        return blob
    s3().put_object(Bucket=_bucket(), Key=s3_key, Body=blob, ContentType="application/json", ContentEncoding="bzip2")
    return {"s3_key": s3_key, "stored_bytes": len(blob)}


def loaded(attribute: Any) -> Any:
    """The document an attribute of `stored` keeps."""
    if is_external(attribute):
        body = s3().get_object(Bucket=_bucket(), Key=attribute["s3_key"])["Body"].read()
        return blobs.unpack(body)
    return blobs.unpack(attribute)


def stored_bytes(attribute: Any) -> int:
    if is_external(attribute):
        return int(attribute["stored_bytes"])
    return len(attribute.value if hasattr(attribute, "value") else attribute)


def forget(attributes: list[Any]) -> None:
    """Deletes the bucket's objects behind these attributes (inline ones have none)."""
    keys = [attribute["s3_key"] for attribute in attributes if is_external(attribute)]
    for start in range(0, len(keys), 1000):  # DeleteObjects takes at most 1000 keys
        chunk = [{"Key": key} for key in keys[start : start + 1000]]
        s3().delete_objects(Bucket=_bucket(), Delete={"Objects": chunk, "Quiet": True})


def _bucket() -> str:
    bucket = get_settings().documents_bucket
    if not bucket:
        raise RuntimeError("DOCUMENTS_BUCKET_NAME is not set: large documents have nowhere to go")
    return bucket
