"""plugins/stock.py: the listener hands a running stock Spark task to operators/stock.py, and never fails it."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from airflow_lineage_provider.plugins.stock import StockSparkLineagePlugin, StockSparkListener


def stock_sql_task():
    from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator

    return SparkSqlOperator(task_id="sql", sql="INSERT INTO t SELECT 1")


def test_the_plugin_registers_the_listener():
    assert StockSparkLineagePlugin.name == "column_lineage_stock"
    assert [type(listener) for listener in StockSparkLineagePlugin.listeners] == [StockSparkListener]


def test_a_running_stock_task_is_adopted_when_the_option_is_on(monkeypatch):
    monkeypatch.setenv("AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS", "True")
    task = stock_sql_task()
    StockSparkListener().on_task_instance_running(None, SimpleNamespace(task=task))
    assert type(task).__module__ == "airflow_lineage_provider.operators.stock"
    assert type(task).__name__ == "SparkSqlOperator"


def test_with_the_option_off_the_task_is_left_as_it_is(monkeypatch):
    monkeypatch.delenv("AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS", raising=False)
    task = stock_sql_task()
    StockSparkListener().on_task_instance_running(None, SimpleNamespace(task=task))
    assert type(task).__module__.startswith("airflow.providers")


def test_a_failure_to_adopt_is_one_warning_never_a_failed_task(monkeypatch, caplog):
    from airflow_lineage_provider.operators import stock

    def broken(task):
        raise RuntimeError("class swap refused")

    monkeypatch.setattr(stock, "adopt", broken)
    task = stock_sql_task()
    with caplog.at_level(logging.WARNING, logger="airflow_lineage_provider.plugins.stock"):
        StockSparkListener().on_task_instance_running(None, SimpleNamespace(task=task))
    assert "Column lineage: task sql runs without the capture: RuntimeError: class swap refused" in caplog.text
    assert type(task).__module__.startswith("airflow.providers")
    StockSparkListener().on_task_instance_running(None, SimpleNamespace())  # no task: nothing to do
