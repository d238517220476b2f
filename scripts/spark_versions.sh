#!/usr/bin/env bash
# Second virtual environments, one per Spark release a cluster may run: `$AIRFLOW_LINEAGE_CACHE/spark-venvs-py<3.N>/<X>` holds only
# `pyspark==X` (its jars and bin/spark-submit are that release's Spark, as a cluster's SPARK_HOME is).
# The version tests (tests/integration/test_spark_versions.py) run the project's driver with each one's
# spark-submit. Cached: a release already installed is not installed again. Offline, a release that cannot be
# installed is reported and skipped (exit 0), and the tests skip it saying why.
#   bash scripts/spark_versions.sh            # the releases of SPARK_VERSIONS below
#   bash scripts/spark_versions.sh 3.5.9      # one release
set -uo pipefail
source "$(dirname "$0")/env.sh"
# The cluster releases the tests run besides the worker's own (4.2.0): the oldest line a cluster still runs
# (Spark 3.5, Scala 2.12) and the newest release (4.3.0, whose pyspark-client is not on PyPI yet).
SPARK_VERSIONS="${SPARK_VERSIONS:-3.5.9 4.3.0}"
PY="${PYTHON:-$VENV/bin/python}"
BASE="${AIRFLOW_LINEAGE_SPARK_VENVS:-$AIRFLOW_LINEAGE_CACHE/spark-venvs-py$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')}"
[ "$#" -gt 0 ] && SPARK_VERSIONS="$*"
mkdir -p "$BASE"
for version in $SPARK_VERSIONS; do
  dir="$BASE/$version"
  if [ -f "$dir/.installed" ]; then echo "spark_versions: $version ready in $dir"; continue; fi
  echo "spark_versions: installing pyspark==$version into $dir (a 300-500 MB download the first time)"
  rm -rf "$dir"
  if "$PY" -m venv "$dir" && "$dir/bin/python" -m pip install -q --disable-pip-version-check "pyspark==$version"; then
    touch "$dir/.installed"
    echo "spark_versions: $version ready in $dir"
  else
    echo "spark_versions: could not install pyspark==$version (offline?); its version tests will be skipped" >&2
    rm -rf "$dir"
  fi
done
exit 0  # a missing release skips its tests; it never fails the set-up
