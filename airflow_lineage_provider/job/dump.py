"""The dump a job leaves for the hook: one place that writes and reads its format.

``plans.jsonl`` holds one record per captured write (or bare query):
``{"index", "sql", "line", "kind", ...}`` with the lean plan of
``lineage/digest.py`` (or Spark's own ``"plan"`` JSON and ``"extras"`` when the
digest failed; the extractor reads both). ``result.json`` holds the
run's outcome: each statement's status, and the error that stopped the job.
Standard library only: the driver imports this inside Spark.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

PLANS = "plans.jsonl"
RESULT = "result.json"
SCRIPT = "script.sql"


@dataclass
class JobResult:
    """What the hook reads back from a finished (or failed) job."""

    records: list[dict[str, Any]] = field(default_factory=list)
    statements: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    spark_version: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None or any(s.get("status") == "failed" for s in self.statements)


class DumpWriter:
    """Appends records as they are captured, so a crash keeps what came before."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self._plans = open(os.path.join(directory, PLANS), "a", encoding="utf-8")

    def record(self, record: dict[str, Any]) -> None:
        self._plans.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._plans.flush()

    def finish(self, result: dict[str, Any]) -> None:
        self._plans.close()
        tmp = os.path.join(self.directory, RESULT + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f)
        os.replace(tmp, os.path.join(self.directory, RESULT))


def read_dump(directory: str) -> JobResult:
    """Read a dump back. A missing or torn file gives warnings, never an exception."""
    result = JobResult()
    plans = os.path.join(directory, PLANS)
    if os.path.exists(plans):
        with open(plans, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    result.records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    result.warnings.append(f"plan dump line {n} unreadable: {e}")
    else:
        result.warnings.append(f"no plan dump at {plans}")
    path = os.path.join(directory, RESULT)
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                raw = json.load(f)
            result.statements = raw.get("statements", [])
            result.error = raw.get("error")
            result.warnings.extend(raw.get("warnings", []))
            result.spark_version = raw.get("spark_version")
        except (OSError, json.JSONDecodeError) as e:
            result.warnings.append(f"job result unreadable: {e}")
    else:
        result.warnings.append("the job left no result file (it was killed or crashed before the end)")
    return result
