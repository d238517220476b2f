"""Operators that run Spark with ``spark-submit`` and attach the job's column lineage to the task.

``SparkSqlLineageOperator`` runs a Spark SQL script, ``SparkSubmitLineageOperator`` a PySpark
application; both stand on a private base that holds the ``spark-submit`` parameters, runs
the job, extracts its lineage and answers the OpenLineage provider.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from airflow_lineage_provider.lineage.model import XCOM_KEY, LineageReport

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.job.dump import JobResult


class _SparkLineageOperator(BaseOperator):
    """Runs a job with ``spark-submit`` under the plan capture and pushes its lineage to XCom.

    :param conn_id: Spark connection id; ``None`` for the embedded local Spark.
    :param conf: Spark configuration properties (templated).
    :param dump_uri: a directory the Spark driver writes its plan dump to and this worker reads
        back, on any Hadoop-compatible file system (``file:///shared/x``, ``hdfs://..``,
        ``s3a://..``); required in cluster deploy mode. Default: the connection's extra ``dump_uri``,
        else a local temporary directory (client mode: the driver runs on this worker).
    :param keep_dump: keep the dump directory after reading it (for debugging).
    :param openlineage_inject_parent_job_info: add the task's OpenLineage job and run ids to the
        Spark conf (``spark.openlineage.parent*``), so openlineage-spark's events of the job link to
        this task. Default: ``[openlineage] spark_inject_parent_job_info``.
    :param openlineage_inject_transport_info: add the OpenLineage HTTP transport settings to the
        Spark conf (``spark.openlineage.transport.*``). Default: ``[openlineage] spark_inject_transport_info``.
    Other keyword arguments go to ``spark-submit`` as in ``SparkSubmitOperator``.
    """

    def __init__(
        self,
        *,
        conn_id: str | None = None,
        conf: dict[str, Any] | None = None,
        files: str | None = None,
        py_files: str | None = None,
        jars: str | None = None,
        packages: str | None = None,
        driver_memory: str | None = None,
        executor_memory: str | None = None,
        executor_cores: int | None = None,
        num_executors: int | None = None,
        total_executor_cores: int | None = None,
        name: str = "airflow-lineage-{{ task_instance.task_id }}",
        env_vars: dict[str, Any] | None = None,
        deploy_mode: str | None = None,
        verbose: bool = False,
        keep_dump: bool = False,
        dump_uri: str | None = None,
        openlineage_inject_parent_job_info: bool | None = None,
        openlineage_inject_transport_info: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.conn_id = conn_id
        self.conf = conf
        self.files = files
        self.py_files = py_files
        self.jars = jars
        self.packages = packages
        self.driver_memory = driver_memory
        self.executor_memory = executor_memory
        self.executor_cores = executor_cores
        self.num_executors = num_executors
        self.total_executor_cores = total_executor_cores
        self.name = name
        self.env_vars = env_vars
        self.deploy_mode = deploy_mode
        self.verbose = verbose
        self.keep_dump = keep_dump
        self.dump_uri = dump_uri
        if openlineage_inject_parent_job_info is None:
            openlineage_inject_parent_job_info = _conf_flag("spark_inject_parent_job_info")
        if openlineage_inject_transport_info is None:
            openlineage_inject_transport_info = _conf_flag("spark_inject_transport_info")
        self.openlineage_inject_parent_job_info = openlineage_inject_parent_job_info
        self.openlineage_inject_transport_info = openlineage_inject_transport_info
        self.lineage: LineageReport | None = None
        self._hook: SparkLineageHook | None = None
        self._error: BaseException | None = None

    @property
    def hook(self) -> SparkLineageHook:
        if self._hook is None:
            from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook

            self._hook = SparkLineageHook(
                conn_id=self.conn_id, conf=self.conf, files=self.files, py_files=self.py_files,
                jars=self.jars, packages=self.packages, driver_memory=self.driver_memory,
                executor_memory=self.executor_memory, executor_cores=self.executor_cores,
                num_executors=self.num_executors, total_executor_cores=self.total_executor_cores,
                name=self.name, env_vars=self.env_vars, deploy_mode=self.deploy_mode,
                verbose=self.verbose, keep_dump=self.keep_dump, dump_uri=self.dump_uri,
            )
        return self._hook

    def execute(self, context: Context) -> Any:
        self.run_with_lineage(context)

    def run_with_lineage(self, context: Context) -> None:
        """Run the job under the capture and report its lineage: XCom, the task log, asset events.

        Also the entry of a stock Spark operator's task run by ``stock.py`` (this operator is its
        twin): not named ``execute``, which Airflow lets only the task runner call.
        """
        self._inject_openlineage_conf(context)
        try:
            result = self._run_job()  # raises on a Spark failure
        except BaseException as e:
            self._error = e  # for the OpenLineage FAIL event
            raise
        self.report_lineage(context, self._extract(result))

    def report_lineage(self, context: Context, lineage: LineageReport) -> None:
        """Keep ``lineage`` for OpenLineage, print it, push it to XCom and publish the writes as
        asset events of the running task (``context["task"]``: this task, or the stock one)."""
        self.lineage = lineage
        from airflow_lineage_provider import assets
        from airflow_lineage_provider.lineage.extract import format_table

        self.log.info("Column lineage:\n%s", format_table(lineage))
        context["ti"].xcom_push(key=XCOM_KEY, value=lineage.to_dict())
        assets.publish(context.get("task") or self, context, lineage)

    def _run_job(self) -> JobResult:
        """Run the job; raise ``SparkJobError`` with Spark's message when it fails."""
        raise NotImplementedError

    def _extract(self, result: JobResult) -> LineageReport:
        """The job's lineage; a failure here is a warning, never a failed task."""
        try:
            return self._lineage(result)
        except Exception as e:
            self.log.warning("Column lineage could not be extracted: %s", e, exc_info=True)
            return LineageReport(warnings=(f"lineage extraction failed: {e}",))

    def _lineage(self, result: JobResult) -> LineageReport:
        """Lineage from the plans the job dumped."""
        from airflow_lineage_provider.lineage.extract import from_records

        return from_records(result.records, result.warnings)

    def _sql_text(self) -> str | None:
        """The SQL as shown in events, with credentials removed; ``None`` when the job has none."""
        return None

    # -- OpenLineage ------------------------------------------------------------------
    # Called by the OpenLineage provider's listener; every OpenLineage import stays in here.

    def _inject_openlineage_conf(self, context: Context) -> None:
        """Link openlineage-spark's events to this task, as ``SparkSubmitOperator`` does."""
        if not (self.openlineage_inject_parent_job_info or self.openlineage_inject_transport_info):
            return
        try:
            from airflow.providers.common.compat.openlineage.utils.spark import (
                inject_parent_job_information_into_spark_properties,
                inject_transport_information_into_spark_properties,
            )

            conf = dict(self.conf or {})
            if self.openlineage_inject_parent_job_info:
                self.log.debug("Injecting OpenLineage parent job information into Spark properties.")
                conf = inject_parent_job_information_into_spark_properties(conf, context)
            if self.openlineage_inject_transport_info:
                self.log.debug("Injecting OpenLineage transport information into Spark properties.")
                conf = inject_transport_information_into_spark_properties(conf, context)
        except Exception as e:  # lineage never breaks the job
            self.log.warning("OpenLineage information could not be added to the Spark conf: %s", e, exc_info=True)
            return
        self.conf = conf
        if self._hook is not None:  # built early: give it the new properties too
            self._hook._conf = {**self._hook._conf, **conf}

    def get_openlineage_facets_on_start(self) -> Any:
        """The job facets; the lineage comes on completion (Spark has not run yet)."""
        from airflow_lineage_provider.openlineage.facets import lineage_on_start

        return lineage_on_start(self._sql_text(), None)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """Convert the lineage ``execute()`` computed; never runs Spark (the listener allows 10 s)."""
        from airflow_lineage_provider.openlineage.facets import lineage_on_complete

        return lineage_on_complete(self.lineage, self._sql_text())

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        """SQL job facet and the error; no output column lineage, as nothing may have been written."""
        from airflow_lineage_provider.openlineage.facets import lineage_on_failure

        return lineage_on_failure(self._sql_text(), self._error)

    def on_kill(self) -> None:
        if self._hook is not None:
            self._hook.on_kill()


