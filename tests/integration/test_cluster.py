"""The same jobs on a real Spark standalone cluster (master + one worker on 127.0.0.1).

The example DAG runs through an Airflow ``spark`` connection and must give the lineage the
embedded run gives; a PySpark application runs with ``dump_uri`` on a shared ``file://``
directory, which the driver writes through Hadoop's FileSystem API and the hook reads back.
Client deploy mode for Python: Spark's standalone master refuses cluster mode for Python applications; a jar
runs in cluster mode, under the JVM listener.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from airflow_lineage_provider.hooks import local_spark
from tests.helpers import document_edges as edges
from tests.integration.spark_cluster import StandaloneCluster
from tests.integration.test_example_dag import SEED_JOIN, SEED_SINGLE, load_dag, xcoms

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow]

CONN_ID = "spark_test_cluster"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = StandaloneCluster(tmp_path_factory.mktemp("standalone"))
    try:
        yield c.start()
    finally:
        c.stop()
    assert all(p.poll() is not None for p in c.processes) or not c.processes


@pytest.fixture(scope="module")
def cluster_env(cluster, tmp_path_factory):
    """An Airflow `spark` connection to the cluster, and a catalog of the cluster runs' own.

    The driver runs on this machine (client mode) and the worker too, so a Derby catalog and a
    warehouse in a directory of their own are reachable by both, and never collide with the
    embedded Spark's or the test session's in-process Spark's Derby.
    """
    catalog = tmp_path_factory.mktemp("cluster_catalog")
    conf = {**local_spark.local_conf(str(catalog)), "spark.executor.memory": "512m", "spark.cores.max": "1",
            "spark.pyspark.python": sys.executable,
            # The executors the worker starts are short JVMs too (tests/jvm.py); the driver has SPARK_SUBMIT_OPTS.
            "spark.executor.extraJavaOptions": os.environ["SPARK_SUBMIT_OPTS"]}
    mp = pytest.MonkeyPatch()
    mp.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}",
              json.dumps({"conn_type": "spark", "host": "spark://127.0.0.1", "port": cluster.port}))
    mp.setenv("AIRFLOW_LINEAGE_DEMO_CONN_ID", CONN_ID)
    mp.setenv("AIRFLOW_LINEAGE_DEMO_CONF", json.dumps(conf))
    yield conf, catalog
    mp.undo()


def test_example_dag_on_the_cluster_gives_the_embedded_lineage(airflow_db, cluster, cluster_env):
    from tests.conftest import DAGS

    conf, catalog = cluster_env
    dag = load_dag(DAGS / "spark_column_lineage_demo.py")
    assert {t.conn_id for t in dag.tasks} == {CONN_ID}
    run = dag.test()
    assert run.state == "success", cluster.logs()
    docs = xcoms(dag.dag_id, run.run_id)
    writes = [s for s in docs["build_dwd_users"]["statements"] if s["target"]]
    assert [s["index"] for s in writes] == [0, 1]
    single, join = writes
    assert edges(single) == SEED_SINGLE
    assert edges(join) == SEED_JOIN
    assert {(i["table"], i["field"], i["subtype"]) for i in join["indirect"]} == {
        ("spark_catalog.default.ods_users", "id", "JOIN"), ("spark_catalog.default.dim_company", "user_id", "JOIN")}
    for s in writes:
        assert s["method"] == "plan" and s["confidence"] == 1.0 and s["warnings"] == []
        assert s["target"]["table"] == "spark_catalog.default.dwd_users"
        assert s["target"]["name"] == str(catalog / "warehouse" / "dwd_users")
    # The jobs really ran on the cluster: the master lists them as finished applications.
    finished = [a["name"] for a in cluster.state().get("completedapps", [])]
    assert sum(name.startswith("airflow-lineage-") for name in finished) >= 2, finished


def test_dump_uri_on_a_shared_directory_written_through_hadoop_fs(airflow_db, cluster, cluster_env, tmp_path):
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from tests.conftest import DATA

    conf, _ = cluster_env
    shared = tmp_path / "shared"
    out = tmp_path / "initials"
    hook = SparkLineageHook(conn_id=CONN_ID, conf=conf, dump_uri=f"file://{shared}", keep_dump=True,
                            name="airflow-lineage-dump-uri")
    result = hook.run_application(str(DATA / "apps" / "cluster_job.py"), [str(out)])
    [run_dir] = shared.iterdir()
    assert run_dir.name.startswith("run-")
    # Hadoop's local file system writes a checksum beside each file: the driver wrote through it.
    files = {p.name for p in run_dir.iterdir()}
    assert {"plans.jsonl", "result.json", ".plans.jsonl.crc", ".result.json.crc"} <= files
    assert result.error is None and len(result.records) == 1

    from airflow_lineage_provider.lineage.extract import from_records

    [st] = from_records(result.records).statements
    assert (st.target.namespace, st.target.name) == ("file", str(out))
    assert {c: {(i.table, i.field, i.subtype) for i in inputs} for c, inputs in st.columns} == {
        "id": {("spark_catalog.default.ods_users", "id", "IDENTITY")},
        "initial": {("spark_catalog.default.ods_users", "name", "TRANSFORMATION")},
        "born": {("spark_catalog.default.ods_users", "birthday", "TRANSFORMATION")},
    }
    assert (out / "_SUCCESS").exists(), "the executor on the worker wrote the result"


def jar_lineage(statements) -> list[tuple[tuple[str, str], dict]]:
    """WriteRange's two writes (``range``, then ``total`` read back from it): target and edges."""
    return [((s.target.namespace, s.target.name),
             {c: {(i.table, i.field, i.subtype) for i in inputs} for c, inputs in s.columns}) for s in statements]


