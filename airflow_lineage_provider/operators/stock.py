"""Column lineage for existing DAGs: the stock ``SparkSubmitOperator``, ``SparkSqlOperator``, ``PySparkOperator``
and ``@task.pyspark``, unchanged.

With ``[column_lineage] stock_spark_operators`` on, the listener of ``plugins/stock.py`` hands each
running task of these stock classes to ``adopt``, which changes the class of the running task (Airflow's
own copy of it, made for this run) to a subclass of the same name. Its ``execute()`` runs the job
through ``SparkLineageHook`` and reports through the reporting piece (``operators/reporting.py``), as
our operators do: XCom ``column_lineage``, OpenLineage facets (no ``[openlineage] extractors`` setting
needed), asset events.

The job runs as the stock operator runs it: a ``SparkSubmitOperator``'s every setting is the one its
own hook resolved (``SparkLineageHook.adopting``); a ``SparkSqlOperator``'s SQL goes through our
driver under ``spark-submit`` with the master, conf, name, cores, memory, queue and keytab its hook
resolved, with Hive support as ``spark-sql`` has. A JVM application (a jar) is submitted itself, with the
provider's JVM listener added (``hooks/jvm_listener.py``). Where no plan can be captured (an application
that is neither, cluster deploy mode without ``dump_uri``, a driver tracked through the cluster's API) the
stock ``execute()`` runs untouched and one log line says why; a ``SparkSqlOperator``'s SQL then still gets
its static lineage. Nothing here changes a task's outcome: a failure of ours before Spark starts
runs the stock ``execute()`` instead. What the Spark provider keeps in private attributes is read
through ``hooks/spark_provider.py``. A ``PySparkOperator`` or ``@task.pyspark`` task builds its session in the
task's own process and hands it to the user's function, which runs under that session's capture
(``_StockPySpark``, ``operators/session.py``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from airflow_lineage_provider import conf
from airflow_lineage_provider.operators.reporting import LineageReporter, ReportsLineage, openlineage_spark_conf

if TYPE_CHECKING:
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.job.dump import JobResult


class _StockLineage(ReportsLineage):
    """What the running stock task becomes: ``execute()`` under the capture, reported as ours are."""

    __slots__ = ()  # no instance layout of its own: the running task's class can be swapped

    _stock_class: Any = None  # the stock operator class: the untouched run is its execute()
    # Airflow stored the rendered fields (the UI's Rendered Template) before the task was adopted: sent again when
    # it ends, through Airflow's masker, which then knows the credentials execute() registered.
    overwrite_rtif_after_execution = True
    # Set on the running task (its __dict__: the swapped class adds no slots): the reporter, built
    # once, and our hook once the job runs under the capture (on_kill stops it).
    _column_lineage_reporter: LineageReporter | None = None
    _column_lineage_hook: SparkLineageHook | None = None

    # -- subclass parts -----------------------------------------------------------------------

    def _make_reporter(self) -> LineageReporter:
        raise NotImplementedError

    def _capture_hook(self) -> tuple[SparkLineageHook | None, str]:
        """The hook that runs this job under the capture, or ``None`` and why it cannot."""
        raise NotImplementedError

    def _run_job(self, hook: SparkLineageHook, context: Any) -> JobResult:
        raise NotImplementedError

    def _lineage_untouched(self) -> Any:
        """The lineage of a run without capture (``None``: none)."""
        return None

    # -- the run ---------------------------------------------------------------------------------

    @property
    def lineage_reporter(self) -> LineageReporter:
        reporter = getattr(self, "_column_lineage_reporter", None)
        if reporter is None:
            reporter = self._column_lineage_reporter = self._make_reporter()
        return reporter

    def _register_secrets(self) -> None:
        """Give Airflow's masker the credentials this task's fields hold (logs, the rendered fields it keeps)."""

    def execute(self, context: Any) -> Any:
        hook, why = None, ""
        try:
            self._register_secrets()
        except Exception as e:  # noqa: BLE001 - reading a field (a SQL file) failed: lineage never changes the outcome
            self.log.warning("Column lineage could not read this task's fields for credentials: %s", type(e).__name__)
        try:
            reporter = self.lineage_reporter
            hook, why = self._capture_hook()
        except Exception as e:  # noqa: BLE001 - lineage never changes the task's outcome
            why = f"the capture could not be set up ({type(e).__name__}: {e})"
        if hook is None:
            return self._run_untouched(context, why)
        self._column_lineage_hook = hook
        try:
            return reporter.run(self, context, lambda: self._run_job(hook, context))
        except Exception as e:
            if hook.submitted:
                raise  # Spark ran: its outcome is the task's
            # Our side failed before Spark started: the job runs as it would without us.
            return self._run_untouched(context, f"the capture failed before Spark started ({type(e).__name__}: {e})")

    def _run_untouched(self, context: Any, why: str) -> Any:
        self.log.warning("No plan column lineage for this %s: %s; it runs as is", type(self).__name__, why)
        reporter = getattr(self, "_column_lineage_reporter", None)
        try:
            result = self._stock_class.execute(self, context)
        except BaseException as e:
            if reporter is not None:
                reporter.error = e
            raise
        try:
            lineage = self._lineage_untouched()
            if lineage is not None:
                self.lineage_reporter.report(self, context, lineage)
        except Exception as e:  # noqa: BLE001 - lineage never changes the task's outcome
            self.log.warning("Column lineage could not be reported: %s: %s", type(e).__name__, e)
        return result

    def on_kill(self) -> None:
        hook = getattr(self, "_column_lineage_hook", None)
        if hook is not None:
            hook.on_kill()
        else:
            self._stock_class.on_kill(self)


class _StockSparkSubmit(_StockLineage):
    __slots__ = ()

    def _make_reporter(self) -> LineageReporter:
        return LineageReporter()  # an application: no SQL text, no static lineage

    def _register_secrets(self) -> None:
        from airflow_lineage_provider.hooks.spark_lineage import mask_task_secrets

        mask_task_secrets(conf=self.conf if isinstance(self.conf, dict) else None,
                          command=[self.application or "", *(self.application_args or ())])

    def _capture_hook(self) -> tuple[SparkLineageHook | None, str]:
        from airflow_lineage_provider.hooks import jvm_listener, spark_provider
        from airflow_lineage_provider.hooks.spark_lineage import SparkJobError, SparkLineageHook

        task = spark_provider.submit_task(self)
        application = str(self.application or "")
        jvm = jvm_listener.is_jvm_application(application, task.java_class)
        if not jvm and not application.endswith(".py"):
            return None, (f"{application or 'the application'} is neither a PySpark application (.py) nor a JVM "
                          "application (a jar)")
        stock = task.hook()
        if spark_provider.tracks_driver_through_cluster_api(stock):
            return None, "the stock operator tracks this driver through the cluster's API (cluster deploy mode)"
        hook = SparkLineageHook.adopting(stock)
        try:
            hook.check_deploy_mode(python=not jvm)
        except SparkJobError as e:  # e.g. cluster deploy mode without dump_uri
            return None, str(e)
        return hook, ""

    def _run_job(self, hook: SparkLineageHook, context: Any) -> JobResult:
        from airflow_lineage_provider.hooks import spark_provider

        task = spark_provider.submit_task(self)
        # As SparkSubmitOperator.execute() does: link openlineage-spark's events to this task.
        injected = openlineage_spark_conf(self.conf, context, parent_job=task.inject_parent_job_info,
                                          transport=task.inject_transport_info)
        if injected is not None:
            hook.add_conf(injected)
        return hook.run_application(self.application, self.application_args)


class _StockSparkSql(_StockLineage):
    __slots__ = ()

    def _sql_text(self) -> str:
        """The rendered SQL, or the file's text when it names a file (``-f`` to ``spark-sql``)."""
        sql = (self.sql or "").strip()
        if sql.endswith((".sql", ".hql")) and os.path.isfile(sql):
            with open(sql, encoding="utf-8") as f:
                return f.read()
        return self.sql or ""

    def _register_secrets(self) -> None:
        from airflow_lineage_provider.hooks.spark_lineage import mask_task_secrets

        mask_task_secrets(sql=self._sql_text(), conf=spark_sql_conf(self.conf))

    def _make_reporter(self) -> LineageReporter:
        from airflow_lineage_provider.lineage.sql.static import TaskSql, default_cache_path

        sql = self._sql_text()
        return LineageReporter(sql=sql, static=TaskSql(sql, cache_path=default_cache_path(self.dag_id, self.task_id)))

    def _capture_hook(self) -> tuple[SparkLineageHook | None, str]:
        from airflow_lineage_provider.hooks import spark_provider
        from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
        from airflow_lineage_provider.lineage.statements import split_statements

        sql = (self.sql or "").strip()
        if sql.endswith((".sql", ".hql")) and not os.path.isfile(sql):
            return None, f"the SQL file {sql} is not on this worker"
        if not split_statements(self._sql_text()):
            return None, "the SQL has no statement"
        task = spark_provider.sql_task(self)
        settings = spark_provider.sql_hook_settings(task.hook())  # the master and queue as spark-sql gets them
        spark_conf = spark_sql_conf(task.conf)
        # spark-sql always runs with the Hive catalog; a session made by spark-submit does so when told.
        spark_conf.setdefault("spark.sql.catalogImplementation", "hive")
        return SparkLineageHook(conn_id=task.conn_id, conf=spark_conf, **settings), ""

    def _run_job(self, hook: SparkLineageHook, context: Any) -> JobResult:
        return hook.run_sql(self._sql_text(), keep_going=False)

    def _lineage_untouched(self) -> Any:
        static = self.lineage_reporter.static
        lineage = static.lineage() if static is not None else None
        if lineage is None or not lineage.statements:
            return None
        return lineage.with_warning("no plan was captured (the job ran without the capture): static lineage "
                                    "from the SQL text")


