"""The one Logger and Metrics of a function, configured by POWERTOOLS_* variables, and what the process sets up once
for its runtime: the SDK's log level, and the SnapStart restore hook.

No Tracer: the X-Ray SDK it needs is in maintenance (end of support February 2027) and costs init time; Lambda's
active tracing (`Tracing: Active` in template.yaml) still records every invocation.

Lambda SnapStart (template.yaml `SnapStart`; docs/11-production.md, SnapStart): a function's init runs once, when
a version is published, and every cold start of that version resumes a snapshot of it. So init captures only what
is the same in every environment and does not age: imports, models, the settings read from the environment. It
makes no AWS or outside call: no connection, no secret, no token, no clock reading kept (clients, secrets and
caches are made at first use, in an invocation). What Python seeds once per process is seeded again after a
restore: `random`'s state, which the retries' jitter uses, so that the environments resumed from one snapshot do
not retry in step. `snapshot_restore_py` is the Lambda runtime's own module (Python 3.12 and later); elsewhere
(tests, `make run`) nothing is restored and nothing is registered.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

from aws_lambda_powertools import Logger, Metrics

try:
    from snapshot_restore_py import register_after_restore  # type: ignore[import-not-found]
except ImportError:  # not in a Lambda runtime
    register_after_restore = None

logger = Logger()
metrics = Metrics()

# At DEBUG the AWS SDK logs whole response bodies, Secrets Manager's secret values among them. Lambda sets
# the root logger to the function's ApplicationLogLevel, so a DEBUG deployment would log every secret:
# the SDK's loggers stay at INFO whatever the root level is.
for _sdk in ("boto3", "botocore"):
    logging.getLogger(_sdk).setLevel(logging.INFO)


def after_restore() -> None:
    """Runs in each environment resumed from the snapshot, before its first invocation."""
    random.seed()  # from os.urandom: each environment its own sequence


def register_restore_hook(hook: Callable[[Callable[[], None]], object] | None = register_after_restore) -> bool:
    """Registers `after_restore` with the runtime's hook; False where there is none (not in Lambda)."""
    if hook is None:
        return False
    hook(after_restore)
    return True


register_restore_hook()
