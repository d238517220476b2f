"""Test session set-up: a private Airflow home (SQLite) and embedded-Spark state per run.

Set before anything imports Airflow, so no test touches the developer's own
``.airflow`` directory or the demo's Spark warehouse.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers import DATA, ROOT  # imports no Airflow: the environment below is set first

# The slowest tests and the time per module at the end of every run; which worker runs which tests.
pytest_plugins = ("tests.durations", "tests.workers")

_HOME = tempfile.mkdtemp(prefix="airflow-lineage-tests-")
DAGS = Path(_HOME) / "dags"
# dag.test() reloads a DAG from the dags folder: the example DAGs and the tests' own go there.
shutil.copytree(ROOT / "dags_examples", DAGS, ignore=shutil.ignore_patterns("__pycache__"))
for _dag_file in (Path(__file__).resolve().parent / "dags").glob("*.py"):
    shutil.copy(_dag_file, DAGS / _dag_file.name)
os.environ["AIRFLOW_HOME"] = _HOME
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(DAGS)
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW_LINEAGE_LOCAL_DIR"] = os.path.join(_HOME, "spark_local")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ["AIRFLOW_LINEAGE_TEST_DATA"] = str(DATA)  # the test DAGs find the test applications here
os.environ.pop("AIRFLOW__OPENLINEAGE__TRANSPORT", None)
# Short JVMs on two cores from a class-data archive of Spark's classes (tests/jvm.py; made once per Spark install).
# A developer's own setting wins.
if "SPARK_SUBMIT_OPTS" not in os.environ:
    from tests.jvm import jvm_options

    os.environ["SPARK_SUBMIT_OPTS"] = jvm_options()
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", os.environ["SPARK_SUBMIT_OPTS"])
# py4j logs at INFO while the interpreter shuts down, when logging's streams are already closed.
logging.getLogger("py4j").setLevel(logging.WARNING)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_HOME, ignore_errors=True)


def venv_bin(name: str) -> str:
    """A console script of the running interpreter's environment."""
    return str(Path(sys.executable).parent / name)


@pytest.fixture(scope="session")
def airflow_db() -> str:
    """A migrated SQLite metadata database in the session's Airflow home."""
    subprocess.run([venv_bin("airflow"), "db", "migrate"], check=True, capture_output=True, env=os.environ)
    return _HOME

