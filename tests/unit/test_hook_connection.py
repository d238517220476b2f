"""Which Spark the hook submits to: embedded local Spark, or the connection's master."""

from __future__ import annotations

import json

from airflow_lineage_provider import local_spark
from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook


def test_no_connection_means_the_embedded_local_spark(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    hook = SparkLineageHook(conn_id=None)
    assert hook.embedded
    cmd = hook._build_spark_submit_command(local_spark.DRIVER)
    assert cmd[0] == local_spark.spark_submit()
    assert cmd[cmd.index("--master") + 1] == "local[*]"
    assert "spark.ui.enabled=false" in cmd
    assert f"spark.sql.warehouse.dir={tmp_path / 'warehouse'}" in cmd
    assert hook._env["SPARK_HOME"] == local_spark.spark_home()
    assert hook._env["SPARK_LOCAL_IP"] == "127.0.0.1"


def test_a_spark_connection_with_a_host_is_used_as_is(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_MY_SPARK", json.dumps({"conn_type": "spark", "host": "spark://10.0.0.5", "port": 7077}))
    hook = SparkLineageHook(conn_id="my_spark", conf={"spark.executor.memory": "2g"})
    assert not hook.embedded
    cmd = hook._build_spark_submit_command(local_spark.DRIVER)
    assert cmd[cmd.index("--master") + 1] == "spark://10.0.0.5:7077"
    assert "spark.executor.memory=2g" in cmd
    assert not any(c.startswith("spark.sql.warehouse.dir=") for c in cmd), "no embedded settings on a cluster"


def test_a_connection_without_host_falls_back_to_the_embedded_spark(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    monkeypatch.setenv("AIRFLOW_CONN_EMPTY_SPARK", json.dumps({"conn_type": "spark"}))
    hook = SparkLineageHook(conn_id="empty_spark")
    assert hook.embedded
    cmd = hook._build_spark_submit_command(local_spark.DRIVER)
    assert cmd[cmd.index("--master") + 1] == "local[*]"


def test_user_conf_overrides_the_embedded_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    hook = SparkLineageHook(conn_id=None, conf={"spark.sql.shuffle.partitions": "32"})
    cmd = hook._build_spark_submit_command(local_spark.DRIVER)
    assert "spark.sql.shuffle.partitions=32" in cmd and "spark.sql.shuffle.partitions=4" not in cmd
