"""Operators that run Spark with ``spark-submit`` and attach the job's column lineage to the task.

``SparkSqlLineageOperator`` runs a Spark SQL script, ``SparkSubmitLineageOperator`` an application
(PySpark, or a JVM application's jar); both stand on a private base that holds the ``spark-submit`` parameters and runs
the job. What they report, and how they answer the OpenLineage provider, is the reporting
piece's (``operators/reporting.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from airflow_lineage_provider import conf as provider_conf
from airflow_lineage_provider.operators.reporting import LineageReporter, ReportsLineage, openlineage_spark_conf

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.job.dump import JobResult
    from airflow_lineage_provider.lineage.sql.static import TaskSql


class _SparkLineageOperator(ReportsLineage, BaseOperator):
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
        default_parent, default_transport = provider_conf.openlineage_spark_injection()
        self.openlineage_inject_parent_job_info = (default_parent if openlineage_inject_parent_job_info is None
                                                   else openlineage_inject_parent_job_info)
        self.openlineage_inject_transport_info = (default_transport if openlineage_inject_transport_info is None
                                                  else openlineage_inject_transport_info)
        self._hook: SparkLineageHook | None = None
        self._reporter: LineageReporter | None = None

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
                **self._hook_arguments(),
            )
        return self._hook

    def _hook_arguments(self) -> dict[str, Any]:
        """``SparkSubmitHook`` arguments of one operator alone."""
        return {}

    @property
    def lineage_reporter(self) -> LineageReporter:
        """Built on first use, after Airflow rendered the templates: it holds the rendered SQL."""
        if self._reporter is None:
            self._reporter = LineageReporter(sql=self._sql(), static=self._task_sql())
        return self._reporter

    def render_template_fields(self, context: Context, jinja_env: Any = None) -> None:
        super().render_template_fields(context, jinja_env)
        # Airflow keeps the rendered fields (the UI's Rendered Template) as soon as they are rendered: the
        # credentials they hold go to its masker first.
        from airflow_lineage_provider.hooks.spark_lineage import mask_task_secrets

        mask_task_secrets(sql=self._sql(), conf=self.conf if isinstance(self.conf, dict) else None,
                          command=self._arguments())

    def _arguments(self) -> list[Any]:
        """The job's command-line arguments, when it has them."""
        return []

    def execute(self, context: Context) -> Any:
        injected = openlineage_spark_conf(self.conf, context, parent_job=self.openlineage_inject_parent_job_info,
                                          transport=self.openlineage_inject_transport_info)
        if injected is not None:
            self.conf = injected
            if self._hook is not None:  # built early: give it the new properties too
                self._hook.add_conf(injected)
        self.lineage_reporter.run(self, context, self._run_job)

    def _run_job(self) -> JobResult:
        """Run the job; raise ``SparkJobError`` with Spark's message when it fails."""
        raise NotImplementedError

    def _sql(self) -> str | None:
        """The SQL the job runs, when it has one."""
        return None

    def _task_sql(self) -> TaskSql | None:
        """The static lineage of the task's SQL, when it has one."""
        return None

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

    def _sql(self) -> str | None:
        return self.sql if isinstance(self.sql, str) else None

    def _task_sql(self) -> TaskSql | None:
        from airflow_lineage_provider.lineage.sql.static import TaskSql, default_cache_path

        if self.schema_cache is False:
            cache_path = None
        elif isinstance(self.schema_cache, str):
            cache_path = self.schema_cache
        else:
            cache_path = default_cache_path(self.dag_id, self.task_id)
        warehouse = None
        if self.conn_id is None:  # the embedded Spark: its warehouse names the catalog tables
            from airflow_lineage_provider.hooks import local_spark

            warehouse = local_spark.warehouse()
        return TaskSql(self._sql() or "", schema=self.lineage_schema, cache_path=cache_path, warehouse=warehouse)


class SparkSubmitLineageOperator(_SparkLineageOperator):
    """Run your own Spark application with spark-submit and push its column lineage to XCom.

    A drop-in for ``SparkSubmitOperator``. A PySpark application (``.py``) runs unchanged under the
    provider's driver, which installs the capture before the script's first line. Its
    ``SparkSession.builder.getOrCreate()`` gets the driver's session, so every write it makes
    (``saveAsTable``, ``insertInto``, ``write.parquet(path)``, ``write.jdbc``, ``writeTo(...)``, SQL
    inserts, streaming queries) is captured, each once, through temp views and cached DataFrames. A
    JVM application (a jar, with ``java_class``) is submitted itself, with the provider's JVM listener
    added to it (``--jars``, ``spark.sql.queryExecutionListeners`` after any listener you set): its
    writes are captured inside the JVM, and reported alike. An exception in the application fails the
    task with its own error message; no lineage is pushed then.

    :param application: the PySpark script or the application jar (a local path, or a URI the driver
        can read) (templated).
    :param application_args: its arguments (``sys.argv[1:]`` in a script, ``main``'s ``args`` in a jar)
        (templated).
    :param java_class: a JVM application's main class (``--class``; default: the jar's ``Main-Class``)
        (templated).
    Every other parameter is the ``spark-submit`` one of ``SparkSubmitOperator`` (``conn_id``,
    ``conf``, ``py_files``, ``files``, ``jars``, ``packages``, ``deploy_mode``, ``dump_uri``, ...),
    described on ``_SparkLineageOperator``.
    """

    template_fields: Sequence[str] = ("application", "application_args", "java_class", "conf", "files", "py_files",
                                      "jars", "packages", "name", "env_vars", "dump_uri")
    template_fields_renderers = {"conf": "json", "application_args": "json"}
    ui_color = "#e8d3a0"

    def __init__(self, *, application: str, application_args: list[Any] | None = None,
                 java_class: str | None = None, **kwargs: Any) -> None:
        for sql_only in ("sql", "keep_going", "lineage_schema", "schema_cache"):
            if sql_only in kwargs:  # a task moved over from the SQL operator: say why, not just "invalid"
                raise TypeError(f"SparkSubmitLineageOperator takes no {sql_only!r}: it runs an application")
        super().__init__(**kwargs)
        self.application = application
        self.application_args = application_args
        self.java_class = java_class

    def _hook_arguments(self) -> dict[str, Any]:
        return {"java_class": self.java_class}

    def _run_job(self) -> JobResult:
        return self.hook.run_application(self.application, self.application_args)

    def _arguments(self) -> list[Any]:
        return [self.application or "", *(self.application_args or ())]
