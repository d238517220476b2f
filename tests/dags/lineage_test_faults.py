"""DAGs of the fault suite (tests/integration/test_faults.py): what a user gets wrong, the task's outcome."""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import DAG

from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator, SparkSubmitLineageOperator

HOME = os.environ.get("AIRFLOW_HOME", "/tmp")
DUMP_URI_OUT = os.path.join(HOME, "fault_dump_uri_out")
START = pendulum.datetime(2026, 1, 1, tz="UTC")

with DAG(dag_id="lineage_fault_dump_uri", schedule=None, start_date=START) as dump_uri:
    # /proc cannot hold a directory: the dump cannot be written there, the job must still run.
    SparkSqlLineageOperator(
        task_id="unwritable_dump_uri", retries=0, dump_uri="file:///proc/airflow-lineage-forbidden",
        sql=f"INSERT OVERWRITE DIRECTORY '{DUMP_URI_OUT}' USING parquet SELECT 1 AS a;\n",
    )

with DAG(dag_id="lineage_fault_empty", schedule=None, start_date=START) as empty:
    SparkSqlLineageOperator(task_id="comments_only", retries=0, sql="-- nothing to run yet\n/* TODO */\n")

with DAG(dag_id="lineage_fault_capture", schedule=None, start_date=START) as capture_broken:
    # The test breaks the driver's capture import (PYTHONPATH): the SQL must run all the same.
    SparkSqlLineageOperator(
        task_id="capture_cannot_load", retries=0,
        sql=f"INSERT OVERWRITE DIRECTORY '{DUMP_URI_OUT}_capture' USING parquet SELECT 1 AS a;\n",
    )

with DAG(dag_id="lineage_fault_kill", schedule=None, start_date=START) as kill:
    # Long enough to be killed mid-statement: the test stops the task while Spark counts.
    SparkSqlLineageOperator(
        task_id="long_statement", retries=0,
        sql="SELECT sum(a.id * b.id) AS s FROM range(0, 400000) a CROSS JOIN range(0, 400000) b;\n",
    )

RETRY_OUT = os.path.join(HOME, "fault_retry_out")

with DAG(dag_id="lineage_fault_retry", schedule=None, start_date=START) as retry:
    # Try 1 writes, then fails on its second statement; try 2 runs it all: only try 2's lineage counts.
    SparkSqlLineageOperator(
        task_id="partial_then_whole", retries=1, retry_delay=pendulum.duration(seconds=0),
        sql=(
            f"INSERT OVERWRITE DIRECTORY '{RETRY_OUT}_1' USING parquet SELECT 1 AS a;\n"
            f"INSERT OVERWRITE DIRECTORY '{RETRY_OUT}_2' USING parquet "
            "SELECT {{ 'no_such_column' if ti.try_number == 1 else '2' }} AS b;\n"
        ),
    )

# Lineage XComs that are no lineage document, as a buggy or hostile task could push them: `airflow-lineage
# show` and `diff --dag-id` skip each with the reason (test_faults.py). Run with conf {"bad": true}, the
# task `good` pushes a broken document too.
_F = "airflow-lineage/1"
GOOD_DOCUMENT = {"format": _F, "statements": [{"index": 0, "sql": "INSERT INTO t SELECT a FROM s", "method": "plan",
                                               "confidence": 1.0, "target": {"table": "t", "namespace": "file",
                                                                             "name": "/wh/t"},
                                               "columns": {"a": [{"table": "s", "field": "a"}]}}]}
MALFORMED_XCOMS = {
    "a_list": ([1, 2, 3], "it is a list, not an object"),
    "a_number": (7, "it is a number, not an object"),
    "text_not_json": ("{not json", "it is text that is not JSON"),
    "json_text_of_a_list": ("[1, 2, 3]", "it is a list, not an object"),
    "no_format": ({"statements": []}, "key 'format' is missing"),
    "other_format": ({"format": "openlineage", "statements": []}, "its format is 'openlineage'"),
    "statements_null": ({"format": _F, "statements": None}, "'statements' is null, not a list of statements"),
    "statement_a_number": ({"format": _F, "statements": [1]}, "statement 1: it is a number, not an object"),
    "no_field": ({"format": _F, "statements": [{"index": 2, "columns": {"a": [{"table": "s"}]}}]},
                 "statement 1 (index 2), column 'a', input 1: key 'field' is missing"),
    "index_text": ({"format": _F, "statements": [{"index": "2"}]},
                   "statement 1: 'index' is a string, not a whole number"),
    "columns_a_list": ({"format": _F, "statements": [{"index": 0, "columns": [["a", []]]}]},
                       "statement 1 (index 0): 'columns' is a list"),
}


