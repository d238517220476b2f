"""A task's static lineage in one place: its schema cache, START lineage, fallback and agreement.

Every caller that has a task's SQL (our SQL operator, a stock ``SparkSqlOperator``, the CLI)
asks the same four questions of it: what does the SQL say before Spark runs (START events),
what stands in when no plan was captured, does each plan statement agree with the SQL, and
which schemas should the next run know. ``TaskSql`` answers them; nothing here raises, as
lineage never breaks the job.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import Any, Iterable

from airflow_lineage_provider.lineage import naming
from airflow_lineage_provider.lineage.model import SPARK_CATALOG, Dataset, LineageReport
from airflow_lineage_provider.lineage.plan.digest import digest
from airflow_lineage_provider.lineage.plan.lean import unpack_columns
from airflow_lineage_provider.lineage.schema_cache import SchemaCache

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskSql:
    """One task's SQL and what its static lineage needs.

    ``schema``: ``{table: {column: type}}`` of tables it reads and does not create. ``cache_path``:
    the task's schema cache (``None``: no cache). ``warehouse``: where the Spark that runs it keeps
    managed tables, when known (the embedded Spark's), so catalog tables get the dataset names the
    plan extractor gives them.
    """

    sql: str
    schema: Any = None
    cache_path: str | None = None
    warehouse: str | None = None

    def cache(self) -> SchemaCache | None:
        """The task's schema cache; ``None`` when there is none or it cannot be read."""
        if self.cache_path is None:
            return None
        try:
            return SchemaCache(self.cache_path)
        except Exception as e:  # noqa: BLE001 - an unreadable cache only costs schema knowledge
            log.warning("The schema cache could not be read: %s", e)
            return None

    def lineage(self) -> LineageReport:
        """The lineage the SQL text gives before Spark runs (START events)."""
        return static(self.sql, schema=self.schema, warehouse=self.warehouse, cache=self.cache())

    def fallback(self, why: str) -> LineageReport:
        """The SQL's lineage standing in for a run whose plans were not captured, saying why."""
        return self.lineage().with_warning(f"no plan was captured ({why}): static lineage from the SQL text")

    def agreement(self, report: LineageReport, records: Iterable[dict[str, Any]]) -> LineageReport:
        """Each plan statement checked against the static lineage of the same SQL (a few milliseconds a
        statement): where the two differ is the first place to look when lineage looks wrong."""
        return with_static_agreement(report, self.sql, records, schema=self.schema, cache=self.cache())

    def remember(self, records: list[dict[str, Any]]) -> None:
        """Keep the schemas the run's plans saw, for the next run's START lineage."""
        try:
            cache = self.cache()
            if cache is not None and records:
                os.makedirs(os.path.dirname(os.path.abspath(cache.path or "")), exist_ok=True)
                remember_schemas(cache, records)
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            log.warning("The schema cache could not be written: %s", e, exc_info=True)


def default_cache_path(dag_id: str, task_id: str) -> str:
    """``$AIRFLOW_HOME/lineage/schema_cache/<dag_id>/<task_id>.json``: one cache per task."""
    home = os.environ.get("AIRFLOW_HOME") or os.path.expanduser("~/airflow")
    return os.path.join(home, "lineage", "schema_cache", dag_id, f"{task_id}.json")


def static(sql: str, *, schema: Any = None, warehouse: str | None = None, cache: Any = None) -> LineageReport:
    """Lineage from the SQL text alone (no JVM): for START events and when no plan was captured.

    ``cache``: a ``SchemaCache`` of the tables earlier runs saw. ``warehouse``: the directory
    where the Spark that runs the SQL keeps its managed tables, when known (the embedded
    Spark's): catalog tables then get the same dataset names as the plan extractor gives
    them; elsewhere they keep catalog names.
    """
    from airflow_lineage_provider.lineage.sql.extractor import SqlExtractor

    try:
        report = SqlExtractor(schema=schema, cache=cache).run(sql)
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.warning("static lineage failed: %s: %s", e.__class__.__name__, e)  # one line; the trace at debug
        log.debug("static lineage failed", exc_info=True)
        return LineageReport(warnings=(f"static lineage failed: {e.__class__.__name__}: {e}",))
    if warehouse is None:
        return report

    def locate(d: Dataset | None) -> Dataset | None:
        if d is None or not d.table or d.namespace != SPARK_CATALOG:
            return d
        return naming.from_location(naming.warehouse_location(d.table, warehouse), table=d.table, mode=d.mode)

    return LineageReport(
        statements=tuple(replace(s, target=locate(s.target), inputs=tuple(locate(d) for d in s.inputs))
                         for s in report.statements),
        warnings=report.warnings,
    )


def with_static_agreement(report: LineageReport, sql: str, records: Iterable[dict[str, Any]] = (), *,
                          schema: Any = None, cache: Any = None, warehouse: str | None = None) -> LineageReport:
    """The plan ``report`` with each statement's agreement with the static lineage of its script
    (``lineage/agreement.py``). The static extractor is told every table the plans saw, with its
    columns, as a run's next START lineage would be. Never raises: a failure is a report warning."""
    from airflow_lineage_provider.lineage.agreement import with_agreement

    try:
        return with_agreement(report, static_as_seen(sql, records, schema=schema, cache=cache, warehouse=warehouse))
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.warning("the agreement check failed: %s: %s", e.__class__.__name__, e)  # one line; the trace at debug
        log.debug("the agreement check failed", exc_info=True)
        return report.with_warning(f"the static agreement check failed: {e.__class__.__name__}: {e}")


def static_as_seen(sql: str, records: Iterable[dict[str, Any]] = (), *, schema: Any = None, cache: Any = None,
                   warehouse: str | None = None) -> LineageReport:
    """The static lineage of ``sql`` told every table the plans of ``records`` saw, with its columns
    (and those of ``cache``): what the agreement compares the plans with."""
    seen = SchemaCache(None)
    if cache is not None:
        for table in cache.tables():
            seen.put(table, cache.get(table) or [])
    for record in records:
        for table, columns in (record.get("schemas") or {}).items():
            seen.put(table, unpack_columns(columns))
    return static(sql, schema=schema, warehouse=warehouse, cache=seen)


def remember_schemas(cache: SchemaCache, records: list[dict[str, Any]]) -> int:
    """Put the catalog tables a run's plans read and wrote into ``cache`` and save it; how many."""
    count = 0
    for record in records:
        for table, columns in (digest(record).get("schemas") or {}).items():
            cache.put(table, unpack_columns(columns))
            count += 1
    if count:
        cache.save()
    return count