class _StockPySpark(_StockLineage):
    """A ``PySparkOperator`` or ``@task.pyspark`` task: its function runs under the capture of the session the
    stock operator makes and hands it as ``spark`` (``operators/session.py``): a Spark Connect session's
    through the server's listener, a classic one's in this process. The session, its conf and its stop are
    the stock operator's own."""

    __slots__ = ()

    def _make_reporter(self) -> LineageReporter:
        return LineageReporter()

    def execute(self, context: Any) -> Any:
        import functools

        from airflow_lineage_provider.operators.session import column_lineage

        reporter = self.lineage_reporter
        function = self.python_callable

        @functools.wraps(function)  # the same signature: Airflow picks the context arguments from it
        def under_capture(*args: Any, **kwargs: Any) -> Any:
            spark = kwargs.get("spark")
            if spark is None:
                self.log.warning("No plan column lineage for this task: no Spark session was handed to it")
                return function(*args, **kwargs)
            with column_lineage(spark, context, reporter=reporter):
                return function(*args, **kwargs)

        self.python_callable = under_capture
        try:
            return self._stock_class.execute(self, context)
        except BaseException as e:
            reporter.error = e
            raise
        finally:
            self.python_callable = function


def spark_sql_conf(spark_conf: dict[str, Any] | str | None) -> dict[str, str]:
    """``SparkSqlOperator``'s ``conf`` (a dict, or ``"k=v,k2=v2"`` as its hook splits it) as a dict."""
    if not spark_conf:
        return {}
    if isinstance(spark_conf, dict):
        return {str(k): str(v) for k, v in spark_conf.items()}
    out = {}
    for item in str(spark_conf).split(","):
        key, _, value = item.partition("=")
        out[key.strip()] = value
    return out


