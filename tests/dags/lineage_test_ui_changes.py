"""A DAG whose second run changes one statement, for the UI's "changes" view, no Spark.

Run it with ``run_conf={"version": 2}`` after a first run: ``build_orders`` then writes ``amount``
with another expression (changed), ``total`` from ``tax`` too (added), ``discount`` from a literal
(it lost all its sources, and its edge is removed) and no longer filters on ``status`` (removed).
``build_report`` is the same in both runs.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, task

T = "spark_catalog.default."
ORDERS, CLEAN, REPORT = T + "orders", T + "orders_clean", T + "orders_report"


def orders_document(version: int) -> dict:
    from airflow_lineage_provider.lineage.model import (
        FILTER,
        IDENTITY,
        INDIRECT,
        TRANSFORMATION,
        ColumnInput,
        Dataset,
        LineageReport,
        StatementLineage,
    )

    def src(field: str, subtype: str = IDENTITY, expression: str = "") -> ColumnInput:
        return ColumnInput(ORDERS, field, "DIRECT", subtype, expression or field)

    if version == 1:
        sql = ("INSERT INTO orders_clean SELECT id, amount * 100, amount, discount FROM orders "
               "WHERE status = 'ok'")
        cols = (("id", (src("id"),)), ("amount", (src("amount", TRANSFORMATION, "amount * 100"),)),
                ("total", (src("amount"),)), ("discount", (src("discount"),)))
        indirect = (ColumnInput(ORDERS, "status", INDIRECT, FILTER),)
    else:
        sql = "INSERT INTO orders_clean SELECT id, round(amount * 100, 2), amount + tax, 0 FROM orders"
        cols = (("id", (src("id"),)), ("amount", (src("amount", TRANSFORMATION, "round(amount * 100, 2)"),)),
                ("total", (src("amount", TRANSFORMATION, "amount + tax"), src("tax", TRANSFORMATION, "amount + tax"))),
                ("discount", ()))
        indirect = ()
    statement = StatementLineage(
        index=0, sql=sql, method="plan", confidence=1.0,
        target=Dataset(namespace="file", name="/warehouse/orders_clean", table=CLEAN),
        inputs=(Dataset(namespace="file", name="/warehouse/orders", table=ORDERS),), columns=cols, indirect=indirect)
    return LineageReport((statement,)).to_dict()


def report_document() -> dict:
    from airflow_lineage_provider.lineage.model import (
        AGGREGATION,
        ColumnInput,
        Dataset,
        LineageReport,
        StatementLineage,
    )

    statement = StatementLineage(
        index=0, sql="INSERT INTO orders_report SELECT sum(total) FROM orders_clean", method="plan", confidence=1.0,
        target=Dataset(namespace="file", name="/warehouse/orders_report", table=REPORT),
        inputs=(Dataset(namespace="file", name="/warehouse/orders_clean", table=CLEAN),),
        columns=(("revenue", (ColumnInput(CLEAN, "total", "DIRECT", AGGREGATION, "sum(total)"),)),))
    return LineageReport((statement,)).to_dict()


with DAG(dag_id="lineage_test_ui_changes", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
         params={"version": 1}) as dag:

    @task
    def build_orders(params=None, ti=None) -> None:
        ti.xcom_push(key="column_lineage", value=orders_document(int(params["version"])))

    @task
    def build_report(ti=None) -> None:
        ti.xcom_push(key="column_lineage", value=report_document())

    build_orders() >> build_report()
