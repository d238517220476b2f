"""The stock operators' hook-in without a JVM: which tasks are taken, what they run, and that a failure of
ours before Spark starts leaves the stock execute() to run the job."""

from __future__ import annotations

import pytest

from airflow_lineage_provider import conf
from airflow_lineage_provider.operators import stock


@pytest.fixture
def option_on(monkeypatch):
    monkeypatch.setenv("AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS", "True")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_LOCAL", '{"conn_type": "spark", "host": "local[*]"}')


def submit_task(**kwargs):
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    return SparkSubmitOperator(task_id="app", **{"conn_id": "spark_local", "application": "/jobs/app.py", **kwargs})


def sql_task(**kwargs):
    from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator

    return SparkSqlOperator(task_id="sql", **{"conn_id": "spark_local", "sql": "INSERT INTO t SELECT 1", **kwargs})


def test_the_option_is_off_by_default_and_nothing_is_taken(monkeypatch):
    monkeypatch.delenv("AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS", raising=False)
    task = submit_task()
    assert conf.stock_spark_operators() is False
    assert stock.adopt(task) is False and type(task).__module__.startswith("airflow.providers")


def test_a_taken_task_keeps_its_class_name_and_task_type(option_on):
    for task, name in ((submit_task(), "SparkSubmitOperator"), (sql_task(), "SparkSqlOperator")):
        stock_class = type(task)
        assert stock.adopt(task) is True
        assert type(task).__name__ == name and task.task_type == name
        assert isinstance(task, stock_class) and type(task).__module__ == "airflow_lineage_provider.operators.stock"
        assert stock.adopt(task) is False  # once


def pyspark_tasks():
    from airflow.providers.apache.spark.operators.spark_pyspark import PySparkOperator
    from airflow.sdk import DAG, task

    def load(spark=None):
        return spark

    with DAG(dag_id="pyspark_unit", schedule=None):
        decorated = task.pyspark(conn_id="spark_connect_demo")(load)().operator
    return (PySparkOperator(task_id="op", python_callable=load), "PySparkOperator"), \
        (decorated, "_PySparkDecoratedOperator")


def test_pyspark_tasks_are_taken_keeping_their_class_name_and_task_type(option_on):
    for task, name in pyspark_tasks():
        task_type = task.task_type
        assert stock.adopt(task) is True
        assert type(task).__name__ == name and task.task_type == task_type
        assert isinstance(task, stock._StockPySpark)


def test_a_pyspark_tasks_function_runs_under_the_capture_of_the_session_it_is_handed(option_on, monkeypatch):
    """The stock execute() makes the session and calls the function; ours wraps the function only."""
    from airflow_lineage_provider.operators import session

    entered = []

    class Capture:
        def __init__(self, spark, context, **kwargs):
            entered.append(spark)

        def __enter__(self):
            return None

        def __exit__(self, *exc):
            entered.append("exit")
            return False

    monkeypatch.setattr(session, "column_lineage", Capture)
    (task, _), _ = pyspark_tasks()
    stock.adopt(task)
    original = task.python_callable

    def stock_execute(self, context):  # what PySparkOperator does: a session, then the function with it
        return self.python_callable(spark="the session")

    monkeypatch.setattr(task._stock_class, "execute", stock_execute)
    assert task.execute({"ti": None}) == "the session"
    assert entered == ["the session", "exit"]
    assert task.python_callable is original  # put back after the run


def test_a_subclass_of_a_stock_operator_is_left_alone(option_on):
    from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator

    class Mine(SparkSqlOperator):
        pass

    task = Mine(task_id="mine", sql="SELECT 1")
    assert stock.adopt(task) is False and type(task) is Mine


def test_a_jvm_application_runs_under_the_listener_with_every_setting_its_stock_hook_resolved(option_on):
    task = submit_task(application="/jobs/etl.jar", java_class="com.example.Etl", jars="/jobs/dep.jar",
                       conf={"spark.x": "1"}, application_args=["a"], name="nightly")
    stock.adopt(task)
    hook, why = task._capture_hook()
    assert why == "" and type(hook).__name__ == "SparkLineageHook"
    assert (hook._java_class, hook._jars, hook._conf, hook._name, hook._connection["master"]) == (
        "com.example.Etl", "/jobs/dep.jar", {"spark.x": "1"}, "nightly", "local[*]")


