"""Column lineage for existing DAGs: the stock ``SparkSubmitOperator`` and ``SparkSqlOperator``, unchanged.

One option, off by default: ``[column_lineage] stock_spark_operators = True``. With it on, a task of
either stock class runs under the plan capture and reports its lineage exactly as our operators do
(XCom ``column_lineage``, OpenLineage facets, asset events, the UI tab).

How it hooks in: a task listener (``on_task_instance_running``, called first), registered by the
``column_lineage_stock`` plugin. It runs where the task runs, after Airflow has rendered the task's
templates and just before ``execute()``, in ``dag.test()``, ``airflow dags test`` and real workers
alike (a cluster policy changes the tasks of DAGs parsed into a DAG bag; ``dag.test()`` runs those of
the DAG object it is called on, which no policy has seen).
It changes the class of the running task (Airflow's own copy of it, made for this run) to a subclass
of the same name whose ``execute()`` hands the job to one of our operators (its *twin*: one home for
running, extracting, XCom and OpenLineage) and answers the OpenLineage provider through the twin, so
no ``[openlineage] extractors`` setting is needed.

The job runs as the stock operator runs it: a ``SparkSubmitOperator``'s every setting is the one its
own hook resolved (``SparkLineageHook.adopting``); a ``SparkSqlOperator``'s SQL goes through our
driver under ``spark-submit`` with the master, conf, name, cores, memory, queue and keytab its hook
resolved, with Hive support as ``spark-sql`` has. Where no plan can be captured (a JVM application,
cluster deploy mode without ``dump_uri``, a driver tracked through the cluster's API) the stock
``execute()`` runs untouched and one log line says why; a ``SparkSqlOperator``'s SQL then still gets
its static lineage. Nothing here changes a task's outcome: a failure of ours before Spark starts
runs the stock ``execute()`` instead.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from airflow.plugins_manager import AirflowPlugin
from pluggy import HookimplMarker

if TYPE_CHECKING:
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.operators.spark_lineage import _SparkLineageOperator

log = logging.getLogger(__name__)
hookimpl = HookimplMarker("airflow")  # Airflow's listener marker (the project name is what pluggy matches)

SECTION = "column_lineage"
OPTION = "stock_spark_operators"


def enabled() -> bool:
    """``[column_lineage] stock_spark_operators``, read when a task starts (never at import)."""
    from airflow.sdk import conf

    return conf.getboolean(SECTION, OPTION, fallback=False)


class _StockLineage:
    """What the running stock task becomes: ``execute()`` through the twin, OpenLineage from it."""

    __slots__ = ()  # no instance layout of its own: the running task's class can be swapped

    _lineage_twin_op: _SparkLineageOperator | None = None
    _stock_class: Any = None  # the stock operator class: the untouched run is its execute()

    # -- subclass parts -----------------------------------------------------------------------

    def _make_twin(self) -> _SparkLineageOperator:
        """Our operator for the same job (no hook yet): it extracts, reports and answers OpenLineage."""
        raise NotImplementedError

    def _capture_hook(self) -> tuple[SparkLineageHook | None, str]:
        """The hook that runs this job under the capture, or ``None`` and why it cannot."""
        raise NotImplementedError

    def _lineage_untouched(self, twin: _SparkLineageOperator) -> Any:
        """The lineage of a run without capture (``None``: none)."""
        return None

    # -- the run ---------------------------------------------------------------------------------

    @property
    def _lineage_twin(self) -> _SparkLineageOperator:
        if self._lineage_twin_op is None:
            self._lineage_twin_op = self._make_twin()
        return self._lineage_twin_op

    def execute(self, context: Any) -> Any:
        hook, why = None, ""
        try:
            twin = self._lineage_twin
            hook, why = self._capture_hook()
        except Exception as e:  # noqa: BLE001 - lineage never changes the task's outcome
            why = f"the capture could not be set up ({type(e).__name__}: {e})"
        if hook is None:
            return self._run_untouched(context, why)
        twin._hook = hook
        try:
            return twin.run_with_lineage(context)
        except Exception as e:
            if getattr(hook, "_submit_sp", None) is not None:
                raise  # Spark ran: its outcome is the task's
            # Our side failed before Spark started: the job runs as it would without us.
            return self._run_untouched(context, f"the capture failed before Spark started ({type(e).__name__}: {e})")

    def _run_untouched(self, context: Any, why: str) -> Any:
        self.log.warning("No plan column lineage for this %s: %s; it runs as is", type(self).__name__, why)
        try:
            result = self._stock_class.execute(self, context)
        except BaseException as e:
            if self._lineage_twin_op is not None:
                self._lineage_twin_op._error = e
            raise
        try:
            twin = self._lineage_twin
            lineage = self._lineage_untouched(twin)
            if lineage is not None:
                twin.report_lineage(context, lineage)
        except Exception as e:  # noqa: BLE001 - lineage never changes the task's outcome
            self.log.warning("Column lineage could not be reported: %s: %s", type(e).__name__, e)
        return result

    # -- OpenLineage: what our operator says ------------------------------------------------------

    def get_openlineage_facets_on_start(self) -> Any:
        return self._lineage_twin.get_openlineage_facets_on_start()

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        return self._lineage_twin.get_openlineage_facets_on_complete(task_instance)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        return self._lineage_twin.get_openlineage_facets_on_failure(task_instance)

    def on_kill(self) -> None:
        twin = self._lineage_twin_op
        if twin is not None and twin._hook is not None:
            twin.on_kill()
        else:
            self._stock_class.on_kill(self)


class _StockSparkSubmit(_StockLineage):
    __slots__ = ()

    def _make_twin(self) -> _SparkLineageOperator:
        from airflow_lineage_provider.operators.spark_lineage import SparkSubmitLineageOperator

        return SparkSubmitLineageOperator(
            task_id=self.task_id, application=self.application, application_args=self.application_args,
            conf=self.conf, name=self.name,
            openlineage_inject_parent_job_info=self._openlineage_inject_parent_job_info,
            openlineage_inject_transport_info=self._openlineage_inject_transport_info,
        )

    def _capture_hook(self) -> tuple[SparkLineageHook | None, str]:
        from airflow_lineage_provider.hooks.spark_lineage import SparkJobError, SparkLineageHook

        application = str(self.application or "")
        if self._java_class or not application.endswith(".py"):
            return None, (f"{application or 'the application'} is a JVM application: the capture runs "
                          "PySpark applications (.py) only")
        stock = self._get_hook()
        tracked = getattr(stock, "_should_track_driver_status", False) or stock._should_track_driver_via_k8s_api() \
            or (getattr(stock, "_is_yarn_cluster_mode", False) and getattr(stock, "_yarn_track_via_rm_api", False))
        if tracked:
            return None, "the stock operator tracks this driver through the cluster's API (cluster deploy mode)"
        hook = SparkLineageHook.adopting(stock)
        try:
            hook._check_deploy_mode()
        except SparkJobError as e:  # e.g. cluster deploy mode without dump_uri
            return None, str(e)
        return hook, ""


class _StockSparkSql(_StockLineage):
    __slots__ = ()

    def _sql_text(self) -> str:
        """The rendered SQL, or the file's text when it names a file (``-f`` to ``spark-sql``)."""
        sql = (self.sql or "").strip()
        if sql.endswith((".sql", ".hql")) and os.path.isfile(sql):
            with open(sql, encoding="utf-8") as f:
                return f.read()
        return self.sql or ""

    def _make_twin(self) -> _SparkLineageOperator:
        from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator, default_schema_cache

        return SparkSqlLineageOperator(
            task_id=self.task_id, sql=self._sql_text(), conn_id=self._conn_id, name=self._name,
            schema_cache=default_schema_cache(self.dag_id, self.task_id),
            openlineage_inject_parent_job_info=False, openlineage_inject_transport_info=False,
        )

    def _capture_hook(self) -> tuple[SparkLineageHook | None, str]:
        from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
        from airflow_lineage_provider.lineage.statements import split_statements

        sql = (self.sql or "").strip()
        if sql.endswith((".sql", ".hql")) and not os.path.isfile(sql):
            return None, f"the SQL file {sql} is not on this worker"
        if not split_statements(self._sql_text()):
            return None, "the SQL has no statement"
        stock = self._get_hook()  # resolves the master and queue as spark-sql gets them
        conf = spark_sql_conf(self._conf)
        # spark-sql always runs with the Hive catalog; a session made by spark-submit does so when told.
        conf.setdefault("spark.sql.catalogImplementation", "hive")
        hook = SparkLineageHook(
            conn_id=self._conn_id, master=stock._master, conf=conf, name=stock._name,
            total_executor_cores=stock._total_executor_cores, executor_cores=stock._executor_cores,
            executor_memory=stock._executor_memory, keytab=stock._keytab, principal=stock._principal,
            num_executors=stock._num_executors, verbose=stock._verbose, yarn_queue=stock._yarn_queue,
        )
        return hook, ""

    def _lineage_untouched(self, twin: _SparkLineageOperator) -> Any:
        static = twin._static_lineage()  # type: ignore[attr-defined]
        if not static.statements:
            return None
        return static.with_warning("no plan was captured (the job ran without the capture): static lineage "
                                   "from the SQL text")