class SparkSqlLineageOperator(_SparkLineageOperator):
    """Run a Spark SQL script with spark-submit and push its column lineage to XCom.

    A drop-in for ``SparkSqlOperator``/``SparkSubmitOperator``: with no ``conn_id``
    the SQL runs on an embedded local Spark; with a Spark connection, on that
    cluster. After success the task's XCom ``column_lineage`` holds the lineage
    document of every write. A failing statement fails the task with Spark's
    message, naming the statement and its line.

    :param sql: the script, many statements separated by ``;``, or a ``.sql`` file (templated).
    :param keep_going: run the remaining statements after one fails (the task still fails).
    :param lineage_schema: ``{table: {column: type}}`` of tables the script reads but does not
        create, for the static lineage of START events (and the fallback when no plan is captured).
    :param schema_cache: where the task keeps the schemas of the catalog tables its runs read and
        wrote, so the next run's static lineage knows them before Spark runs: a JSON file path,
        ``True`` (default) for ``$AIRFLOW_HOME/lineage/schema_cache/<dag_id>/<task_id>.json``,
        ``False`` for none. It sits on the worker's disk: point it at shared storage when tasks
        move between workers.
    Every other parameter is the ``spark-submit`` one of ``SparkSubmitOperator`` (``conn_id``,
    ``conf``, ``py_files``, ``deploy_mode``, ``dump_uri``, ...), described on ``_SparkLineageOperator``.

    OpenLineage: with the OpenLineage provider configured, the task's START event carries the
    SQL and its static lineage, its COMPLETE event the column lineage of every written table (see
    ``openlineage/facets.py``), its FAIL event the SQL and the error. Without the provider the
    operator runs all the same.
    """

    template_fields: Sequence[str] = ("sql", "conf", "name", "env_vars", "dump_uri")
    template_ext: Sequence[str] = (".sql", ".hql")
    template_fields_renderers = {"sql": "sql", "conf": "json"}
    ui_color = "#e8c3a0"

    def __init__(
        self,
        *,
        sql: str,
        keep_going: bool = False,
        lineage_schema: dict[str, Any] | None = None,
        schema_cache: str | bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.keep_going = keep_going
        self.lineage_schema = lineage_schema
        self.schema_cache = schema_cache

    def _run_job(self) -> JobResult:
        from airflow_lineage_provider.job.dump import JobResult
        from airflow_lineage_provider.lineage.statements import split_statements

        if not split_statements(self.sql or ""):
            # Nothing to run: Spark is not started for nothing, and the document says why it is empty.
            message = "the SQL has no statement (it is empty or holds only comments): Spark was not started"
            self.log.warning("%s", message[0].upper() + message[1:])
            return JobResult(warnings=[message])
        return self.hook.run_sql(self.sql, keep_going=self.keep_going)

    def _lineage(self, result: JobResult) -> LineageReport:
        """Lineage from the dump, and the schemas it saw into the cache.

        With no plan dump at all (the job succeeded but left none), the static lineage of
        the SQL stands in, with a warning saying why.
        """
        from airflow_lineage_provider.job.errors import CAPTURE_UNAVAILABLE
        from airflow_lineage_provider.lineage.statements import split_statements

        uncaptured = any(w.startswith(CAPTURE_UNAVAILABLE) for w in result.warnings)
        if not result.records and (not result.statements or uncaptured) and split_statements(self._sql_text() or ""):
            why = "; ".join(result.warnings) or "the plan dump is empty"
            fallback = self._static_lineage()
            return fallback.with_warning(f"no plan was captured ({why}): static lineage from the SQL text")
        report = super()._lineage(result)
        self._remember_schemas(result.records)
        return self._agreement(report, result)

    def _agreement(self, report: LineageReport, result: JobResult) -> LineageReport:
        """Each plan statement checked against the static lineage of the same SQL (a few milliseconds
        a statement): where the two differ is the first place to look when lineage looks wrong."""
        from airflow_lineage_provider.lineage.extract import with_static_agreement

        try:
            cache = self._cache()
        except Exception:  # noqa: BLE001 - an unreadable cache only costs schema knowledge
            cache = None
        return with_static_agreement(report, self._sql_text() or "", result.records, schema=self.lineage_schema,
                                     cache=cache)

    def _cache(self) -> Any:
        """The task's schema cache, or ``None`` when switched off."""
        if self.schema_cache is False:
            return None
        from airflow_lineage_provider.lineage.schema_cache import SchemaCache

        path = self.schema_cache if isinstance(self.schema_cache, str) else default_schema_cache(self.dag_id,
                                                                                                 self.task_id)
        return SchemaCache(path)

    def _remember_schemas(self, records: list[dict[str, Any]]) -> None:
        try:
            cache = self._cache()
            if cache is not None and records:
                from airflow_lineage_provider.lineage.extract import remember_schemas

                os.makedirs(os.path.dirname(os.path.abspath(cache.path)), exist_ok=True)
                remember_schemas(cache, records)
        except Exception as e:  # lineage never breaks the job
            self.log.warning("The schema cache could not be written: %s", e, exc_info=True)

    def _static_lineage(self) -> LineageReport:
        from airflow_lineage_provider.lineage.extract import static

        try:
            cache = self._cache()
        except Exception as e:  # noqa: BLE001 - an unreadable cache only costs schema knowledge
            self.log.warning("The schema cache could not be read: %s", e)
            cache = None
        warehouse = None
        if self.conn_id is None:  # the embedded Spark: its warehouse names the catalog tables
            from airflow_lineage_provider import local_spark

            warehouse = local_spark.warehouse()
        return static(self._sql_text() or "", schema=self.lineage_schema, warehouse=warehouse, cache=cache)

    def _sql_text(self) -> str | None:
        """The SQL as shown in events: credentials (JDBC passwords in OPTIONS or URLs) removed."""
        from airflow_lineage_provider.lineage.redact import scrub

        return scrub(self.sql) if isinstance(self.sql, str) else None

    def get_openlineage_facets_on_start(self) -> Any:
        """SQL job facet and the static lineage of the SQL text (Spark has not run yet)."""
        from airflow_lineage_provider.openlineage.facets import lineage_on_start

        sql = self._sql_text()
        return lineage_on_start(sql, self._static_lineage() if sql else None)


class SparkSubmitLineageOperator(_SparkLineageOperator):
    """Run your own PySpark application with spark-submit and push its column lineage to XCom.

    A drop-in for ``SparkSubmitOperator`` for Python applications: the script runs unchanged
    under the provider's driver, which installs the capture before the script's first line.
    Its ``SparkSession.builder.getOrCreate()`` gets the driver's session, so every write it
    makes (``saveAsTable``, ``insertInto``, ``write.parquet(path)``, ``write.jdbc``,
    ``writeTo(...)``, SQL inserts, streaming queries) is captured, each once, through temp
    views and cached DataFrames. An exception in the script fails the task with the script's
    own error message; no lineage is pushed then.

    :param application: the PySpark script (a local path, or a URI the driver can read) (templated).
    :param application_args: its arguments (``sys.argv[1:]`` in the script) (templated).
    Every other parameter is the ``spark-submit`` one of ``SparkSubmitOperator`` (``conn_id``,
    ``conf``, ``py_files``, ``files``, ``jars``, ``packages``, ``deploy_mode``, ``dump_uri``, ...),
    described on ``_SparkLineageOperator``.
    """

    template_fields: Sequence[str] = ("application", "application_args", "conf", "files", "py_files", "jars",
                                      "packages", "name", "env_vars", "dump_uri")
    template_fields_renderers = {"conf": "json", "application_args": "json"}
    ui_color = "#e8d3a0"

    def __init__(self, *, application: str, application_args: list[Any] | None = None, **kwargs: Any) -> None:
        for sql_only in ("sql", "keep_going", "lineage_schema", "schema_cache"):
            if sql_only in kwargs:  # a task moved over from the SQL operator: say why, not just "invalid"
                raise TypeError(f"SparkSubmitLineageOperator takes no {sql_only!r}: it runs a PySpark application")
        super().__init__(**kwargs)
        self.application = application
        self.application_args = application_args

    def _run_job(self) -> JobResult:
        return self.hook.run_application(self.application, self.application_args)


def default_schema_cache(dag_id: str, task_id: str) -> str:
    """``$AIRFLOW_HOME/lineage/schema_cache/<dag_id>/<task_id>.json``: one cache per task."""
    home = os.environ.get("AIRFLOW_HOME") or os.path.expanduser("~/airflow")
    return os.path.join(home, "lineage", "schema_cache", dag_id, f"{task_id}.json")


def _conf_flag(key: str) -> bool:
    """``[openlineage] key`` as a boolean, False when unset (the Spark provider's defaults)."""
    from airflow.sdk import conf

    return conf.getboolean("openlineage", key, fallback=False)
