"""Capture on a Spark Connect server (issue 26, part A): a real server from the pyspark wheel, started with
the line ``airflow-lineage connect-server-conf`` prints, real Connect clients.

Two client sessions with their own keys write at once; each key's dump holds exactly its own writes, edge
for edge as our Python driver gives for the same writes. A key that climbs out of the base is refused, a
session without a key leaves nothing, and the barrier gives the complete set without any wait of the
test's own. A task that builds its Connect session by hand reports through ``column_lineage`` (real
Airflow, ``dag.test``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from airflow_lineage_provider.hooks import local_spark, spark_connect
from airflow_lineage_provider.lineage.extract import from_records
from tests.conftest import DATA, venv_bin
from tests.integration.spark_cluster import free_port
from tests.integration.test_example_dag import SEED_JOIN, SEED_SINGLE, T

pytestmark = [pytest.mark.spark, pytest.mark.slow]

APP = DATA / "apps" / "connect_writes.py"
KEYS = {"ka": "etl/load_a/manual__2026-11-27T00_00_00+00_00/1-test", "kb": "etl/load_b/manual__2026-11-27/1-test",
        "kt": "etl/load_t/manual__2026-11-27/1-test"}


def _workload():
    spec = importlib.util.spec_from_file_location("connect_writes", APP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


workload = _workload()


def _connect_ready() -> str:
    """Why a Connect server or client cannot run here ("" when both can)."""
    import pyspark

    if not list((Path(pyspark.__file__).parent / "jars").glob("spark-connect_*.jar")):
        return "the pyspark wheel has no jars/spark-connect_*.jar: no Connect server to start"
    for module in ("grpc", "grpc_status", "pyarrow", "pandas", "google.protobuf"):
        if importlib.util.find_spec(module) is None:
            return f"the Spark Connect client needs {module}, not installed in this venv"
    return ""


def start_server(tmp: Path, *, listener: bool = True,
                 conf: dict[str, str] | None = None) -> tuple[subprocess.Popen, str, Path, Path]:
    """A Connect server from the wheel, started with the line ``airflow-lineage connect-server-conf`` prints
    (``listener``), else as a server without it, with the admin's ``conf`` added: (process, sc:// URL, base
    dump directory, log file)."""
    base, port, log = tmp / "base", free_port(), tmp / "server.log"
    printed = subprocess.run([venv_bin("airflow-lineage"), "connect-server-conf", "--dump", str(base),
                              "--port", str(port)], capture_output=True, text=True, check=True).stdout
    cmd = shlex.split(printed)
    assert cmd[0] == "spark-submit"
    if not listener:  # a server as Spark's docs start it: its class and port only
        cmd = [*cmd[:3], "--conf", f"spark.connect.grpc.binding.port={port}"]
    # The admin's line as printed, on the embedded Spark (its catalog and warehouse in this module's dir).
    cmd[0] = local_spark.spark_submit()
    for key, value in {**local_spark.local_conf(str(tmp / "state")), **(conf or {})}.items():
        cmd[1:1] = ["--conf", f"{key}={value}"]
    cmd[1:1] = ["--master", "local[4]"]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **local_spark.local_env()})
    url = f"sc://127.0.0.1:{port}"
    try:
        _wait_until_serving(url, proc, log)
    except BaseException:
        stop_server(proc)
        raise
    return proc, url, base, log


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()


@contextmanager
def serving(tmp: Path, **how) -> Iterator[tuple[subprocess.Popen, str, Path, Path]]:
    """``start_server(tmp, **how)`` for the block, stopped after it; the test is skipped where no Connect
    server or client can run."""
    why = _connect_ready()
    if why:
        pytest.skip(why)
    proc, url, base, log = start_server(tmp, **how)
    try:
        yield proc, url, base, log
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(sc:// URL, base dump directory, the server's log file): one server for the module."""
    with serving(tmp_path_factory.mktemp("connect")) as (_, url, base, log):
        yield url, base, log


