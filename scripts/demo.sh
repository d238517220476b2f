#!/usr/bin/env bash
# First command of the README: set everything up, run the example DAG on the embedded
# local Spark, and print the column lineage it pushed to XCom.
set -euo pipefail
source "$(dirname "$0")/env.sh"
bash "$ROOT/scripts/setup.sh"
source "$(dirname "$0")/env.sh"
cd "$ROOT"
echo "demo: running DAG spark_column_lineage_demo (airflow dags test, embedded local Spark)"
log="$AIRFLOW_HOME/demo-run.log"
if ! airflow dags test spark_column_lineage_demo >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "demo: the DAG run failed; full log in $log" >&2
  exit 1
fi
grep -q "state=success" "$log" || { tail -n 60 "$log" >&2; echo "demo: the DAG run did not succeed; log in $log" >&2; exit 1; }
echo "demo: DAG run succeeded (log in $log). Column lineage from XCom 'column_lineage':"
echo
airflow-lineage show --dag-id spark_column_lineage_demo
echo
echo "demo: running DAG spark_company_report_demo (DAG B: a report read from dwd_users, which DAG A wrote)"
if ! airflow dags test spark_company_report_demo >"$AIRFLOW_HOME/demo-report-run.log" 2>&1 \
    || ! grep -q "state=success" "$AIRFLOW_HOME/demo-report-run.log"; then
  tail -n 60 "$AIRFLOW_HOME/demo-report-run.log" >&2
  echo "demo: the report DAG run failed; full log in $AIRFLOW_HOME/demo-report-run.log" >&2
  exit 1
fi
echo "demo: company_report.company_name across both DAGs:"
airflow-lineage trace spark_catalog.default.company_report.company_name --upstream
echo
echo "Try it on your own SQL:  $VENV/bin/airflow-lineage extract --sql my_script.sql --dry-run"
echo
# How to look at it in the Airflow UI: the plugin's "Column lineage" tab of this run.
"$VENV/bin/python" - <<'PY'
import os, socket, urllib.parse
from sqlalchemy import select
from airflow.models.dagrun import DagRun
from airflow.utils.session import create_session

with create_session() as session:
    run_id = session.scalars(select(DagRun.run_id).where(DagRun.dag_id == "spark_column_lineage_demo")
                             .order_by(DagRun.id.desc())).first()
port = 8080
with socket.socket() as s:
    if s.connect_ex(("127.0.0.1", port)) == 0:  # 8080 taken: pick a free port
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
home, venv = os.environ["AIRFLOW_HOME"], os.environ["VENV"]
base = f"http://127.0.0.1:{port}"
run = urllib.parse.quote(run_id, safe="")
print("Column lineage in the Airflow UI: start the api-server (Ctrl-C stops it):")
print(f"  AIRFLOW_HOME={home} AIRFLOW__CORE__LOAD_EXAMPLES=False {venv}/bin/airflow api-server -H 127.0.0.1 -p {port}")
print(f"then open {base}/dags/spark_column_lineage_demo/runs/{run}/tasks/build_dwd_users/plugin/column-lineage")
print(f"  (the whole run: {base}/dags/spark_column_lineage_demo/runs/{run}/plugin/column-lineage-run;")
print(f"   a column across both DAGs: {base}/plugin/column-lineage-trace)")
print(f"and sign in as admin with the password in {home}/simple_auth_manager_passwords.json.generated")
print("(the api-server writes that file when it first starts).")
PY
