"""Provider metadata read by Airflow's ProvidersManager (``apache_airflow_provider`` entry point)."""

from __future__ import annotations

from typing import Any


def get_provider_info() -> dict[str, Any]:
    return {
        "package-name": "airflow-lineage-provider",
        "name": "Spark column lineage",
        "description": "Spark SQL and PySpark with column-level (field) lineage: XCom, OpenLineage and a UI view.",
        "versions": ["0.1.0"],
        "hooks": [
            {"integration-name": "Apache Spark", "python-modules": ["airflow_lineage_provider.hooks.spark_lineage"]}
        ],
        # Read by `airflow config list` and Airflow's conf (the provider's defaults); both off or empty by default.
        "config": {
            "column_lineage": {
                "description": "Column lineage of Spark jobs (airflow-lineage-provider).",
                "options": {
                    "stock_spark_operators": {
                        "description": (
                            "Give column lineage to tasks of the unchanged SparkSubmitOperator (PySpark "
                            "applications) and SparkSqlOperator of apache-airflow-providers-apache-spark: they "
                            "run under the plan capture and push XCom column_lineage, OpenLineage column-lineage "
                            "facets and asset events, as SparkSqlLineageOperator does. The job runs with the "
                            "same connection, master, conf and arguments; lineage never changes a task's outcome. "
                            "Also @task.pyspark and PySparkOperator tasks: on a Spark Connect session through the "
                            "server's listener (see connect_dump_base), on a classic session in the task's process."
                        ),
                        "version_added": "0.1.0",
                        "type": "boolean",
                        "example": "True",
                        "default": "False",
                    },
                    "connect_dump_base": {
                        "description": (
                            "Where this worker reads the lineage a Spark Connect server's listener writes (the "
                            "server's spark.airflow.lineage.connect.base as this worker reaches it, e.g. a shared "
                            "mount at another path). Empty: the server's own base, which the task reads from the "
                            "server (the same s3a://, hdfs:// or shared path on both sides)."
                        ),
                        "version_added": "0.1.0",
                        "type": "string",
                        "example": "/mnt/lineage",
                        "default": "",
                    },
                },
            }
        },
        "operators": [
            {"integration-name": "Apache Spark", "python-modules": ["airflow_lineage_provider.operators.spark_lineage"]}
        ],
    }
