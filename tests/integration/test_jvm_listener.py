"""The JVM listener (``job/listener``) against the Python driver's capture: one Java application and
one PySpark application make the same writes (``tests/data/apps/seed_writes.*``, the SQL seed shared),
and their lineage must be equal edge for edge, each write reported once.

The Java application is compiled at test time against pyspark's jars and submitted with
``spark-submit`` and the listener's two settings only, as the hook submits a user's jar.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from airflow_lineage_provider.hooks import local_spark
from airflow_lineage_provider.job.dump import read_dump
from airflow_lineage_provider.lineage.extract import from_records
from tests.conftest import DATA, venv_bin
from tests.integration import postgres
from tests.integration.postgres import PASSWORD, USER
from tests.rowlevel import jvm_app_jar

pytestmark = [pytest.mark.spark, pytest.mark.slow]

LISTENER_JAR = str(Path(local_spark.DRIVER).parent / "listener" / "airflow-lineage-listener.jar")
LISTENER_CLASS = "airflow_lineage.listener.LineageListener"
SEED = DATA / "apps" / "seed_writes.sql"
# The writes both applications make, in order: the seed's seven, then the DataFrame API's four.
WRITES = [*(f"spark_catalog.seed.{t}" for t in ("orders", "custs", "totals", "ranked", "big_orders", "parts")),
          "dir_export", "spark_catalog.seed.by_api", "spark_catalog.seed.by_api", "saved", "shop.public.seed_totals"]


def jvm_submit(state: Path, dump: Path, main_class: str, args: list[str], *, extra: dict[str, str] | None = None,
               jars: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``spark-submit`` of the test jar's ``main_class`` on the embedded Spark, the listener added."""
    conf = {**local_spark.local_conf(str(state)), "spark.sql.queryExecutionListeners": LISTENER_CLASS,
            "spark.airflow.lineage.dump": str(dump), **(extra or {})}
    cmd = [local_spark.spark_submit(), "--master", "local[2]", "--class", main_class,
           "--jars", ",".join((LISTENER_JAR, *jars))]
    for key, value in conf.items():
        cmd += ["--conf", f"{key}={value}"]
    return subprocess.run([*cmd, jvm_app_jar(), *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **local_spark.local_env()})


def target_of(statement: dict) -> str:
    """A catalog table by its name, a path by its last part, a JDBC table by its OpenLineage name."""
    target = statement["target"]
    return (target.get("table") or target["name"]).rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def runs(pg, tmp_path_factory):
    """(the Python driver's document, the JVM listener's document, stderr of the Java run)."""
    tmp = tmp_path_factory.mktemp("jvm_listener")
    state, out = tmp / "state", tmp / "out"
    url = f"jdbc:postgresql://127.0.0.1:{pg.port}/shop"
    args = [str(SEED), str(out), url, USER, PASSWORD]
    python = subprocess.run(
        [venv_bin("airflow-lineage"), "extract", "--app", str(DATA / "apps" / "seed_writes.py"), "--format", "json",
         "--conf", f"spark.jars={postgres.JAR}", "--", *args],
        capture_output=True, text=True, timeout=600, env={**os.environ, "AIRFLOW_LINEAGE_LOCAL_DIR": str(state)})
    assert python.returncode == 0, python.stderr[-3000:]
    # The same catalog and output directories: the Java run rewrites what the Python run wrote, and
    # both name every dataset alike.
    java = jvm_submit(state, tmp / "dump", "lineagetest.SeedWrites", args, jars=(postgres.JAR,))
    assert java.returncode == 0, java.stderr[-3000:]
    dump = read_dump(str(tmp / "dump"))
    assert dump.warnings == [] and dump.error is None
    return json.loads(python.stdout), from_records(dump.records, dump.warnings).to_dict(), java.stderr


def test_each_write_is_reported_once_by_both(runs):
    python, jvm, _ = runs
    assert [target_of(s) for s in python["statements"]] == WRITES
    assert [target_of(s) for s in jvm["statements"]] == WRITES


