"""What a task reports of its column lineage, whatever kind of task runs the Spark job.

Our operators, the stock Spark classes that adopt unchanged tasks and any future task type (a
decorated ``@task.pyspark`` is a ``PythonOperator``, which can inherit no Spark operator) run
Spark in their own ways, then report alike: the lineage printed in the task log, pushed to
XCom ``column_lineage``, published as asset events, and given to the OpenLineage provider.
``LineageReporter`` holds that state and does that reporting for one task run; the mixin
``ReportsLineage`` answers the OpenLineage provider's three calls from a task's reporter.
Every OpenLineage import is lazy: the provider runs without OpenLineage configured.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from airflow_lineage_provider.lineage.model import XCOM_KEY, LineageReport

if TYPE_CHECKING:
    from airflow_lineage_provider.job.dump import JobResult
    from airflow_lineage_provider.lineage.sql.static import TaskSql

log = logging.getLogger(__name__)


class LineageReporter:
    """One task run's lineage: what the job's dump says, and everything the task reports of it.

    :param sql: the task's SQL as submitted (credentials are removed here, before it is shown).
    :param static: the task's ``TaskSql`` when it runs SQL: START lineage, the fallback when no plan
        was captured, the agreement check and the schema cache. ``None`` for an application.
    """

    def __init__(self, *, sql: str | None = None, static: TaskSql | None = None) -> None:
        from airflow_lineage_provider.lineage.redact import scrub

        self.sql = scrub(sql) if isinstance(sql, str) else None
        self.static = static
        self.lineage: LineageReport | None = None
        self.error: BaseException | None = None

    # -- the run --------------------------------------------------------------------------------

    def run(self, task: Any, context: Any, job: Callable[[], JobResult]) -> None:
        """Run ``job`` (it raises on a Spark failure, which is kept for the FAIL event and re-raised),
        then report the lineage of what it dumped."""
        try:
            result = job()
        except BaseException as e:
            self.error = e
            raise
        self.report(task, context, self.extract(result))

    def extract(self, result: JobResult) -> LineageReport:
        """The job's lineage; a failure here is a warning, never a failed task."""
        try:
            return self._lineage(result)
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            log.warning("Column lineage could not be extracted: %s", e, exc_info=True)
            return LineageReport(warnings=(f"lineage extraction failed: {e}",))

    def _lineage(self, result: JobResult) -> LineageReport:
        """Lineage from the plans the job dumped. A SQL task whose job succeeded but left no plan gets
        its static lineage instead, saying why; its plan lineage is checked against the static one."""
        from airflow_lineage_provider.job.errors import CAPTURE_UNAVAILABLE
        from airflow_lineage_provider.lineage.extract import from_records
        from airflow_lineage_provider.lineage.statements import split_statements

        if self.static is not None:
            uncaptured = any(w.startswith(CAPTURE_UNAVAILABLE) for w in result.warnings)
            if not result.records and (not result.statements or uncaptured) and split_statements(self.sql or ""):
                return self.static.fallback("; ".join(result.warnings) or "the plan dump is empty")
        report = from_records(result.records, result.warnings)
        if self.static is None:
            return report
        self.static.remember(result.records)
        return self.static.agreement(report, result.records)

    def report(self, task: Any, context: Any, lineage: LineageReport) -> None:
        """Keep ``lineage`` for OpenLineage, print it, push it to XCom and publish the writes as asset
        events of the running task (``context["task"]``, else ``task``)."""
        from airflow_lineage_provider.lineage.extract import format_table
        from airflow_lineage_provider.operators import assets

        lineage = assets.with_asset_warnings(lineage)  # a URI Airflow would refuse: said in the document
        self.lineage = lineage
        log.info("Column lineage:\n%s", format_table(lineage))
        context["ti"].xcom_push(key=XCOM_KEY, value=lineage.to_dict())
        assets.publish(context.get("task") or task, context, lineage)

    # -- OpenLineage ------------------------------------------------------------------------------

    def on_start(self) -> Any:
        """SQL job facet and the SQL's static lineage (Spark has not run yet)."""
        from airflow_lineage_provider.openlineage.facets import lineage_on_start

        static = self.static.lineage() if self.static is not None and self.sql else None
        return lineage_on_start(self.sql, static)

    def on_complete(self) -> Any:
        """The lineage the run computed; never runs Spark (the OpenLineage listener allows 10 s)."""
        from airflow_lineage_provider.openlineage.facets import lineage_on_complete

        return lineage_on_complete(self.lineage, self.sql)

    def on_failure(self) -> Any:
        """SQL job facet and the error; no output column lineage, as nothing may have been written."""
        from airflow_lineage_provider.openlineage.facets import lineage_on_failure

        return lineage_on_failure(self.sql, self.error)


class ReportsLineage:
    """Answers the OpenLineage provider's listener from the task's ``lineage_reporter``.

    A mixin of our operators and of the stock classes; it adds no instance layout (``__slots__``),
    so a running stock task's class can be swapped to one that has it.
    """

    __slots__ = ()

    @property
    def lineage_reporter(self) -> LineageReporter:
        raise NotImplementedError

    @property
    def lineage(self) -> LineageReport | None:
        """The lineage the run reported (``None`` before it has)."""
        return self.lineage_reporter.lineage

    def get_openlineage_facets_on_start(self) -> Any:
        return self.lineage_reporter.on_start()

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        return self.lineage_reporter.on_complete()

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        return self.lineage_reporter.on_failure()


def openlineage_spark_conf(conf: dict[str, Any] | None, context: Any, *, parent_job: bool,
                           transport: bool) -> dict[str, Any] | None:
    """``conf`` with the task's OpenLineage parent job and transport settings added (so that
    openlineage-spark's events of the job link to this task), as ``SparkSubmitOperator`` adds them;
    ``None`` when neither is asked for or they cannot be added (a warning: lineage never breaks the job)."""
    if not (parent_job or transport):
        return None
    try:
        from airflow.providers.common.compat.openlineage.utils.spark import (
            inject_parent_job_information_into_spark_properties,
            inject_transport_information_into_spark_properties,
        )

        out = dict(conf or {})
        if parent_job:
            log.debug("Injecting OpenLineage parent job information into Spark properties.")
            out = inject_parent_job_information_into_spark_properties(out, context)
        if transport:
            log.debug("Injecting OpenLineage transport information into Spark properties.")
            out = inject_transport_information_into_spark_properties(out, context)
        return out
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.warning("OpenLineage information could not be added to the Spark conf: %s", e, exc_info=True)
        return None