def spark_sql_conf(conf: dict[str, Any] | str | None) -> dict[str, str]:
    """``SparkSqlOperator``'s ``conf`` (a dict, or ``"k=v,k2=v2"`` as its hook splits it) as a dict."""
    if not conf:
        return {}
    if isinstance(conf, dict):
        return {str(k): str(v) for k, v in conf.items()}
    out = {}
    for item in str(conf).split(","):
        key, _, value = item.partition("=")
        out[key.strip()] = value
    return out


_CLASSES: dict[type, type] = {}
_OVERRIDDEN = ("execute", "on_kill", "get_openlineage_facets_on_start", "get_openlineage_facets_on_complete",
               "get_openlineage_facets_on_failure")


def _stock_classes() -> dict[type, type[_StockLineage]]:
    from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    return {SparkSubmitOperator: _StockSparkSubmit, SparkSqlOperator: _StockSparkSql}


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
    if isinstance(task, _StockLineage) or not enabled():
        return False
    try:
        cls = lineage_class(type(task))
    except ImportError:  # the Spark provider is not installed: no stock Spark task to take
        return False
    if cls is None:
        return False
    task.__class__ = cls
    return True


class StockSparkListener:
    """Called first when a task starts, before OpenLineage's listener asks the task for its facets."""

    @hookimpl(tryfirst=True)
    def on_task_instance_running(self, previous_state: Any, task_instance: Any) -> None:
        task = getattr(task_instance, "task", None)
        if task is None:
            return
        try:
            adopt(task)
        except Exception as e:  # noqa: BLE001 - lineage never changes the task's outcome
            log.warning("Column lineage: task %s runs without the capture: %s: %s",
                        getattr(task, "task_id", "?"), type(e).__name__, e)


class StockSparkLineagePlugin(AirflowPlugin):
    """Registers the listener (``airflow.plugins`` entry point); it does nothing while the option is off."""

    name = "column_lineage_stock"
    listeners = [StockSparkListener()]