def expected_jar_lineage(out) -> list[tuple[tuple[str, str], dict]]:
    source = str(out / "range")
    return [(("file", source), {"id": set(), "tens": set()}),
            (("file", str(out / "total")), {"id": {(source, "id", "IDENTITY")},
                                            "total": {(source, "id", "TRANSFORMATION"),
                                                      (source, "tens", "TRANSFORMATION")}})]


def test_a_jar_in_client_mode_on_the_cluster_runs_under_the_listener(airflow_db, cluster, cluster_env, tmp_path):
    """The driver on this worker, the executors on the cluster's worker: the listener writes a local dump."""
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.lineage.extract import from_records
    from tests.rowlevel import jvm_app_jar

    conf, _ = cluster_env
    out = tmp_path / "out"
    hook = SparkLineageHook(conn_id=CONN_ID, java_class="lineagetest.WriteRange", conf=conf,
                            name="airflow-lineage-jar-client-mode")
    result = hook.run_application(jvm_app_jar(), [str(out / "range"), str(out / "total")])
    assert result.error is None and result.warnings == []
    assert jar_lineage(from_records(result.records, result.warnings).statements) == expected_jar_lineage(out)
    assert (out / "total" / "_SUCCESS").exists()
    # The application names itself (its builder's appName wins over spark-submit's --name).
    finished = [a["name"] for a in cluster.state().get("completedapps", [])]
    assert "write-range" in finished, finished


def test_a_jar_in_standalone_cluster_mode_runs_under_the_listener_with_dump_uri(airflow_db, cluster, cluster_env,
                                                                              tmp_path, monkeypatch):
    """Spark's standalone master runs a JVM application's driver on a worker (cluster deploy mode): the listener
    jar reaches it through dump_uri, the hook follows the driver to its end as the Spark provider does (through
    the master's REST server), then reads the dump the listener wrote there."""
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.lineage.extract import from_records
    from tests.rowlevel import jvm_app_jar

    conf, _ = cluster_env
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_TEST_CLUSTER_MODE", json.dumps({
        "conn_type": "spark", "host": "spark://127.0.0.1", "port": cluster.port,
        "extra": {"deploy-mode": "cluster", "rest-port": cluster.rest_port}}))
    shared, out = tmp_path / "shared", tmp_path / "out"
    hook = SparkLineageHook(conn_id="spark_test_cluster_mode", java_class="lineagetest.WriteRange",
                            conf={**conf, "spark.driver.memory": "512m",  # the worker starts this driver
                                  "spark.driver.extraJavaOptions": f"{conf['spark.driver.extraJavaOptions']} "
                                                                   f"{os.environ['SPARK_SUBMIT_OPTS']}"},
                            dump_uri=f"file://{shared}",
                            keep_dump=True, name="airflow-lineage-jar-cluster-mode")
    result = hook.run_application(jvm_app_jar(), [str(out / "range"), str(out / "total")])
    [run_dir] = shared.iterdir()
    assert {"plans.jsonl", "result.json", "airflow-lineage-listener.jar"} <= {p.name for p in run_dir.iterdir()}
    assert hook._driver_status == "FINISHED" and result.error is None
    assert jar_lineage(from_records(result.records, result.warnings).statements) == expected_jar_lineage(out)
    assert (out / "total" / "_SUCCESS").exists(), "the driver on the worker ran the jar"
