"""A DAG for the UI tests, no Spark: tasks push lineage documents built with the model, as the operator does.

``hostile`` has a column and a table named like HTML (the page must show them as text), and a static
lineage said to differ from the plan's (the statement must show the edges);
``no_lineage`` pushes nothing (the tab must say so); ``mapped`` has one document per map index.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, task

XSS_COLUMN = "<img src=x onerror=alert(1)>"
XSS_TABLE = "spark_catalog.default.<script>alert(2)</script>"
# The static extractor's view, said to differ: the statement shows it, as text.
XSS_DIFFERS = f"{XSS_COLUMN} <- spark_catalog.default.src.<b>other</b> IDENTITY"


def _document(target: str, column: str, source: str, field: str, expression: str, differs: str = "") -> dict:
    from airflow_lineage_provider.lineage.model import (
        TRANSFORMATION,
        Agreement,
        ColumnInput,
        Dataset,
        LineageReport,
        StatementLineage,
    )

    statement = StatementLineage(
        index=0, sql=f"INSERT INTO {target} SELECT {expression} FROM {source}", method="plan", confidence=1.0,
        target=Dataset(namespace="file", name=f"/warehouse/{target}", table=target),
        inputs=(Dataset(namespace="file", name=f"/warehouse/{source}", table=source),),
        columns=((column, (ColumnInput(source, field, "DIRECT", TRANSFORMATION, expression),)),),
        agreement=Agreement("differs", only_static=(differs,)) if differs else Agreement("same"),
    )
    return LineageReport((statement,)).to_dict()


with DAG(dag_id="lineage_test_ui", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:

    @task
    def hostile(ti=None) -> None:
        ti.xcom_push(key="column_lineage", value=_document(
            XSS_TABLE, XSS_COLUMN, "spark_catalog.default.src", "<b>bold</b>", "upper('<i>x</i>')",
            differs=XSS_DIFFERS))

    @task
    def no_lineage() -> None:
        return None

    @task
    def mapped(n: int, ti=None) -> None:
        ti.xcom_push(key="column_lineage", value=_document(
            f"spark_catalog.default.part_{n}", f"col_{n}", "spark_catalog.default.src", "v", f"v + {n}"))

    hostile() >> no_lineage()
    mapped.expand(n=[0, 1])
