"""SparkSqlLineageOperator: run Spark SQL and attach its column lineage to the task."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from airflow_lineage_provider.lineage.model import LineageReport

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook

XCOM_KEY = "column_lineage"


class SparkSqlLineageOperator(BaseOperator):
    """Run a Spark SQL script with spark-submit and push its column lineage to XCom.

    A drop-in for ``SparkSqlOperator``/``SparkSubmitOperator``: with no ``conn_id``
    the SQL runs on an embedded local Spark; with a Spark connection, on that
    cluster. After success the task's XCom ``column_lineage`` holds the lineage
    document of every write. A failing statement fails the task with Spark's
    message, naming the statement and its line.

    :param sql: the script, many statements separated by ``;``, or a ``.sql`` file (templated).
    :param conn_id: Spark connection id; ``None`` for the embedded local Spark.
    :param conf: Spark configuration properties (templated).
    :param keep_going: run the remaining statements after one fails (the task still fails).
    Other keyword arguments go to ``spark-submit`` as in ``SparkSubmitOperator``.
    """

    template_fields: Sequence[str] = ("sql", "conf", "name", "env_vars")
    template_ext: Sequence[str] = (".sql", ".hql")
    template_fields_renderers = {"sql": "sql", "conf": "json"}
    ui_color = "#e8c3a0"

    def __init__(
        self,
        *,
        sql: str,
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
        keep_going: bool = False,
        keep_dump: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.sql = sql
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
        self.keep_going = keep_going
        self.keep_dump = keep_dump
        self.lineage: LineageReport | None = None
        self._hook: SparkLineageHook | None = None

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
                verbose=self.verbose, keep_dump=self.keep_dump,
            )
        return self._hook

    def execute(self, context: Context) -> Any:
        result = self.hook.run_sql(self.sql, keep_going=self.keep_going)  # raises on a Spark failure
        self.lineage = self._extract(result)
        from airflow_lineage_provider.lineage.report import format_table

        self.log.info("Column lineage:\n%s", format_table(self.lineage))
        context["ti"].xcom_push(key=XCOM_KEY, value=self.lineage.to_dict())

    def _extract(self, result: Any) -> LineageReport:
        """Lineage from the dump; a failure here is a warning, never a failed task."""
        try:
            from airflow_lineage_provider.lineage.report import from_records

            return from_records(result.records, result.warnings)
        except Exception as e:
            self.log.warning("Column lineage could not be extracted: %s", e, exc_info=True)
            return LineageReport(warnings=(f"lineage extraction failed: {e}",))

    def on_kill(self) -> None:
        if self._hook is not None:
            self._hook.on_kill()