def _push_lineage(value, **context):
    if context["task"].task_id == "good" and (context["dag_run"].conf or {}).get("bad"):
        value = {"format": _F, "statements": [{"index": 0, "target": "t"}]}
    context["ti"].xcom_push(key="column_lineage", value=value)


with DAG(dag_id="lineage_fault_xcoms", schedule=None, start_date=START) as bad_xcoms:
    from airflow.providers.standard.operators.python import PythonOperator

    PythonOperator(task_id="good", python_callable=_push_lineage, op_args=[GOOD_DOCUMENT])
    for _task_id, (_value, _) in MALFORMED_XCOMS.items():
        PythonOperator(task_id=_task_id, python_callable=_push_lineage, op_args=[_value])

# A JVM application (tests/java/jvmapp, AIRFLOW_LINEAGE_TEST_JVM_APP) under the JVM listener, with the listener's
# faults: the test damages or removes the shipped jar (jar_app), the dump cannot be written by this worker
# (/proc) or by the Spark driver (memory://: fsspec's in-process file system, which Hadoop has no client for),
# or the listener throws describing each write (its test switch).
JAR_FAULT_OUT = os.path.join(HOME, "fault_jar_out")
_JVM_APP = os.environ.get("AIRFLOW_LINEAGE_TEST_JVM_APP", "jvm-app.jar")
_IN_MEMORY = {"spark.sql.catalogImplementation": "in-memory"}  # no Hive catalog needed: starts faster


def _jar_task(task_id: str, out: str, **kwargs) -> SparkSubmitLineageOperator:
    return SparkSubmitLineageOperator(task_id=task_id, retries=0, application=_JVM_APP,
                                      java_class="lineagetest.WriteRange",
                                      application_args=[f"{JAR_FAULT_OUT}/{out}/range", f"{JAR_FAULT_OUT}/{out}/total"],
                                      **{"conf": _IN_MEMORY, **kwargs})


with DAG(dag_id="lineage_fault_jar", schedule=None, start_date=START) as jar_app:
    _jar_task("jar_app", "jar_app")

with DAG(dag_id="lineage_fault_jar_dump_uri", schedule=None, start_date=START) as jar_dump_uri:
    _jar_task("unwritable_dump_uri", "dump_uri", dump_uri="file:///proc/airflow-lineage-forbidden")

with DAG(dag_id="lineage_fault_jar_driver_dump", schedule=None, start_date=START) as jar_driver_dump:
    _jar_task("driver_cannot_write", "driver_dump", dump_uri="memory://airflow-lineage-faults")

with DAG(dag_id="lineage_fault_jar_listener_throws", schedule=None, start_date=START) as jar_listener_throws:
    _jar_task("listener_throws", "listener_throws", conf={**_IN_MEMORY, "spark.airflow.lineage.failForTest": "describe"})

# issue 42: a user's jar that holds listener classes (tests/java/oldlistener, AIRFLOW_LINEAGE_TEST_OLD_LISTENER_JAR: an
# old airflow_lineage.listener.LineageListener). The application jar the test sets may hold it too; the stock
# SparkSubmitOperator task (the option on, connection spark_local) gets it as a --jars dependency.
_OLD_LISTENER_JAR = os.environ.get("AIRFLOW_LINEAGE_TEST_OLD_LISTENER_JAR", "old-listener.jar")

with DAG(dag_id="lineage_fault_jar_copy_in_spark_jars", schedule=None, start_date=START) as jar_copy_in_spark_jars:
    _jar_task("copy_in_spark_jars", "copy_in_spark_jars", conf={**_IN_MEMORY, "spark.jars": _OLD_LISTENER_JAR})

with DAG(dag_id="lineage_fault_stock_jar_copy", schedule=None, start_date=START) as stock_jar_copy:
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    SparkSubmitOperator(task_id="stock_copy_in_jars", conn_id="spark_local", retries=0, application=_JVM_APP,
                        java_class="lineagetest.WriteRange", jars=_OLD_LISTENER_JAR,
                        conf={**_IN_MEMORY, "spark.ui.enabled": "false"},
                        application_args=[f"{JAR_FAULT_OUT}/stock_copy/range", f"{JAR_FAULT_OUT}/stock_copy/total"])