def test_the_jvm_listener_gives_the_python_drivers_lineage_edge_for_edge(runs):
    python, jvm, _ = runs
    for mine, theirs in zip(jvm["statements"], python["statements"]):
        for key in ("target", "inputs", "columns", "indirect", "method", "confidence", "warnings", "sql", "index"):
            assert mine.get(key) == theirs.get(key), (target_of(theirs), key)
    assert jvm.get("warnings", []) == python.get("warnings", []) == []


def test_a_sample_of_edges_is_what_the_sql_says(runs):
    _, jvm, _ = runs
    by_target = {target_of(s): s for s in jvm["statements"]}
    edges = {c: {(i["table"].rsplit(".", 1)[-1], i["field"], i["subtype"]) for i in inputs}
             for c, inputs in by_target["spark_catalog.seed.totals"]["columns"].items()}
    assert edges == {"region": {("custs", "region", "IDENTITY")},
                     "total": {("orders", "amount", "AGGREGATION"), ("orders", "qty", "AGGREGATION")},
                     "n": set()}
    view = by_target["spark_catalog.seed.big_orders"]["columns"]
    assert list(view) == ["order_id", "value"]  # the view's own column names, which Spark's JSON loses
    jdbc = by_target["shop.public.seed_totals"]
    assert jdbc["target"]["namespace"] == f"postgres://127.0.0.1:{jdbc['target']['namespace'].rsplit(':', 1)[1]}"


def test_no_credential_reaches_the_dump_or_the_document(runs, tmp_path):
    _, jvm, stderr = runs
    assert PASSWORD not in json.dumps(jvm) and USER not in json.dumps(jvm)
    assert PASSWORD not in stderr


def test_the_corpus_writes_give_the_same_lineage_through_both_captures(tmp_path, monkeypatch):
    """Every write case of the corpus, run (not only analyzed) by the Python driver with the JVM listener
    added: the two captures see the same events, and their documents must be equal write for write.
    Also: the py4j capture unregisters cleanly beside another QueryExecutionListener."""
    from tests.helpers import DATA as TEST_DATA
    from tests.integration.corpus import CASES
    from tests.rowlevel import rowlevel_conf

    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path / "state"))
    parts = [(TEST_DATA / "corpus_schema.sql").read_text()]
    for case in CASES:
        if case.target:
            parts += [case.setup, case.sql]
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / "script.sql").write_text("\n".join(p.rstrip().rstrip(";") + ";\n" for p in parts if p.strip()))
    conf = {**rowlevel_conf(), "spark.sql.queryExecutionListeners": LISTENER_CLASS,
            "spark.airflow.lineage.dump": str(tmp_path / "jvm")}
    conf["spark.jars"] += "," + LISTENER_JAR
    # keep_going: Spark refuses the MERGE, UPDATE and DELETE cases on parquet tables (the corpus only
    # analyzes them), and two views; neither capture sees a refused statement.
    local_spark.run_driver(str(tmp_path / "dump"), conf=conf, keep_going=True, quiet=True)
    python, jvm = read_dump(str(tmp_path / "dump")), read_dump(str(tmp_path / "jvm"))
    assert python.warnings == [] and jvm.warnings == []
    failed = [s for s in python.statements if s["status"] == "failed"]
    assert all("UNSUPPORTED_FEATURE.TABLE_OPERATION" in s["error"]["message"]
               or "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS" in s["error"]["message"] for s in failed)
    theirs = [s for s in from_records(python.records).to_dict()["statements"] if s.get("target")]
    mine = from_records(jvm.records).to_dict()["statements"]
    assert len(theirs) >= 45
    assert [s["target"] for s in mine] == [s["target"] for s in theirs]
    for a, b in zip(mine, theirs):
        assert (a["columns"], a.get("indirect"), a.get("warnings")) == (b["columns"], b.get("indirect"),
                                                                         b.get("warnings")), b["sql"]