def test_an_application_that_is_neither_python_nor_a_jar_is_not_captured_and_says_why(option_on):
    task = submit_task(application="/jobs/report.R")
    stock.adopt(task)
    assert task._capture_hook() == (None, "/jobs/report.R is neither a PySpark application (.py) nor a JVM "
                                          "application (a jar)")


def test_a_jar_in_standalone_cluster_mode_is_left_to_the_stock_operator_which_tracks_its_driver(option_on,
                                                                                                 monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_STANDALONE", '{"conn_type": "spark", "host": "spark://h", "port": 7077, '
                                                         '"extra": {"dump_uri": "file:///shared/lineage"}}')
    task = submit_task(conn_id="spark_standalone", deploy_mode="cluster", application="/jobs/etl.jar",
                       java_class="com.example.Etl")
    stock.adopt(task)
    assert task._capture_hook() == (None, "the stock operator tracks this driver through the cluster's API "
                                          "(cluster deploy mode)")


def test_cluster_mode_without_dump_uri_is_not_captured_and_says_why(option_on, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_YARN", '{"conn_type": "spark", "host": "yarn"}')
    task = submit_task(conn_id="spark_yarn", deploy_mode="cluster")
    stock.adopt(task)
    hook, why = task._capture_hook()
    assert hook is None and "set dump_uri" in why


def test_a_pyspark_application_runs_with_every_setting_its_stock_hook_resolved(option_on):
    task = submit_task(conf={"spark.x": "1"}, application_args=["a", "b"], name="nightly", py_files="/jobs/deps.zip",
                       executor_memory="2g", env_vars={"K": "V"})
    stock.adopt(task)
    hook, why = task._capture_hook()
    assert why == "" and type(hook).__name__ == "SparkLineageHook"
    assert hook._connection["master"] == "local[*]" and not hook.embedded
    assert (hook._conf, hook._name, hook._py_files, hook._executor_memory, hook._env_vars) == (
        {"spark.x": "1"}, "nightly", "/jobs/deps.zip", "2g", {"K": "V"})


def test_sql_runs_with_the_master_conf_and_name_spark_sql_would_get(option_on):
    task = sql_task(conf="spark.a=1,spark.b=x=y", name="daily", master="local[2]", executor_cores=3)
    stock.adopt(task)
    hook, why = task._capture_hook()
    assert why == ""
    assert hook._connection["master"] == "local[2]" and hook._connection["deploy_mode"] is None
    assert hook._conf == {"spark.a": "1", "spark.b": "x=y", "spark.sql.catalogImplementation": "hive"}
    assert (hook._name, hook._executor_cores, hook._connection["queue"]) == ("daily", 3, "default")


def test_sql_with_no_statement_runs_untouched(option_on):
    task = sql_task(sql="-- nothing yet")
    stock.adopt(task)
    assert task._capture_hook() == (None, "the SQL has no statement")


def test_spark_sql_conf_reads_a_dict_or_the_comma_string():
    assert stock.spark_sql_conf(None) == {}
    assert stock.spark_sql_conf({"a": 1}) == {"a": "1"}
    assert stock.spark_sql_conf("a=1, b=2") == {"a": "1", "b": "2"}


def test_a_failure_of_ours_before_spark_starts_runs_the_stock_execute(option_on, capsys):
    """The capture breaks before any Spark process exists: the job runs as the stock operator runs it."""
    task = sql_task()
    stock.adopt(task)
    ran = []
    stock_class = task._stock_class
    original = stock_class.execute

    def stock_execute(self, context):
        ran.append(self.task_id)
        return "stock result"

    def broken(hook, context):
        raise OSError("no space left for the dump")

    task._run_job = broken
    stock_class.execute = stock_execute
    try:
        assert task.execute({}) == "stock result"
    finally:
        stock_class.execute = original
    assert ran == ["sql"]
    printed = capsys.readouterr().out
    assert ("No plan column lineage for this SparkSqlOperator: the capture failed before Spark started "
            "(OSError: no space left for the dump); it runs as is") in printed
