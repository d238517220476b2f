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

from airflow_lineage_provider.job.dump import read_dump
from airflow_lineage_provider.lineage.extract import from_records
from tests.conftest import DATA, venv_bin
from tests.integration import postgres
from tests.integration.jvm_corpus import LISTENER_JAR, listener_conf
from tests.integration.postgres import PASSWORD, USER
from tests.rowlevel import jvm_app_jar

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SEED = DATA / "apps" / "seed_writes.sql"
# The writes both applications make, in order: the seed's seven, then the DataFrame API's four.
WRITES = [*(f"spark_catalog.seed.{t}" for t in ("orders", "custs", "totals", "ranked", "big_orders", "parts")),
          "dir_export", "spark_catalog.seed.by_api", "spark_catalog.seed.by_api", "saved", "shop.public.seed_totals"]


def extract_app(state: Path, app: str, *options: str, args: list[str]) -> subprocess.CompletedProcess:
    """``airflow-lineage extract --app`` on the embedded Spark with its catalog in ``state``: a PySpark
    script under our driver, or a jar (``--class``) under the JVM listener, as a user runs either."""
    return subprocess.run([venv_bin("airflow-lineage"), "extract", "--app", app, "--format", "json", *options,
                           "--", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "AIRFLOW_LINEAGE_LOCAL_DIR": str(state)})


def conf_options(conf: dict[str, str]) -> list[str]:
    return [option for key, value in conf.items() for option in ("--conf", f"{key}={value}")]


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
    jdbc = ("--conf", f"spark.jars={postgres.JAR}")
    python = extract_app(state, str(DATA / "apps" / "seed_writes.py"), *jdbc, args=args)
    assert python.returncode == 0, python.stderr[-3000:]
    # The same catalog and output directories: the Java run rewrites what the Python run wrote, and
    # both name every dataset alike.
    java = extract_app(state, jvm_app_jar(), "--class", "lineagetest.SeedWrites", *jdbc, args=args)
    assert java.returncode == 0, java.stderr[-3000:]
    return json.loads(python.stdout), json.loads(java.stdout), java.stderr


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



def test_the_corpus_writes_give_the_same_lineage_through_both_captures(jvm_corpus):
    """Every write case of the corpus, run (not only analyzed) by the Python driver with the JVM listener
    added: the two captures see the same events, and their documents are equal write for write. (The
    py4j capture also unregisters cleanly beside another QueryExecutionListener, or a capture warns.)"""
    from tests.integration.jvm_corpus import SAME

    checked = {name: v for name, v in jvm_corpus.items() if v != "no write"}
    assert sum(v == SAME for v in checked.values()) >= 60  # row-level writes included, on the rowcat catalog
    assert {name: v for name, v in checked.items() if v != SAME and not v.startswith("not run: ")} == {}
    refused = {v for v in checked.values() if v.startswith("not run: ")}
    assert refused <= {"not run: [UNSUPPORTED_FEATURE.TABLE_OPERATION]",
                       "not run: [CREATE_PERMANENT_VIEW_WITHOUT_ALIAS]"}


def test_a_streaming_query_is_captured_as_the_python_driver_captures_it(tmp_path):
    """A Structured Streaming application's sink, through the listener's streaming half (no query
    execution event reports a stream), beside the Python driver's own capture of the same run."""
    source = tmp_path / "in"
    source.mkdir()
    (source / "e1.json").write_text('{"id":1,"name":"a","amount":1.5,"ts":"2026-11-26T10:00:00"}\n'
                                    '{"id":2,"name":"b","amount":2.5,"ts":"2026-11-26T10:20:00"}\n')
    conf = {**listener_conf(str(tmp_path / "jvm")), "spark.jars": LISTENER_JAR}
    proc = extract_app(tmp_path / "state", str(DATA / "apps" / "stream_events.py"), *conf_options(conf),
                       args=[str(source), str(tmp_path / "out"), str(tmp_path / "ck")])
    assert proc.returncode == 0, proc.stderr[-3000:]
    python = json.loads(proc.stdout)["statements"]
    dump = read_dump(str(tmp_path / "jvm"))
    jvm = from_records(dump.records, dump.warnings).to_dict()["statements"]
    assert [s["target"] for s in jvm] == [s["target"] for s in python] == [
        {"table": None, "namespace": "file", "name": str(tmp_path / "out"), "mode": "append"}]
    assert jvm[0]["columns"] == python[0]["columns"] and jvm[0].get("indirect") == python[0].get("indirect")
    assert set(jvm[0]["columns"]) == {"window_start", "name_uc", "total", "last_id"}


@pytest.mark.parametrize("kind", ["sql", "app"])
def test_our_python_driver_runs_beside_a_users_own_query_listener(kind, tmp_path):
    """A user's ``spark.sql.queryExecutionListeners`` on a SQL script or a PySpark application run by our
    driver: both listeners see the writes, and the driver ends cleanly (its py4j capture once crashed
    unregistering itself beside another listener: exit 2, no result file)."""
    mark = tmp_path / "mark.txt"
    conf = {"spark.jars": jvm_app_jar(), "spark.sql.queryExecutionListeners": "lineagetest.MarkListener",
            "spark.lineagetest.mark": str(mark)}
    if kind == "sql":
        script = tmp_path / "job.sql"
        script.write_text("CREATE TABLE marked USING parquet AS SELECT id, id * 2 AS twice FROM range(3);\n"
                          "INSERT INTO marked SELECT id + 10, twice FROM marked;\n")
        proc = subprocess.run([venv_bin("airflow-lineage"), "extract", "--format", "json", *conf_options(conf),
                               "--sql", str(script)], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "AIRFLOW_LINEAGE_LOCAL_DIR": str(tmp_path / "state")})
    else:
        proc = extract_app(tmp_path / "state", str(DATA / "apps" / "write_range.py"), *conf_options(conf),
                           args=[str(tmp_path / "range"), str(tmp_path / "total")])
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert [s["method"] for s in doc["statements"] if s.get("target")] == ["plan", "plan"]
    assert "plan capture could not be unregistered" not in json.dumps(doc)
    assert mark.read_text().split(), "the user's listener ran too"


def test_each_write_keeps_its_spark_sql_text_in_both_and_a_dataframe_write_none(runs):
    """Issue 42: a CTAS (one with a WITH), CREATE VIEW, INSERT, INSERT OVERWRITE of a partition and of a
    directory keep the text the application passed to ``spark.sql``, in the JVM listener as in the py4j
    capture; the DataFrame API's four writes (``saveAsTable``, ``insertInto``, ``save``, ``jdbc``) none."""
    python, jvm, _ = runs
    for doc in (python, jvm):
        dir_export = next(s for s in doc["statements"] if target_of(s) == "dir_export")
        out = dir_export["target"]["name"].removesuffix("/dir_export")
        statements = SEED.read_text().replace("${out}", out).split(";\n")
        writing = [q for q in statements if " AS " in q or q.startswith("INSERT")]
        assert [s["sql"] for s in doc["statements"]] == [*writing, "", "", "", ""]
