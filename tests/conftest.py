"""Shared test setup. moto is imported before anything builds a boto3 client, so every client is mocked."""

from __future__ import annotations

import os

import moto  # noqa: F401 - must come first: clients built before this import would reach real AWS

# A test run never reaches AWS or a configured developer account.
for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
    os.environ.pop(name, None)
os.environ.update(
    AWS_ACCESS_KEY_ID="testing",
    AWS_SECRET_ACCESS_KEY="testing",
    AWS_DEFAULT_REGION="us-east-1",
    POWERTOOLS_SERVICE_NAME="server-config-tests",
    POWERTOOLS_METRICS_NAMESPACE="ServerConfigTests",
    POWERTOOLS_TRACE_DISABLED="true",
    POWERTOOLS_LOG_LEVEL="INFO",
)

# The fake AI provider (the local model over loopback HTTP) for every test that asks for it.
from tests.ai_helpers import fake_provider, local_model_server  # noqa: E402, F401
