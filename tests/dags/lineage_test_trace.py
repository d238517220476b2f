"""Three DAGs that share tables, for the column trace across DAGs, no Spark.

``trace_dwd`` builds ``dwd_users`` from ``ods_users`` and ``dim_company``; ``trace_report`` reads
``dwd_users`` into ``company_report``; ``trace_rollup`` reads the report into ``company_rollup``, with
``rollup.users`` an identity of ``report.users`` in its first run and (``run_conf={"version": 2}``)
a sum of ``report.users`` and ``report.company_name``'s length after. Each task pushes the lineage
document a Spark task would, under the same XCom key.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, task

T = "spark_catalog.trace."  # a database of their own: no other test DAG writes these tables
WH = "/warehouse/trace.db/"


def _document(target: str, columns: dict, indirect: tuple = ()) -> dict:
    from airflow_lineage_provider.lineage.model import (
        INDIRECT,
        ColumnInput,
        Dataset,
        LineageReport,
        StatementLineage,
    )

    def ds(name: str) -> Dataset:
        return Dataset(namespace="file", name=WH + name, table=T + name)

    sources = sorted({t for srcs in columns.values() for t, _, _ in srcs} | {t for t, _, _ in indirect})
    statement = StatementLineage(
        index=0, sql=f"INSERT INTO {target} SELECT ...", method="plan", confidence=1.0, target=ds(target),
        inputs=tuple(ds(s) for s in sources),
        columns=tuple((c, tuple(ColumnInput(T + t, f, "DIRECT", sub, f"{t}.{f}") for t, f, sub in srcs))
                      for c, srcs in columns.items()),
        indirect=tuple(ColumnInput(T + t, f, INDIRECT, sub) for t, f, sub in indirect))
    return LineageReport((statement,)).to_dict()


def _push(context, document: dict) -> None:
    context["ti"].xcom_push(key="column_lineage", value=document)


DWD = {"id": [("ods_users", "id", "IDENTITY")], "age": [("ods_users", "birthday", "TRANSFORMATION")],
       "company_name": [("dim_company", "company_name", "IDENTITY")]}
REPORT = {"company_name": [("dwd_users", "company_name", "IDENTITY")], "users": [("dwd_users", "id", "AGGREGATION")],
          "age_band": [("dwd_users", "age", "TRANSFORMATION")]}
ROLLUP_1 = {"name": [("company_report", "company_name", "IDENTITY")],
            "users": [("company_report", "users", "IDENTITY")]}
ROLLUP_2 = {"name": [("company_report", "company_name", "IDENTITY")],
            "users": [("company_report", "users", "AGGREGATION"), ("company_report", "company_name", "AGGREGATION")]}

START = pendulum.datetime(2026, 1, 1, tz="UTC")

with DAG(dag_id="trace_dwd", schedule=None, start_date=START, catchup=False, tags=["test"]) as dwd_dag:
    @task
    def build_dwd(**context):
        _push(context, _document("dwd_users", DWD, (("ods_users", "company_id", "JOIN"),
                                                    ("dim_company", "id", "JOIN"))))

    build_dwd()

with DAG(dag_id="trace_report", schedule=None, start_date=START, catchup=False, tags=["test"]) as report_dag:
    @task
    def build_report(**context):
        _push(context, _document("company_report", REPORT, (("dwd_users", "company_name", "GROUP_BY"),)))

    build_report()

with DAG(dag_id="trace_rollup", schedule=None, start_date=START, catchup=False, tags=["test"]) as rollup_dag:
    @task
    def build_rollup(**context):
        version = int((context["dag_run"].conf or {}).get("version", 1))
        _push(context, _document("company_rollup", ROLLUP_1 if version == 1 else ROLLUP_2))

    build_rollup()
