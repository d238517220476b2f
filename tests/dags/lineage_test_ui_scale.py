"""A generated DAG for the UI at scale, no Spark: a chain of tasks, each writing a wide table.

Task ``build_t{i}`` reads ``scale_t{i-1}`` joined with ``dim_keys`` on ``key`` and writes ``scale_t{i}``:
every column from the same column upstream (identity, or a transformation every third column), and
the join keys as indirect inputs of every column it writes, so a click on a key has a value path (the
key itself) and thousands of columns "through the join key". The UI tests draw a small one;
``bench/ui_scale.py`` makes 5 x 100 and 20 x 500 (10,000 columns) from the same function.
"""

from __future__ import annotations

import pendulum
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG

T = "spark_catalog.default."


def table(i: int) -> str:
    return f"{T}scale_t{i}"


def columns(width: int) -> list[str]:
    return ["key"] + [f"c{j:03d}" for j in range(1, width)]


def document(i: int, width: int) -> dict:
    """The lineage document of task ``i``, as the operator would push it."""
    from airflow_lineage_provider.lineage.model import (
        IDENTITY,
        INDIRECT,
        JOIN,
        TRANSFORMATION,
        ColumnInput,
        Dataset,
        LineageReport,
        StatementLineage,
    )

    source, target, dim = table(i - 1), table(i), T + "dim_keys"
    cols = []
    for j, name in enumerate(columns(width)):
        if j and j % 3 == 0:
            cols.append((name, (ColumnInput(source, name, "DIRECT", TRANSFORMATION, f"coalesce(s.{name}, d.fallback)"),)))
        else:
            cols.append((name, (ColumnInput(source, name, "DIRECT", IDENTITY, name),)))
    select = ", ".join(f"s.{c}" for c in columns(width)[:6])
    statement = StatementLineage(
        index=0, sql=f"INSERT OVERWRITE TABLE {target} SELECT {select}, ... FROM {source} s JOIN {dim} d ON s.key = d.key",
        method="plan", confidence=1.0,
        target=Dataset(namespace="file", name=f"/warehouse/scale_t{i}", table=target, mode="overwrite"),
        inputs=(Dataset(namespace="file", name=f"/warehouse/scale_t{i - 1}", table=source),
                Dataset(namespace="file", name="/warehouse/dim_keys", table=dim)),
        columns=tuple(cols),
        indirect=(ColumnInput(source, "key", INDIRECT, JOIN), ColumnInput(dim, "key", INDIRECT, JOIN)),
    )
    return LineageReport((statement,)).to_dict()


def _push(i: int, width: int, ti=None) -> None:
    ti.xcom_push(key="column_lineage", value=document(i, width))


def scale_dag(dag_id: str, tasks: int, width: int) -> DAG:
    """``tasks`` chained tasks, each writing a table of ``width`` columns."""
    with DAG(dag_id=dag_id, schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
             tags=["lineage-scale"]) as dag:
        previous = None
        for i in range(1, tasks + 1):
            op = PythonOperator(task_id=f"build_t{i}", python_callable=_push, op_kwargs={"i": i, "width": width})
            if previous is not None:
                previous >> op
            previous = op
    return dag


# The UI tests' run: over the page's collapse threshold (300 columns), small enough to run in seconds.
dag = scale_dag("lineage_test_ui_scale", 4, 100)
