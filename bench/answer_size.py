"""The byte size of a 500-channel configuration in an answer, with its null fields and without them (as answers
give it now): what a client downloads for an export, an import, an AI turn or a deployment code."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from bench.quick import scaled

ROOT = Path(__file__).resolve().parents[1]


def run() -> None:
    sys.path[:0] = [str(ROOT / "shared")]
    from pydantic import TypeAdapter

    from local.samples import large_community
    from svcconf.config import ServerConfig
    from svcconf.deployments.export_import import ExportAnswer

    channels = scaled(490, 40)  # and 10 categories: 500 channels as the platform counts them
    config = ServerConfig.model_validate(large_community(roles=40, categories=10, channels=channels))
    with_nulls = json.dumps({"status": "exported", "config": config.model_dump(mode="json"), "warnings": []})
    answer = ExportAnswer(status="exported", config=config, warnings=[])
    without = TypeAdapter(ExportAnswer).dump_json(answer).decode()
    print(f"\nAn export's answer of 40 roles, 10 categories and {channels} channels (JSON, compact separators)")
    print(f"  {'':<24} {'bytes':>9} {'gzip':>8}")
    for label, text in (("with null fields", with_nulls), ("null fields left out", without)):
        compact = json.dumps(json.loads(text), separators=(",", ":")).encode()
        print(f"  {label:<24} {len(compact):>9,} {len(gzip.compress(compact)):>8,}")
