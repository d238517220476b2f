"""A JVM application (a jar) under the provider's JVM listener, as users run it: SparkSubmitLineageOperator in a
DAG (real dag.test, real spark-submit on the embedded Spark), the jar unchanged (``tests/java/jvmapp``, compiled
with javac at test time)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.conftest import DATA, venv_bin
from tests.helpers import document_edges
from tests.integration.test_example_dag import xcoms
from tests.integration.test_pyspark_app import load_test_dag
from tests.rowlevel import jvm_app_jar

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow]


@pytest.fixture(scope="module")
def jar_run(airflow_db, spark):
    """One run of ``lineage_test_jar`` (tests/dags/lineage_test_apps.py): (run, XCom documents, rows written, the
    user's own listener's marks)."""
    from tests.dags.lineage_test_apps import JAR_MARK, JAR_OUT

    mp = pytest.MonkeyPatch()
    mp.setenv("AIRFLOW_LINEAGE_TEST_JVM_APP", jvm_app_jar())
    shutil.rmtree(JAR_OUT, ignore_errors=True)
    JAR_MARK.unlink(missing_ok=True)
    try:
        dag = load_test_dag("jar_app")
        run = dag.test()
    finally:
        mp.undo()
    data = {name: sorted(tuple(r) for r in spark.read.parquet(str(JAR_OUT / name)).collect())
            for name in ("range", "total")}
    return run, xcoms(dag.dag_id, run.run_id), data, JAR_MARK.read_text().split()


def test_the_jar_runs_and_writes_as_it_would_alone(jar_run):
    run, _, data, _ = jar_run
    assert run.state == "success"
    assert data == {"range": [(0, 0), (1, 10), (2, 20)], "total": [(1, 11), (2, 22)]}


def test_each_write_of_the_jar_is_in_xcom_once_edge_by_edge(jar_run):
    from tests.dags.lineage_test_apps import JAR_OUT

    _, docs, _, _ = jar_run
    doc = docs["write_range"]
    assert doc.get("warnings", []) == []
    first, second = doc["statements"]
    assert [(s["index"], s["target"]["namespace"], s["target"]["name"], s["target"]["mode"], s["method"])
            for s in (first, second)] == [(0, "file", str(JAR_OUT / "range"), "overwrite", "plan"),
                                          (1, "file", str(JAR_OUT / "total"), "overwrite", "plan")]
    assert document_edges(first) == {"id": set(), "tens": set()}  # from range(3): no dataset read
    source = str(JAR_OUT / "range")
    assert document_edges(second) == {"id": {(source, "id", "IDENTITY")},
                                      "total": {(source, "id", "TRANSFORMATION"), (source, "tens", "TRANSFORMATION")}}
    assert [(i["table"], i["field"], i["subtype"]) for i in second["indirect"]] == [(source, "tens", "FILTER")]
    assert all(s["confidence"] == 1.0 and s["warnings"] == [] for s in doc["statements"])


def test_the_users_own_query_listener_still_runs_beside_ours(jar_run):
    _, _, _, marks = jar_run
    assert marks == ["command", "command"]  # MarkListener saw both writes: the listener list was appended to


def test_the_jars_lineage_is_what_our_python_driver_gives_for_the_same_writes(jar_run, tmp_path):
    """tests/data/apps/write_range.py makes the jar's writes in PySpark: the two documents agree edge for edge."""
    from tests.dags.lineage_test_apps import JAR_OUT

    _, docs, _, _ = jar_run
    env = {**os.environ, "AIRFLOW_LINEAGE_LOCAL_DIR": str(tmp_path / "state")}
    proc = subprocess.run([venv_bin("airflow-lineage"), "extract", "--app", str(DATA / "apps" / "write_range.py"),
                           "--format", "json", "--conf", "spark.sql.catalogImplementation=in-memory", "--",
                           str(tmp_path / "range"), str(tmp_path / "total")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    python = json.loads(proc.stdout)["statements"]

    def comparable(statements: list[dict], out: str) -> list[str]:
        # The same document but for where each ran (its output directory) and the SQL text neither has.
        return [json.dumps({k: v for k, v in s.items() if k != "sql"}, sort_keys=True).replace(out, "OUT")
                for s in statements]

    assert comparable(docs["write_range"]["statements"], str(JAR_OUT)) == comparable(python, str(tmp_path))
