"""The dump a job leaves for the hook: one place that writes and reads its format.

``plans.jsonl`` holds one record per captured write (or bare query), a JSON
object a line: the raw record of ``lineage/plan/record.py`` (Spark's own ``"plan"``
JSON and its ``"extras"``), which the driver digests into the lean plan of
``lineage/plan/lean.py`` (the raw one stays when the digest fails; the extractor
reads both). ``result.json`` holds the run's
outcome, a ``JobResult`` without its records: each statement's status, and the
error that stopped the job. The runners write a ``JobResult`` and the hook reads
one back: no other code spells the file's keys. Standard library only: the
driver imports this inside Spark.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Iterable

from airflow_lineage_provider.lineage.plan.record import release_warning

PLANS = "plans.jsonl"
RESULT = "result.json"
SCRIPT = "script.sql"


@dataclass
class JobResult:
    """A job's outcome: what the runners write when they finish and the hook reads back.

    ``statements``: each statement's ``index``, ``line``, ``first_line`` and ``status`` (``ok``,
    ``failed`` with its ``error``, ``skipped``); ``error``: the first error, which fails the
    task; ``errors``: all of them (``keep_going``). ``application`` and ``writes`` are set for a
    PySpark application, ``elapsed_s`` when the script ran to its end; ``barrier`` by the JVM listener on a
    Spark Connect server, the value of the client's ``SET spark.airflow.lineage.flush`` it was written for.
    """

    records: list[dict[str, Any]] = field(default_factory=list)
    statements: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    spark_version: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    dry_run: bool = False
    elapsed_s: float | None = None
    application: str | None = None
    writes: int | None = None
    barrier: str | None = None  # Spark Connect: the client's flush token this result answers

    @property
    def failed(self) -> bool:
        return self.error is not None or any(s.get("status") == "failed" for s in self.statements)

    def outcome(self) -> dict[str, Any]:
        """What ``result.json`` holds: everything but the records (those are ``plans.jsonl``)."""
        out = asdict(self)
        del out["records"]
        return {k: v for k, v in out.items() if v is not None or k in _ALWAYS}

    @classmethod
    def read(cls, raw: dict[str, Any], records: list[dict[str, Any]], warnings: list[str]) -> JobResult:
        """The outcome in ``raw`` (``result.json``), with the records and the reader's own warnings."""
        known = {f.name for f in fields(cls)} - {"records", "warnings"}
        # A release the readers were never tested on: its plans may name a node or field otherwise (never silent).
        release = release_warning(raw.get("spark_version")) if records else None
        return cls(records=records, warnings=[*warnings, *(raw.get("warnings") or []), *([release] if release else [])],
                   **{k: v for k, v in raw.items() if k in known})


_ALWAYS = frozenset({"error", "spark_version"})  # written even when null: "no error", "no Spark"


class DumpWriter:
    """Appends records as they are captured, so a crash keeps what came before.

    With ``files`` (a ``HadoopFiles`` of a ``dump_uri``) the records are written through
    Spark's Hadoop FileSystem API when the job finishes: object stores cannot append.
    """

    def __init__(self, directory: str, files: HadoopFiles | None = None) -> None:
        self.directory = directory
        self._files = files
        self._buffer: list[str] = []
        if files is None:
            os.makedirs(directory, exist_ok=True)
            self._plans = open(os.path.join(directory, PLANS), "a", encoding="utf-8")

    def record(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":")) + "\n"
        if self._files is not None:
            self._buffer.append(line)
            return
        self._plans.write(line)
        self._plans.flush()

    def close(self) -> None:
        """Give up without a result (the caller's run failed; its directory is removed)."""
        if self._files is None and not self._plans.closed:
            self._plans.close()

    def finish(self, result: JobResult) -> None:
        outcome = json.dumps(result.outcome())
        if self._files is not None:
            self._files.write_text(PLANS, "".join(self._buffer))
            self._files.write_text(RESULT, outcome)  # last: its presence means "finished"
            return
        self._plans.close()
        tmp = os.path.join(self.directory, RESULT + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(outcome)
        os.replace(tmp, os.path.join(self.directory, RESULT))


def read_records(lines: Iterable[str],
                 loads: Callable[[str], Any] = json.loads) -> tuple[list[dict[str, Any]], list[str]]:
    """The records of ``plans.jsonl``'s ``lines``, and a warning for each line that is no JSON."""
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(loads(line))
        except ValueError as e:  # json's and orjson's decode errors are both ValueErrors
            warnings.append(f"plan dump line {n} unreadable: {e}")
    return records, warnings


def read_dump(directory: str, loads: Callable[[str], Any] = json.loads) -> JobResult:
    """Read a dump back. A missing or torn file gives warnings, never an exception. ``loads``: the
    JSON parser of the reader (the hook passes a faster one than this module may import)."""
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    plans = os.path.join(directory, PLANS)
    if os.path.exists(plans):
        with open(plans, encoding="utf-8") as f:
            records, warnings = read_records(f, loads)
    else:
        warnings.append(f"no plan dump at {plans}")
    path = os.path.join(directory, RESULT)
    if not os.path.exists(path):
        warnings.append("the job left no result file (it was killed or crashed before the end)")
        return JobResult(records=records, warnings=warnings)
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        warnings.append(f"job result unreadable: {e}")
        return JobResult(records=records, warnings=warnings)
    return JobResult.read(raw, records, warnings)


# -- dump_uri: a location on any Hadoop-compatible file system ---------------------------------

class HadoopFiles:
    """Files under one directory URI, read and written by the Spark driver through Hadoop's
    ``FileSystem`` API, so a dump reaches any file system the cluster can write."""

    def __init__(self, spark: Any, uri: str) -> None:
        self.uri = uri.rstrip("/")
        self._jvm = spark.sparkContext._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()
        self._base = self._jvm.org.apache.hadoop.fs.Path(self.uri)
        self._fs = self._base.getFileSystem(self._conf)

    def path(self, name: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(self._base, name)

    def write_text(self, name: str, text: str) -> None:
        self._fs.mkdirs(self._base)
        out = self._fs.create(self.path(name), True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()

    def read_text(self, name: str) -> str:
        return self.read_uri(self.path(name).toString())

    def read_uri(self, uri: str) -> str:
        path = self._jvm.org.apache.hadoop.fs.Path(uri)
        fs = path.getFileSystem(self._conf)
        stream = fs.open(path)
        try:
            data = self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream)
        finally:
            stream.close()
        return bytes(data).decode("utf-8")
