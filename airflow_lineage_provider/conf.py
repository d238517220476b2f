"""The provider's options, read in one place (as Airflow's OpenLineage provider reads its own).

Each is read when a task runs, never at import: a DAG file that imports the provider costs no
configuration lookup, and a test can change an option between two tasks.
"""

from __future__ import annotations

SECTION = "column_lineage"
STOCK_SPARK_OPERATORS = "stock_spark_operators"
CONNECT_DUMP_BASE = "connect_dump_base"


def stock_spark_operators() -> bool:
    """``[column_lineage] stock_spark_operators``: unchanged ``SparkSubmitOperator`` and
    ``SparkSqlOperator`` tasks run under the plan capture (off by default)."""
    from airflow.sdk import conf

    return conf.getboolean(SECTION, STOCK_SPARK_OPERATORS, fallback=False)


def connect_dump_base() -> str | None:
    """``[column_lineage] connect_dump_base``: where this worker reads a Spark Connect server's lineage
    records (``None``: where the server says it writes them, ``hooks/spark_connect.server_base``)."""
    from airflow.sdk import conf

    return conf.get(SECTION, CONNECT_DUMP_BASE, fallback="") or None


def openlineage_spark_injection() -> tuple[bool, bool]:
    """``[openlineage] spark_inject_parent_job_info`` and ``spark_inject_transport_info``, the Spark
    provider's own defaults for adding OpenLineage settings to a job's Spark conf (False when unset)."""
    from airflow.sdk import conf

    return (conf.getboolean("openlineage", "spark_inject_parent_job_info", fallback=False),
            conf.getboolean("openlineage", "spark_inject_transport_info", fallback=False))
