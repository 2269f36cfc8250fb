"""The one Logger, Tracer and Metrics of a function; configured by POWERTOOLS_* variables."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()
tracer = Tracer()
metrics = Metrics()
