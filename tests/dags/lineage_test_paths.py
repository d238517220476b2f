"""A DAG whose tasks write and read storage paths a URI cannot hold as they are (issue 24, items 1-2):
a space, "#", "%", letters beyond ASCII, an emoji and CJK, and a path too long for an Airflow asset.

Every name must reach XCom and OpenLineage exactly as written; every asset URI must be one Airflow
takes (percent-encoded), and the one it would refuse (over 1,500 characters) must be left out with a
warning: the tasks succeed whatever their paths are called.
"""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import DAG

from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator, SparkSubmitLineageOperator

# Where the odd paths go: the test sets it; a space in the base too.
BASE = os.environ.get("AIRFLOW_LINEAGE_ODD_DIR") or os.path.join(os.environ.get("AIRFLOW_HOME", "/tmp"), "odd paths")
APPS = os.path.join(os.environ.get("AIRFLOW_LINEAGE_TEST_DATA", os.path.dirname(__file__)), "apps")

UNI = f"{BASE}/out dir/ünï"  # item 1: non-ASCII letters
HASH = f"{BASE}/out dir/sp ace#1"  # item 2: "#" and spaces
DIRECTORY = f"{BASE}/dir/100% a+b=c 😀 数据 "  # "%", "+", "=", an emoji, CJK, a trailing space
LONG = f"{BASE}/long/" + "/".join(["d" * 200] * 8)  # a URI over 1,500 characters: no asset, a warning
APP_FIRST = f"{BASE}/py out/ü#1?x=%41"
APP_SECOND = f"{BASE}/py out/second é"

SQL = (
    "DROP TABLE IF EXISTS odd_uni;\n"
    "DROP TABLE IF EXISTS odd_hash;\n"
    f"CREATE TABLE odd_uni (b INT) USING parquet LOCATION '{UNI}';\n"
    "INSERT INTO odd_uni SELECT 7;\n"
    f"CREATE TABLE odd_hash (b INT) USING parquet LOCATION '{HASH}';\n"
    "INSERT INTO odd_hash SELECT b + 1 FROM odd_uni;\n"
    f"INSERT OVERWRITE DIRECTORY '{DIRECTORY}' USING parquet SELECT b FROM odd_hash;\n"
    f"INSERT OVERWRITE DIRECTORY '{LONG}' USING parquet SELECT b FROM parquet.`{DIRECTORY}`;\n"
)

with DAG(dag_id="lineage_test_odd_paths", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
         catchup=False) as odd_paths:
    SparkSqlLineageOperator(task_id="odd_sql", retries=0, sql=SQL)
    SparkSubmitLineageOperator(task_id="odd_app", retries=0, application=os.path.join(APPS, "odd_paths.py"),
                               conf={"spark.sql.catalogImplementation": "in-memory"},
                               application_args=[APP_FIRST, APP_SECOND])
