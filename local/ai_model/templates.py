"""The local model's answer to the template worker: `TemplateBatch`, written by `local.template_writer`.

The worker's prompt ends with one JSON line naming the job, the chunk, how many templates, their kinds and the
names to avoid; the same line always gets the same templates.
"""

from __future__ import annotations

import json
from typing import Any

from local.ai_model.responders import Request, responder
from local.template_writer import write_templates


@responder("TemplateBatch")
def template_batch(request: Request) -> dict[str, Any]:
    task: dict[str, Any] = {}
    for line in reversed(request.last_text().splitlines()):
        if line.startswith("{"):
            try:
                task = json.loads(line)
            except ValueError:
                continue
            break
    templates = write_templates(
        str(task.get("job_id", "local")),
        str(task.get("chunk_id", "0")),
        int(task.get("count") or 5),
        [str(kind) for kind in task.get("kinds") or []],
        [str(name) for name in task.get("avoid_names") or []],
    )
    return {"templates": templates}
