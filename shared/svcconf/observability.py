"""The one Logger and Metrics of a function; configured by POWERTOOLS_* variables.

No Tracer: the X-Ray SDK it needs is in maintenance (end of support February 2027) and costs init time; Lambda's
active tracing (`Tracing: Active` in template.yaml) still records every invocation.
"""

from __future__ import annotations

import logging

from aws_lambda_powertools import Logger, Metrics

from svcconf import snapstart  # noqa: F401 - registers the SnapStart restore hook (docs/11-production.md)

logger = Logger()
metrics = Metrics()

# At DEBUG the AWS SDK logs whole response bodies, Secrets Manager's secret values among them. Lambda sets
# the root logger to the function's ApplicationLogLevel, so a DEBUG deployment would log every secret:
# the SDK's loggers stay at INFO whatever the root level is.
for _sdk in ("boto3", "botocore"):
    logging.getLogger(_sdk).setLevel(logging.INFO)
