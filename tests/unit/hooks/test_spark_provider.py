"""hooks/spark_provider.py: the Spark provider's private names we rely on are all there.

A release of apache-airflow-providers-apache-spark that renames one would cost lineage silently (our
override never called, a setting never read): this test names the one that is gone.
"""

from __future__ import annotations

import importlib.metadata

import pytest

from airflow_lineage_provider.hooks import spark_provider


@pytest.fixture
def instances(monkeypatch):
    """One object of each class, built as a DAG builds them (their __init__ sets the attributes)."""
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", '{"conn_type": "spark", "host": "local[*]"}')
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_SQL_DEFAULT", '{"conn_type": "spark_sql", "host": "local[*]"}')
    from airflow.providers.apache.spark.hooks.spark_sql import SparkSqlHook
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
    from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    return {
        "SparkSubmitHook": SparkSubmitHook(),
        "SparkSqlHook": SparkSqlHook(sql="SELECT 1", conn_id="spark_sql_default"),
        "SparkSubmitOperator": SparkSubmitOperator(task_id="app", application="/jobs/app.py"),
        "SparkSqlOperator": SparkSqlOperator(task_id="sql", sql="SELECT 1"),
    }


def test_every_private_name_we_rely_on_exists(instances):
    version = importlib.metadata.version("apache-airflow-providers-apache-spark")
    assert set(instances) == set(spark_provider.RELIED_ON)
    missing = [f"{cls}.{name}" for cls, names in spark_provider.RELIED_ON.items() for name in names
               if not hasattr(instances[cls], name)]
    assert not missing, (
        f"apache-airflow-providers-apache-spark {version} has no {', '.join(missing)}: hooks/spark_provider.py "
        "relies on them (column lineage would be lost). Adapt that module to this release, or pin the "
        "provider below it in pyproject.toml.")


def test_the_overridden_methods_are_the_providers_own():
    """An override of a method the provider no longer has is never called: each must replace one."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    overridden = [name for name, value in vars(spark_provider.SubmitHookAdapter).items()
                  if name.startswith("_") and not name.startswith("__") and callable(value)]
    assert len(overridden) == 5
    assert all(callable(getattr(SparkSubmitHook, name, None)) for name in overridden), overridden
    assert set(overridden) <= set(spark_provider.RELIED_ON["SparkSubmitHook"])


def test_the_adapter_routes_the_providers_command_through_its_public_methods(instances, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", '{"conn_type": "spark", "host": "local[*]"}')

    class Marked(spark_provider.SubmitHookAdapter):
        def spark_binary_path(self, path):
            return ["/opt/spark/bin/spark-submit"]

        def submit_command(self, command):
            return [*command, "--marked"]

        def masked_command(self, command, mask):
            return mask(command).replace("app.py", "***")

    hook = Marked(conf={"spark.x": "1"}, application_args=["a"])
    cmd = hook._build_spark_submit_command("app.py")
    assert cmd[0] == "/opt/spark/bin/spark-submit" and cmd[-1] == "--marked" and "spark.x=1" in cmd
    assert "***" in hook._mask_cmd(cmd) and "app.py" not in hook._mask_cmd(cmd)
    hook.submit_conf = {**hook.submit_conf, "spark.y": "2"}
    hook.set_application_args(["--dump", "/d"])
    assert "spark.y=2" in hook._build_spark_submit_command("driver.py")
    assert hook._build_spark_submit_command("driver.py")[-4:-1] == ["driver.py", "--dump", "/d"]
    assert hook.submitted is False and hook.connection_info["master"] == "local[*]"


def test_what_the_stock_operators_hold_is_read_here(instances):
    submit = spark_provider.submit_task(instances["SparkSubmitOperator"])
    assert submit.java_class is None and callable(submit.hook)
    sql = spark_provider.sql_task(instances["SparkSqlOperator"])
    assert sql.conn_id == "spark_sql_default"
    settings = spark_provider.sql_hook_settings(sql.hook())
    assert settings["master"] == "local[*]" and settings["name"] == "default-name"  # from the connection
    assert spark_provider.tracks_driver_through_cluster_api(instances["SparkSubmitHook"]) is False