_CLASSES: dict[type, type] = {}
_OVERRIDDEN = ("execute", "on_kill", "get_openlineage_facets_on_start", "get_openlineage_facets_on_complete",
               "get_openlineage_facets_on_failure", "overwrite_rtif_after_execution")


def _stock_classes() -> dict[type, type[_StockLineage]]:
    from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    classes: dict[type, type[_StockLineage]] = {SparkSubmitOperator: _StockSparkSubmit,
                                                SparkSqlOperator: _StockSparkSql}
    try:  # the Spark provider's 6.x: a Python function handed a SparkSession
        from airflow.providers.apache.spark.decorators.pyspark import _PySparkDecoratedOperator
        from airflow.providers.apache.spark.operators.spark_pyspark import PySparkOperator
    except ImportError:
        return classes
    return {**classes, PySparkOperator: _StockPySpark, _PySparkDecoratedOperator: _StockPySpark}


def lineage_class(stock: type) -> type | None:
    """The class a running task of the stock class ``stock`` becomes; ``None`` for any other class
    (a subclass may have its own ``execute()``: only the unchanged stock classes are taken)."""
    if stock not in _CLASSES:
        mixin = _stock_classes().get(stock)
        if mixin is None:
            return None
        # The same name: task_type, statistics and OpenLineage's operator name stay the stock ones. The
        # stock class comes first among the bases (Python swaps an object's class only to one of the same
        # layout, which a mixin ahead of it breaks), so the methods that replace its own are set here.
        overrides = {name: getattr(mixin, name) for name in _OVERRIDDEN}
        _CLASSES[stock] = type(stock)(stock.__name__, (stock, mixin), {
            "__module__": __name__, "__qualname__": stock.__qualname__, "__slots__": (), "_stock_class": stock,
            **overrides})
    return _CLASSES[stock]


def adopt(task: Any) -> bool:
    """Make ``task`` (the running copy of a stock Spark task) run under the capture; ``False`` when
    the option is off or the task is of another class."""
    if isinstance(task, _StockLineage) or not conf.stock_spark_operators():
        return False
    try:
        cls = lineage_class(type(task))
    except ImportError:  # the Spark provider is not installed: no stock Spark task to take
        return False
    if cls is None:
        return False
    task.__class__ = cls
    return True