def _wait_until_serving(url: str, proc: subprocess.Popen, log: Path) -> None:
    from pyspark.sql import SparkSession

    deadline = time.monotonic() + 180
    while True:
        if proc.poll() is not None:
            pytest.fail(f"the Connect server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            probe = SparkSession.builder.remote(url).create()
            probe.sql("SELECT 1").collect()
            probe.stop()
            return
        except Exception:  # noqa: BLE001 - not listening yet
            if time.monotonic() > deadline:
                pytest.fail(f"the Connect server did not answer in 180 s:\n{log.read_text()[-3000:]}")
            time.sleep(1)


def session(url: str):
    from pyspark.sql import SparkSession

    return SparkSession.builder.remote(url).create()


@pytest.fixture(scope="module")
def captured(server):
    """Each key's JobResult after its barrier: two sessions writing at once, one with a key that climbs out
    of the base, one with no key; and one making ``workload.texts``' writes (issue 42)."""
    url, base, _ = server
    results: dict[str, object] = {}
    errors: list[BaseException] = []

    def client(spark, db: str, key: str | None) -> None:
        try:
            if key is not None:
                secret = spark_connect.start(spark, key)
            (workload.texts if db == "kt" else workload.writes)(spark, db)
            if key is not None:
                # No sleep: the barrier alone must make the set complete.
                # The dumps are kept for the tests below (a task's are removed once read).
                results[db] = spark_connect.finish(spark, str(base), key, secret=secret,
                                                   timeout=5 if ".." in key else 120,
                                                   keep=True)
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(e)

    clients = (("ka", KEYS["ka"]), ("kb", KEYS["kb"]), ("kc", "../escape"), ("kd", None), ("kt", KEYS["kt"]))
    # The sessions are made and stopped here, one at a time: pyspark's Connect builder and stop() keep
    # class-wide state (the default and active sessions), which threads must not race on; a task makes
    # its one session in its own process. The writes, the barriers and the waits run at once.
    sessions = [session(url) for _ in clients]
    try:
        threads = [threading.Thread(target=client, args=(spark, *args)) for spark, args in zip(sessions, clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not any(t.is_alive() for t in threads), "a client is still running after 300 s"
    finally:
        for spark in sessions:
            spark.stop()  # its gRPC threads would keep the interpreter from exiting
    assert not errors, errors
    return results


@pytest.fixture(scope="module")
def python_driver(tmp_path_factory):
    """The same writes under our Python driver (py4j capture): its document."""
    state = tmp_path_factory.mktemp("connect_python")
    # A Connect client of this process set SPARK_CONNECT_MODE_ENABLED (and maybe SPARK_REMOTE): inherited,
    # they would make the classic application a Connect client too.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_CONNECT", "SPARK_REMOTE"))}
    out = subprocess.run([venv_bin("airflow-lineage"), "extract", "--app", str(APP), "--format", "json", "--", "ka"],
                         capture_output=True, text=True, timeout=600, env={**env, "AIRFLOW_LINEAGE_LOCAL_DIR": str(state)})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout), state


def document(result) -> dict:
    return from_records(result.records, result.warnings).to_dict()


def target_of(statement: dict) -> str:
    return statement["target"]["table"]


def test_each_key_gets_exactly_its_own_writes_complete_at_the_barrier(captured):
    for db in ("ka", "kb"):
        result = captured[db]
        assert result.warnings == [] and result.error is None
        doc = document(result)
        assert [target_of(s) for s in doc["statements"]] == [f"spark_catalog.{db}.{t}" for t in workload.TARGETS]


def test_the_connect_capture_gives_the_python_drivers_lineage_edge_for_edge(captured, python_driver, server):
    python, state = python_driver
    _, base, _ = server
    # One dataset has one name: the two Sparks' warehouses differ only by their directory.
    connect_warehouse = str(base.parent / "state" / "warehouse")
    jvm = json.loads(json.dumps(document(captured["ka"])).replace(connect_warehouse, str(state / "warehouse")))
    assert [target_of(s) for s in jvm["statements"]] == [target_of(s) for s in python["statements"]]
    for mine, theirs in zip(jvm["statements"], python["statements"]):
        for key in ("target", "inputs", "columns", "indirect", "method", "confidence", "warnings", "sql", "index"):
            assert mine.get(key) == theirs.get(key), (target_of(theirs), key)
    totals = jvm["statements"][1]["columns"]
    assert {(i["field"], i["subtype"]) for i in totals["total"]} == {("amount", "AGGREGATION")}


def test_a_key_that_climbs_out_of_the_base_is_refused(captured, server):
    _, base, log = server
    result = captured["kc"]  # the client waited for a result that never comes: a warning, no exception
    assert result.records == [] and "wrote no lineage result" in result.warnings[0]
    assert not (base.parent / "escape").exists()
    assert "key spark.airflow.lineage.key=../escape is refused" in log.read_text()


def test_a_session_without_a_key_leaves_nothing_of_its_own(captured, server):
    _, base, _ = server
    dumps = {p.parent.relative_to(base).as_posix() for p in base.rglob("plans.jsonl")}
    assert dumps == set(KEYS.values())
    from airflow_lineage_provider.job.dump import read_dump

    for key in KEYS.values():
        targets = {target_of(s) for s in document(read_dump(str(base / key)))["statements"]}
        assert not {t for t in targets if t.split(".")[1] in ("kc", "kd")}, key



@pytest.mark.airflow
def test_a_hand_built_connect_session_reports_through_column_lineage(server, airflow_db, monkeypatch):
    """Real Airflow (dag.test on SQLite, ``tests/dags/lineage_test_connect.py``): the task's XCom and asset
    events are the server's records of its key."""
    from tests.conftest import DAGS
    from tests.dags.lineage_test_connect import BASE_ENV, URL_ENV
    from tests.integration.test_example_dag import asset_events, load_dag, xcoms

    url, base, _ = server
    monkeypatch.setenv(URL_ENV, url)
    monkeypatch.setenv(BASE_ENV, str(base))
    dag = load_dag(DAGS / "lineage_test_connect.py")
    run = dag.test()
    assert run.state == "success"
    doc = xcoms(dag.dag_id, run.run_id)["load"]
    assert [target_of(s) for s in doc["statements"]] == [f"spark_catalog.ke.{t}" for t in workload.TARGETS]
    assert doc.get("warnings", []) == []
    totals = doc["statements"][1]["columns"]["total"]
    assert {(i["table"], i["field"], i["subtype"]) for i in totals} == {("spark_catalog.ke.src", "amount",
                                                                        "AGGREGATION")}
    written = {uri for (task, uri) in asset_events(dag.dag_id, run.run_id) if task == "load"}
    assert {uri.rstrip("/").rsplit("/", 1)[-1] for uri in written} == {"src", "totals", "by_api"}
    # The key was this try's, <dag>/<task>/<run>/<try>-<nonce> under the base (the task's log names it), and
    # its records were removed once read: the server's base keeps no task's records.
    assert not list(base.glob("lineage_test_connect/load/*/*/*"))


# -- part B: an unchanged @task.pyspark task (the example DAG) ---------------------------------------------

DEMO = "spark_connect_demo"
D = "spark_catalog.connect_demo."


def _in_demo_db(edges: dict) -> dict:
    """The example SQL DAG's seed edges (``test_example_dag``), in this DAG's database."""
    return {c: {(t.replace(T, D), f, sub) for t, f, sub in inputs} for c, inputs in edges.items()}


DEMO_SEED_SINGLE, DEMO_SEED_JOIN = _in_demo_db(SEED_SINGLE), _in_demo_db(SEED_JOIN)
DEMO_COMPANY_USERS = {
    "company_name": {(D + "dwd_users", "company_name", "IDENTITY")},
    "users": {(D + "dwd_users", "id", "AGGREGATION")},
    "youngest": {(D + "dwd_users", "birthday", "AGGREGATION")},
}
DEMO_TARGETS = ["ods_users", "dim_company", "dwd_users", "dwd_users", "company_users"]


@pytest.fixture(scope="module", autouse=True)
def _classic_env_restored():
    """A Connect session sets SPARK_CONNECT_MODE_ENABLED (and SPARK_REMOTE) in this process's environment;
    a classic spark-submit started later by another test module would inherit it and fail: put it back."""
    saved = {k: os.environ.get(k) for k in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def classic_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_CONNECT", "SPARK_REMOTE"))}


def connection(url: str) -> str:
    """A ``spark_connect`` connection (as JSON, for ``AIRFLOW_CONN_...``) to the server at ``url``."""
    host, port = url.removeprefix("sc://").rsplit(":", 1)
    return json.dumps({"conn_type": "spark_connect", "host": host, "port": int(port)})


@dataclass(frozen=True)
class DemoRun:
    """One ``airflow dags test`` run of the example DAG: its state, XCom, asset events and the task's log."""

    state: str
    xcom: dict
    assets: dict
    log: str


def run_demo(conn: dict | str, *, option: bool = True, cwd: str | None = None, **env: str) -> DemoRun:
    """The example DAG run by ``airflow dags test`` in its own process, as a worker runs a task: a classic
    session of this process (the suite's shared one) would hand the task's ``SparkConf()`` its master, which
    pyspark refuses beside ``spark.remote``; and a classic task must not inherit this process's Connect
    clients' environment (``classic_env``)."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from tests.integration.test_example_dag import asset_events, xcoms

    full = {**classic_env(), **local_spark.local_env(), **env,
            "AIRFLOW_CONN_SPARK_CONNECT_DEMO": conn if isinstance(conn, str) else json.dumps(conn),
            "AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS": str(option)}
    out = subprocess.run([venv_bin("airflow"), "dags", "test", DEMO], env=full, capture_output=True, text=True,
                         timeout=600, cwd=cwd)
    with create_session() as session:
        run = session.scalars(select(DagRun).where(DagRun.dag_id == DEMO).order_by(DagRun.id.desc())).first()
        state, run_id = str(run.state), run.run_id
    assert out.returncode == 0 and state == "success", (out.stdout[-3000:], out.stderr[-3000:])
    return DemoRun(state, xcoms(DEMO, run_id), asset_events(DEMO, run_id), out.stdout + out.stderr)


@pytest.fixture(scope="module")
def demo_on_connect(server, airflow_db, tmp_path_factory):
    """The example DAG with the option on, its connection on the test's server: (run, OpenLineage events)."""
    from tests.integration.test_openlineage import read_events

    url, _, _ = server
    log = tmp_path_factory.mktemp("connect-openlineage") / "events.jsonl"
    run = run_demo(connection(url), AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps(
        {"type": "file", "log_file_path": str(log), "append": True}), AIRFLOW__OPENLINEAGE__DISABLED="false")
    return run, read_events(log)


@pytest.fixture(scope="module")
def demo_classic(airflow_db, tmp_path_factory):
    """The same DAG, the same option, on a classic local session in the task's own process: (XCom document,
    warehouse)."""
    warehouse = tmp_path_factory.mktemp("connect-classic") / "warehouse"
    conn = {"conn_type": "spark", "host": "local[2]",
            "extra": {"spark.sql.warehouse.dir": str(warehouse), "spark.ui.enabled": "false"}}
    run = run_demo(conn, cwd=str(warehouse.parent))
    return run.xcom["build_users"], warehouse


def demo_targets(doc: dict) -> list[str]:
    return [target_of(s).removeprefix(D) for s in doc["statements"] if s["target"]]


@pytest.mark.airflow
def test_the_example_dags_pyspark_task_reports_its_writes_from_the_connect_server(demo_on_connect):
    from tests.helpers import document_edges

    run, _ = demo_on_connect
    doc = run.xcom["build_users"]
    assert doc.get("warnings", []) == []
    assert demo_targets(doc) == DEMO_TARGETS
    writes = [s for s in doc["statements"] if s["target"]]
    assert document_edges(writes[2]) == DEMO_SEED_SINGLE
    assert document_edges(writes[3]) == DEMO_SEED_JOIN
    assert document_edges(writes[4]) == DEMO_COMPANY_USERS
    assert {(i["table"], i["field"], i["subtype"]) for i in writes[3]["indirect"]} == {
        (D + "ods_users", "id", "JOIN"), (D + "dim_company", "user_id", "JOIN")}
    assert all(s["method"] == "plan" and s["confidence"] == 1.0 for s in writes)
    # The VALUES inserts: every column written, none with a source.
    assert document_edges(writes[0]) == {c: set() for c in ("id", "name", "birthday", "ts")}


@pytest.mark.airflow
def test_the_connect_tasks_openlineage_events_are_valid_and_carry_its_column_lineage(demo_on_connect, server):
    from tests.integration.test_openlineage import task_event
    from tests.openlineage_spec import registry, validate_event

    run, events = demo_on_connect
    assets = run.assets
    schemas = registry()
    checked = [url for event in events for url in validate_event(event, schemas)]  # raises on an invalid one
    assert any("ColumnLineageDatasetFacet" in url for url in checked)
    complete = task_event(events, f"{DEMO}.build_users", "COMPLETE")
    outputs = {o["name"].rstrip("/").rsplit("/", 1)[-1]: o for o in complete["outputs"]}
    assert set(outputs) == {"ods_users", "dim_company", "dwd_users", "company_users"}
    fields = outputs["company_users"]["facets"]["columnLineage"]["fields"]
    got = {column: {(f["name"].rsplit("/", 1)[-1], f["field"], t["subtype"]) for f in entry["inputFields"]
                    for t in f["transformations"]} for column, entry in fields.items()}
    assert got == {c: {(t.removeprefix(D), f, s) for t, f, s in edges} for c, edges in DEMO_COMPANY_USERS.items()}
    assert {f["name"] for f in outputs["company_users"]["facets"]["schema"]["fields"]} == set(DEMO_COMPANY_USERS)
    # Asset events: one per written dataset, named as the OpenLineage output.
    written = {uri: extra for (task, uri), extra in assets.items() if task == "build_users"}
    assert set(written) == {f"file://{o['name']}" for o in complete["outputs"]}
    by_table = {uri.rstrip("/").rsplit("/", 1)[-1]: extra for uri, extra in written.items()}
    dwd = f"file://{outputs['dwd_users']['name']}"
    assert by_table["company_users"]["inputs"] == [dwd]
    assert by_table["company_users"]["columns"] == ["company_name", "users", "youngest"]
    assert sorted(by_table["dwd_users"]["inputs"]) == sorted(
        f"file://{outputs[t]['name']}" for t in ("ods_users", "dim_company"))


@pytest.mark.airflow
def test_the_connect_tasks_lineage_equals_the_classic_sessions_edge_for_edge(demo_on_connect, demo_classic, server):
    run, _ = demo_on_connect
    classic, warehouse = demo_classic
    _, base, _ = server
    connect_warehouse = str(base.parent / "state" / "warehouse")
    mine = json.loads(json.dumps(run.xcom["build_users"]).replace(connect_warehouse, str(warehouse)))
    assert demo_targets(classic) == DEMO_TARGETS
    assert len(mine["statements"]) == len(classic["statements"])
    for a, b in zip(mine["statements"], classic["statements"]):
        for key in ("target", "inputs", "columns", "indirect", "method", "confidence", "warnings", "sql"):
            assert a.get(key) == b.get(key), (target_of(b), key)


@pytest.mark.airflow
def test_two_tasks_at_once_on_one_server_each_report_their_own_and_a_retry_its_own_try(server, tmp_path):
    """A real deployment (scheduler, LocalExecutor with two slots, api-server): the two ``@task.pyspark`` tasks
    of ``lineage_test_connect_tasks`` write at the same time on the test's server; each task's XCom holds its
    own writes only, and the retried task's XCom its second try's only."""
    from tests.conftest import DAGS
    from tests.dags.lineage_test_connect_tasks import MEET_ENV
    from tests.integration.scheduler import deployment

    url, base, _ = server
    meet = tmp_path / "meet"
    meet.mkdir()
    env = {"AIRFLOW_CONN_SPARK_CONNECT_TEST": connection(url),
           "AIRFLOW__COLUMN_LINEAGE__STOCK_SPARK_OPERATORS": "True", MEET_ENV: str(meet)}
    dag_id, run_id = "lineage_test_connect_tasks", "two_at_once"
    home = tmp_path / "airflow"
    with deployment(home, [DAGS / f"{dag_id}.py"], env) as airflow:
        state = airflow.run(dag_id, run_id)
        states = airflow.task_states(dag_id, run_id)
        docs = airflow.xcoms(dag_id, run_id, "column_lineage")
        tries = dict(airflow.query("SELECT task_id, try_number FROM task_instance WHERE dag_id = ? AND run_id = ?",
                                   dag_id, run_id))
    assert (state, states) == ("success", {"load_a": "success", "load_b": "success", "flaky": "success"}), \
        f"logs in {home}"
    assert sorted(meet.iterdir()) == [meet / "a", meet / "b"]  # both had their sessions at once
    for task, db in (("load_a", "ta"), ("load_b", "tb")):
        assert [target_of(s) for s in docs[task]["statements"]] == [f"spark_catalog.{db}.{t}" for t in workload.TARGETS]
        assert docs[task].get("warnings", []) == []
    assert tries["flaky"] == 2
    assert [target_of(s) for s in docs["flaky"]["statements"]] == ["spark_catalog.try2.one"]
    # Every key's records were read (or, the failed try's, dropped unread) and removed.
    assert not list(base.glob(f"{dag_id}/**/*.json*"))


@pytest.fixture(scope="module")
def plain_server(tmp_path_factory):
    """A Connect server without the listener: (sc:// URL, base it would have used)."""
    with serving(tmp_path_factory.mktemp("connect-plain"), listener=False) as (_, url, base, _log):
        yield url, base


@pytest.mark.airflow
def test_on_a_server_without_the_listener_the_task_runs_as_always_with_its_sqls_static_lineage(
        plain_server, airflow_db):
    """The option on, the server without the listener: the task succeeds as without the option; one warning
    line says why; the SQL its function ran gets its static lineage, saying so; no directory is written."""
    from tests.helpers import document_edges

    url, base = plain_server
    run = run_demo(connection(url))
    said = [line for line in run.log.splitlines()
            if "No plan column lineage for this task: the Spark Connect server does not run" in line]
    assert len(said) == 1, said
    doc = run.xcom["build_users"]
    assert any("does not run the column lineage listener" in w for w in doc["warnings"])
    writes = [s for s in doc["statements"] if s["target"]]
    # The SQL's writes, from its text (the DataFrame write has no text: it is not there).
    assert [target_of(s).removeprefix(D) for s in writes] == DEMO_TARGETS[:4]
    assert all(s["method"] == "sql" for s in writes)
    assert document_edges(writes[2]) == DEMO_SEED_SINGLE
    assert document_edges(writes[3]) == DEMO_SEED_JOIN
    assert not base.exists()


@pytest.mark.airflow
def test_with_the_option_off_the_task_runs_as_always_and_reports_nothing(server, airflow_db):
    url, base, _ = server
    run = run_demo(connection(url), option=False)
    assert run.xcom == {} and run.assets == {}
    assert not (base / DEMO).exists()


def test_a_classic_job_after_a_connect_session_of_the_same_process_runs_classic(tmp_path, monkeypatch):
    """``airflow dags test`` runs every task in one process: a Connect task leaves SPARK_CONNECT_MODE_ENABLED
    in its environment, and the next task's spark-submit must not inherit it."""
    from airflow_lineage_provider.hooks.spark_lineage import CONNECT_CLIENT_ENV, SparkLineageHook

    for name in CONNECT_CLIENT_ENV:
        monkeypatch.setenv(name, "1" if name == "SPARK_CONNECT_MODE_ENABLED" else "sc://127.0.0.1:1")
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path / "state"))
    result = SparkLineageHook().run_sql("CREATE TABLE t USING parquet AS SELECT 1 AS one")
    assert result.error is None
    assert [s["target"]["table"] for s in from_records(result.records).to_dict()["statements"]] == [
        "spark_catalog.default.t"]
    assert os.environ["SPARK_CONNECT_MODE_ENABLED"] == "1"  # put back: a later Connect task still needs it


# -- issue 42: a shared server is a security boundary ------------------------------------------------------

def keys_in_base(spark, base: Path) -> set[str]:
    """The keys whose records a client reads in the base with Spark's own reader, as an attacker would."""
    try:
        rows = spark.read.text(f"file://{base}/*/*/*/*/plans.jsonl").select("_metadata.file_path").distinct().collect()
    except Exception:  # noqa: BLE001 - nothing there yet: the reader finds no path
        return set()
    from urllib.parse import unquote, urlsplit

    return {unquote(urlsplit(r[0]).path).removeprefix(f"{base}/").removesuffix("/plans.jsonl") for r in rows}


def until(found, what: str, limit: float = 120):
    """``found()`` once it is truthy; fails after ``limit`` seconds saying ``what`` never came."""
    deadline = time.monotonic() + limit
    while not (value := found()):
        assert time.monotonic() < deadline, f"{what} did not happen in {limit:g} s"
        time.sleep(0.2)
    return value


@pytest.fixture(scope="module")
def tenancy(server):
    """Two tasks write under their keys on one server while a third client, knowing all the base shows (it
    reads every key there with Spark's reader) and all a task's log shows, tries each way to write into their
    lineage: the key by SET and by conf, a forged barrier, RESET, and a key after its task's barrier."""
    from airflow_lineage_provider.hooks.jvm_listener import FLUSH_CONF, KEY_CONF

    url, base, log = server
    keys = {db: f"tenancy/load_{db}/manual__1/1-{os.urandom(4).hex()}" for db in ("va", "vb")}
    tasks = {db: session(url) for db in keys}
    attacker = session(url)
    try:
        secrets_ = {db: spark_connect.start(tasks[db], key) for db, key in keys.items()}
        for db, spark in tasks.items():
            spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
            spark.sql(f"CREATE TABLE {db}.first USING parquet AS SELECT 1 AS a")
        attacker.sql("CREATE DATABASE IF NOT EXISTS mal")
        learned = set(keys.values())
        until(lambda: {k for k in keys_in_base(attacker, base) if k.startswith("tenancy/")} == learned,
              "the attacker reading both keys, nonce and all, in the base")
        for n, key in enumerate(sorted(learned)):
            attacker.sql(f"SET {KEY_CONF}={key}")
            attacker.sql(f"CREATE TABLE mal.by_set_{n} USING parquet AS SELECT 1 AS evil")
            attacker.sql(f"SET {FLUSH_CONF}=forged")  # an early barrier would end the task's capture
            attacker.sql("RESET")
            attacker.conf.set(KEY_CONF, key)
            attacker.sql(f"CREATE TABLE mal.by_conf_{n} USING parquet AS SELECT 2 AS evil")
            attacker.conf.unset(KEY_CONF)
        for db, spark in tasks.items():
            spark.sql(f"INSERT INTO {db}.first SELECT 2")
        results = {db: spark_connect.finish(tasks[db], str(base), key, secret=secrets_[db], timeout=120)
                   for db, key in keys.items()}
        # After the barrier the key is done, and still its task's: a write under it leaves nothing behind.
        attacker.sql(f"SET {KEY_CONF}={keys['va']}")
        attacker.sql("CREATE TABLE mal.after USING parquet AS SELECT 3 AS evil")
        attacker.conf.unset(KEY_CONF)
        made = {r[1] for r in attacker.sql("SHOW TABLES IN mal").collect()}
    finally:
        for spark in (*tasks.values(), attacker):
            spark.stop()
    return results, keys, made


def test_a_client_knowing_another_tasks_key_cannot_write_into_its_lineage(tenancy, server):
    results, keys, made = tenancy
    _, base, log = server
    # The attacker's own statements ran (lineage never fails a job) ...
    assert made == {"by_set_0", "by_set_1", "by_conf_0", "by_conf_1", "after"}
    for db, result in results.items():
        doc = document(result)
        # ... and each task's lineage is exactly its own writes, complete after the attacker's forged barrier.
        assert [target_of(s) for s in doc["statements"]] == [f"spark_catalog.{db}.first"] * 2
        assert "mal" not in json.dumps(result.records)
        assert result.warnings == ["another Spark Connect session ran statements under this key: they were "
                                   "refused, not captured (a key belongs to the session that first used it)"]
    said = log.read_text()
    assert said.count("is refused: a key belongs to the session that first used it") == 3
    assert not any(base.glob("tenancy/*/*/*"))  # read and removed; the late write under a key left nothing


@pytest.mark.parametrize("disturb", [
    "RESET",
    "RESET spark.airflow.lineage.key",
    "SET spark.airflow.lineage.key=some/other/key",
    "conf.unset spark.airflow.lineage.key",
    "conf.unset spark.airflow.lineage.secret",
])
def test_a_block_that_resets_or_changes_the_key_keeps_its_capture_and_barrier(server, disturb):
    """The session keeps the key it opened until its barrier: none of these makes the task wait its timeout
    or lose a write; changing the key is said."""
    url, base, _ = server
    db = "rs_" + os.urandom(3).hex()
    key = f"reset/{db}/run/1-{os.urandom(4).hex()}"
    spark = session(url)
    try:
        secret = spark_connect.start(spark, key)
        spark.sql(f"CREATE DATABASE {db}")
        spark.sql(f"CREATE TABLE {db}.a USING parquet AS SELECT 1 AS x")
        if disturb.startswith("conf.unset "):
            spark.conf.unset(disturb.split()[1])
        else:
            spark.sql(disturb)
        spark.sql(f"CREATE TABLE {db}.b USING parquet AS SELECT x FROM {db}.a")
        result = spark_connect.finish(spark, str(base), key, secret=secret, timeout=60)
    finally:
        spark.stop()
    assert [target_of(s) for s in document(result)["statements"]] == [f"spark_catalog.{db}.a", f"spark_catalog.{db}.b"]
    expected = (["this session set spark.airflow.lineage.key to another key before its barrier: its statements "
                 "stay under the key it opened"] if "other" in disturb else [])
    assert result.warnings == expected
    assert not (base / "some").exists()


def test_a_client_that_can_write_the_base_cannot_forge_a_tasks_lineage(server, tmp_path):
    """A client running Python on the server (a UDF) appends a record of its own to a task's plans.jsonl, or
    plants a result: the task refuses the files (they fail the seal under its secret) and says why."""
    url, base, _ = server
    key = f"forge/task/run/1-{os.urandom(4).hex()}"
    spark, attacker = session(url), session(url)
    try:
        secret = spark_connect.start(spark, key)
        spark.sql("CREATE DATABASE IF NOT EXISTS fg")
        spark.sql("CREATE TABLE fg.mine USING parquet AS SELECT 1 AS a")
        plans = until(lambda: [p for p in base.glob(f"{key}/plans.jsonl")], "the task's first record")[0]
        line = plans.read_text().splitlines()[0]  # appended again: a record the server did not write there
        from pyspark.sql.functions import udf

        @udf("int")
        def append(_):
            with open(str(plans), "a") as f:  # runs on the server, as the server's user
                f.write(line + "\n")
            return 1

        assert attacker.range(1).select(append("id")).collect()[0][0] == 1
        result = spark_connect.finish(spark, str(base), key, secret=secret, timeout=60)
    finally:
        spark.stop()
        attacker.stop()
    assert result.records == []
    assert result.warnings == ["no plan lineage: the lineage files of key forge/task/run/1-******** do not carry the "
                               "Spark Connect server's seal: something other than the server wrote or changed them, "
                               "so they are refused"]
    assert not (base / key).exists()


@pytest.mark.parametrize("link", ["{top}", "{top}/task", "{top}/task/run/1-abcdef12"])
def test_a_link_planted_in_the_base_is_never_written_or_removed_through(server, tmp_path, link):
    """A directory of a key that is a symbolic link out of the base: the server refuses the key (said in its
    log), the task's wait is its own timeout, and the worker's cleanup removes nothing outside the base."""
    import shutil

    url, base, log = server
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the lineage's")
    top = "planted_" + os.urandom(3).hex()
    key, planted = f"{top}/task/run/1-abcdef12", base / link.format(top=top)
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.symlink_to(outside, target_is_directory=True)
    spark = session(url)
    try:
        secret = spark_connect.start(spark, key)
        spark.sql("CREATE DATABASE IF NOT EXISTS pl")
        spark.sql(f"CREATE TABLE pl.{top} USING parquet AS SELECT 1 AS a")
        result = spark_connect.finish(spark, str(base), key, secret=secret, timeout=3)
    finally:
        spark.stop()
        planted.unlink()
        shutil.rmtree(base / top, ignore_errors=True)
    assert f"wrote no lineage result for key {top}/task/run/1-******** " in result.warnings[0]
    assert sorted(p.name for p in outside.rglob("*")) == ["keep.txt"]
    assert f"the Spark Connect key {top}/task/run/1-abcdef12 is refused: its directory under the base holds a " \
           "symbolic link" in log.read_text()


# -- issue 42: the spark.sql text is kept ------------------------------------------------------------------

def kept_texts(db: str) -> list[tuple[str, str]]:
    """(target, sql) of each write ``workload.texts`` makes, as its document keeps them: the text as written,
    credentials scrubbed (a multi-insert's on each of its writes; EXECUTE IMMEDIATE's, the statement it ran);
    "" for a DataFrame write."""
    from airflow_lineage_provider.lineage.redact import scrub

    out = []
    for statement, targets in workload.TEXTS:
        text = statement.format(db=db)
        if text.startswith("EXECUTE IMMEDIATE '"):
            text = text.removeprefix("EXECUTE IMMEDIATE '").removesuffix("'")
        out += [(f"spark_catalog.{db}.{t}", scrub(text)) for t in targets]
    return out + [(f"spark_catalog.{db}.{t}", "") for t in workload.DATAFRAME_TARGETS]


def test_each_write_on_connect_keeps_the_spark_sql_text_it_was_made_with(captured):
    result = captured["kt"]
    assert result.warnings == [] and result.error is None
    doc = document(result)
    assert [(target_of(s), s["sql"]) for s in doc["statements"]] == kept_texts("kt")
    assert "s3cr3t" not in json.dumps(doc) and "token: ***" in doc["statements"][7]["sql"]


def test_a_ctas_keeps_its_text_on_connect_and_through_our_python_driver_alike(captured, python_driver):
    python, _ = python_driver
    for doc in (document(captured["ka"]), python):
        assert [s["sql"] for s in doc["statements"]] == [*(q.format(db="ka") for q in workload.SQL[1:]), ""]


@pytest.mark.airflow
def test_the_pyspark_tasks_writes_keep_their_spark_sql_texts_on_connect_and_classic(demo_on_connect, demo_classic):
    from tests.conftest import ROOT

    spec = importlib.util.spec_from_file_location("spark_connect_demo", ROOT / "dags_examples" / f"{DEMO}.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    run, _ = demo_on_connect
    classic, _ = demo_classic
    inserts = [q for q in demo.TABLES if q.startswith("INSERT")]
    for doc in (run.xcom["build_users"], classic):
        assert [s["sql"] for s in doc["statements"] if s["target"]] == [*inserts, *demo.SEED, ""]  # the DataFrame's: ""


def test_refused_keys_cost_the_servers_log_a_bounded_few_short_lines(server):
    """Last in the module (it spends the server's allowance of such lines): keys of a megabyte and a flood of
    refused ones leave short lines, one a key, and at most a hundred in the server's life."""
    from airflow_lineage_provider.hooks.jvm_listener import KEY_CONF

    url, _, log = server
    before = log.stat().st_size
    spark = session(url)
    try:
        for n in range(3):
            spark.sql(f"SET {KEY_CONF}=../{n}{'k' * (1 << 20)}")
            spark.sql("SELECT 1").collect()  # the same refused key again: not said again
        for n in range(150):
            spark.sql(f"SET {KEY_CONF}=../flood{n}")
    finally:
        spark.stop()
    with open(log, "rb") as f:
        f.seek(before)
        ours = [line for line in f.read().decode(errors="replace").splitlines() if "[airflow-lineage]" in line]
    assert ours[0].startswith(f"[airflow-lineage] warning: a Spark Connect client's key {KEY_CONF}=../0kkkk")
    assert ours[0].count("k") < 120 and "(1048580 characters)" in ours[0]
    assert max(len(line) for line in ours) < 400
    assert ours[-1] == "[airflow-lineage] warning: further refused Spark Connect keys and sessions are not logged"
    assert len(ours) <= 101 and sum("../1kkk" in line for line in ours) == 1
