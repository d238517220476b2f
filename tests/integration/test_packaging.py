"""pyspark (full, with spark-submit) and pyspark-client (pulled by the Spark provider) coexist."""

from __future__ import annotations

import importlib.metadata as md
import os
import subprocess
import sys

import pytest

from airflow_lineage_provider.hooks import local_spark


def test_pip_check_is_clean():
    proc = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pyspark_and_pyspark_client_are_the_same_release():
    assert md.version("pyspark") == md.version("pyspark-client")
    import pyspark

    assert pyspark.__version__ == md.version("pyspark")


def test_spark_connect_client_imports():
    proc = subprocess.run([sys.executable, "-c", "import pyspark.sql.connect.session, pyspark.sql.connect.functions"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.spark
def test_bundled_spark_submit_runs_the_matching_spark():
    env = {**os.environ, **local_spark.local_env()}
    proc = subprocess.run([local_spark.spark_submit(), "--version"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0
    assert f"version {md.version('pyspark')}" in proc.stdout + proc.stderr


def test_static_extractor_runs_on_the_compiled_sqlglot():
    """sqlglot[c] installs sqlglotc of the same release; the extractor must not subclass its compiled classes."""
    import sqlglot.parser

    from airflow_lineage_provider.lineage.sql import SqlExtractor

    assert md.version("sqlglotc") == md.version("sqlglot")
    assert sqlglot.parser.__file__.endswith((".so", ".pyd")), sqlglot.parser.__file__
    x = SqlExtractor()
    x.run("CREATE TABLE t (a INT, b INT) USING parquet")
    [st] = x.statement("CREATE TABLE u AS SELECT a + b * 2 AS s FROM t", 0)
    assert st.warnings == () and st.method == "sql"
    assert {(i.field, i.subtype, i.expression) for i in st.column_map["s"]} == {
        ("a", "TRANSFORMATION", "(t.a + (t.b * 2))"), ("b", "TRANSFORMATION", "(t.a + (t.b * 2))")}
