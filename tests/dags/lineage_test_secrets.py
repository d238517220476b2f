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

# Every spelling of issue 24: SET of a secret conf (with and without spaces, quoted), OPTIONS keys that
# are no bare word (quoted, backquoted, camelCase, with separators) on a view a write reads, a password
# holding an escaped quote, and comments holding a password (on their own line and after a statement).
SPELLINGS = (
    f"SET spark.hadoop.fs.s3a.secret.key={PLANTED};\n"
    f"SET spark.some.password = {PLANTED};\n"
    f"SET spark.hadoop.fs.azure.sas.raw.acct.blob.core.windows.net='{PLANTED}';\n"
    f"-- password={PLANTED}\n"
    "CREATE TEMPORARY VIEW secret_src USING parquet\n"
    f"  OPTIONS (path '{OUT}', aws_secret_access_key '{PLANTED}', 'sfPassword' = '{PLANTED}',\n"
    f"           `fs.azure.account.key.acct.dfs.core.windows.net` \"{PLANTED}\", sasToken = '{PLANTED}',\n"
    f"           password 'ab''{PLANTED}', 'x-api-key' 'ab\\'{PLANTED}');\n"
    f"/* the service token is {PLANTED} */\n"
    f"INSERT OVERWRITE DIRECTORY '{OUT}_copy' USING parquet SELECT url FROM secret_src; -- token: {PLANTED}\n"
)

with DAG(dag_id="lineage_secrets_ok", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as ok:
    SparkSqlLineageOperator(
        task_id="secret_in_sql",
        retries=0,
        conf={"spark.hadoop.fs.s3a.access.key": f"AKIA{PLANTED}", "spark.hadoop.fs.s3a.secret.key": PLANTED,
              "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net": PLANTED},
        sql=(
            f"SELECT '{URL}' AS url, '{USERINFO}' AS other;\n"
            f"INSERT OVERWRITE DIRECTORY '{OUT}' USING parquet SELECT '{URL}' AS url;\n"
            + SPELLINGS
        ),
    )

with DAG(dag_id="lineage_secrets_parse_error", schedule=None,
         start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as parse_error:
    SparkSqlLineageOperator(
        task_id="secret_in_bad_sql",
        retries=0,
        sql=(
            f"CREATE TEMPORARY VIEW src USING org.apache.spark.sql.jdbc -- password={PLANTED}\n"
            f"  OPTIONS (url '{USERINFO}', dbtable 'orders', password 'ab''{PLANTED}', 'sfPassword' = '{PLANTED}', "
            f"`fs.azure.account.key.a.dfs.core.windows.net` \"{PLANTED}\", aws_secret_access_key 'x\\'{PLANTED}')\n"
            f"  WHERE '{URL}' = url SELEC;\n"
        ),
    )

with DAG(dag_id="lineage_secrets_run_error", schedule=None,
         start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as run_error:
    SparkSqlLineageOperator(
        task_id="secret_in_failing_sql",
        retries=0,
        sql=(f"SELECT no_such_column, '{URL}' AS url /* password: {PLANTED} */, 'k' AS sasToken "
             f"FROM VALUES (1) AS t(a) -- token={PLANTED}\n;\n"),
    )

# Issue 42: credentials that are not names. A stock SparkSubmitOperator (run under the capture by the stock option)
# whose application arguments hold a password after a flag, behind a value the Spark provider's masker takes for a
# key ("...SECRET9"), and which writes to a path with a password in one of its directories.
STOCK_PATH = f"{OUT}_stock/out?x=1&password={PLANTED}/ü"
STOCK_ARGS = [STOCK_PATH, "JARARGSECRET9", "--db-password", PLANTED, f"--password={PLANTED}", "--token", PLANTED]

with DAG(dag_id="lineage_secrets_stock_args", schedule=None,
         start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as stock_args:
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    SparkSubmitOperator(
        task_id="secret_in_args", conn_id="spark_local", retries=0,
        conf={"spark.ui.enabled": "false", "spark.hadoop.fs.s3a.secret.key": PLANTED},
        application=os.path.join(os.environ.get("AIRFLOW_LINEAGE_TEST_DATA", os.path.dirname(__file__)), "apps",
                                 "squares.py"),
        application_args=STOCK_ARGS,
    )
    from airflow.providers.apache.spark.operators.spark_sql import SparkSqlOperator

    # The stock SQL operator's SQL and conf (the UI's Rendered Template keeps both).
    SparkSqlOperator(
        task_id="secret_in_stock_sql", conn_id="spark_local", retries=0,
        conf={"spark.hadoop.fs.s3a.secret.key": PLANTED},
        sql=(f"SET spark.some.password = {PLANTED};\n"
             f"INSERT OVERWRITE DIRECTORY '{OUT}_stock_sql' USING parquet SELECT 1 AS a -- token: {PLANTED}\n;\n"),
    )
