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
        "operators": [
            {"integration-name": "Apache Spark", "python-modules": ["airflow_lineage_provider.operators.spark_lineage"]}
        ],
    }
