"""DAGs that carry a planted credential in every place a user puts one: the tests grep every artefact
of their runs (task log, XCom, OpenLineage events, errors) for it."""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import DAG

from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator

PLANTED = "PlantedPw4711"
OUT = os.path.join(os.environ.get("AIRFLOW_HOME", "/tmp"), "secrets_out")
# A JDBC URL with the password as a parameter and as user info, and an OPTIONS password: in a string
# literal (printed with the query's rows) and in the first line of the statements.
URL = f"jdbc:postgresql://db.example:5432/shop?user=etl&password={PLANTED}"
USERINFO = f"jdbc:postgresql://etl:{PLANTED}@db.example:5432/shop"

with DAG(dag_id="lineage_secrets_ok", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as ok:
    SparkSqlLineageOperator(
        task_id="secret_in_sql",
        retries=0,
        conf={"spark.hadoop.fs.s3a.access.key": f"AKIA{PLANTED}", "spark.hadoop.fs.s3a.secret.key": PLANTED},
        sql=(
            f"SELECT '{URL}' AS url, '{USERINFO}' AS other;\n"
            f"INSERT OVERWRITE DIRECTORY '{OUT}' USING parquet SELECT '{URL}' AS url;\n"
        ),
    )

with DAG(dag_id="lineage_secrets_parse_error", schedule=None,
         start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as parse_error:
    SparkSqlLineageOperator(
        task_id="secret_in_bad_sql",
        retries=0,
        sql=(
            "CREATE TEMPORARY VIEW src USING org.apache.spark.sql.jdbc\n"
            f"  OPTIONS (url '{USERINFO}', dbtable 'orders', password '{PLANTED}')\n"
            f"  WHERE '{URL}' = url SELEC;\n"
        ),
    )

with DAG(dag_id="lineage_secrets_run_error", schedule=None,
         start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as run_error:
    SparkSqlLineageOperator(
        task_id="secret_in_failing_sql",
        retries=0,
        sql=f"SELECT no_such_column, '{URL}' AS url FROM VALUES (1) AS t(a);\n",
    )
