"""OpenLineage events of the example DAG: real Airflow (dag.test on SQLite), real local Spark.

Three DAG runs, each shared by the tests below it through a fixture: the example DAG
with the file transport (the run test_example_dag reads too), the example DAG with the HTTP transport
(to a receiver on 127.0.0.1, with the Spark conf injection switched on), and the
DAG whose SQL does not parse, with the file transport.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DAGS
from tests.integration.test_example_dag import load_dag
from tests.openlineage_spec import registry, validate_event

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow]

DEMO = "spark_column_lineage_demo"
BUILD = f"{DEMO}.build_dwd_users"
PREPARE = f"{DEMO}.prepare_tables"
EXTRACTION = "airflowLineage_extraction"
T = "spark_catalog.default."

# The lineage of dwd_users written by build_dwd_users: column -> {(input table, field): {(subtype, expression)}}.
# One output dataset per written table, so both INSERTs of the script are in it: the single-table
# statement (expressions on ods_users.*) and the seed join (expressions on a.* and b.*).
SEED = {
    "id": {("ods_users", "id"): {("IDENTITY", "ods_users.id"), ("IDENTITY", "a.id")}},
    "name": {
        ("ods_users", "name"): {("IDENTITY", "ods_users.name"), ("TRANSFORMATION", "concat(a.name, b.company_name)")},
        ("dim_company", "company_name"): {("TRANSFORMATION", "concat(a.name, b.company_name)")},
    },
    "company_name": {
        ("ods_users", "name"): {("IDENTITY", "ods_users.name")},
        ("dim_company", "company_name"): {("IDENTITY", "b.company_name")},
    },
    "birthday": {("ods_users", "birthday"): {("IDENTITY", "ods_users.birthday"), ("IDENTITY", "a.birthday")}},
    "ts": {("ods_users", "ts"): {("IDENTITY", "ods_users.ts"), ("IDENTITY", "a.ts")}},
    "p": {
        ("ods_users", "birthday"): {
            ("TRANSFORMATION", "date_format(ods_users.birthday, 'yyyyMMdd')"),
            ("TRANSFORMATION", "date_format(a.birthday, 'yyyyMMdd')"),
        }
    },
}
# The seed join alone (statement 2): what the task's lineage must contain edge by edge.
SEED_JOIN = {
    "id": {("ods_users", "id", "IDENTITY")},
    "name": {("ods_users", "name", "TRANSFORMATION"), ("dim_company", "company_name", "TRANSFORMATION")},
    "company_name": {("dim_company", "company_name", "IDENTITY")},
    "birthday": {("ods_users", "birthday", "IDENTITY")},
    "ts": {("ods_users", "ts", "IDENTITY")},
    "p": {("ods_users", "birthday", "TRANSFORMATION")},
}
SEED_INDIRECT = {("ods_users", "id", "INDIRECT", "JOIN"), ("dim_company", "user_id", "INDIRECT", "JOIN")}


# -- running a DAG with OpenLineage on ---------------------------------------------------------


@contextmanager
def openlineage_enabled(transport: dict[str, Any], **env: str) -> Iterator[None]:
    """OpenLineage on, with ``transport``, for the DAG runs inside; everything undone after.

    tests/conftest.py removes any transport at import, so Airflow's OpenLineage plugin loads
    disabled, without its listener: load it now, whatever ran before, then register the provider's
    listener with both listener managers (task runner and DAG run) for the runs inside only.
    """
    from airflow.listeners.listener import get_listener_manager as core_listeners
    from airflow.providers.openlineage.plugins.listener import get_openlineage_listener
    from airflow.sdk.listener import get_listener_manager as task_listeners

    managers = (task_listeners(), core_listeners())  # plugins load here, with the session's conf
    mp = pytest.MonkeyPatch()
    mp.setenv("AIRFLOW__OPENLINEAGE__TRANSPORT", json.dumps(transport))
    mp.setenv("AIRFLOW__OPENLINEAGE__DISABLED", "false")
    for key, value in env.items():
        mp.setenv(key, value)
    from airflow.providers.openlineage import conf as ol_conf

    assert not ol_conf.is_disabled() and ol_conf.transport() == transport, "Airflow's conf must see the transport"
    listener = get_openlineage_listener()
    listener.adapter._client = None  # built again from the transport above
    added = []
    for manager in managers:
        if not manager.pm.is_registered(listener):
            manager.add_listener(listener)
            added.append(manager)
    try:
        yield
    finally:
        # DAG-run events go through a process pool: wait for them, and never let a worker keep
        # this transport's client for the next run.
        executor, listener._executor = listener._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        for manager in added:
            manager.pm.unregister(listener)
        listener.adapter._client = None
        mp.undo()


def read_events(path: Path) -> list[dict[str, Any]]:
    assert path.exists(), f"no OpenLineage event was written to {path}: the listener did not fire"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class Receiver:
    """A small OpenLineage HTTP endpoint on 127.0.0.1: keeps what it is sent, at most ``limit`` events."""

    def __init__(self, limit: int = 100) -> None:
        self.events: list[dict[str, Any]] = []
        self.paths: list[str] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 10  # seconds a client may take to send a request

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with lock:
                    accepted = len(outer.events) < limit
                    if accepted:
                        outer.events.append(json.loads(body))
                        outer.paths.append(self.path)
                self.send_response(200 if accepted else 429)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=10)


@pytest.fixture(scope="module")
def schemas():
    return registry()


def forget_demo_schemas() -> None:
    """Start the demo with no schema cache (``default_cache_path``): its START events' static lineage
    depends on what earlier runs left there, and the file and HTTP runs are compared event for event
    whatever ran before them."""
    shutil.rmtree(Path(os.environ["AIRFLOW_HOME"]) / "lineage" / "schema_cache" / "spark_column_lineage_demo",
                  ignore_errors=True)


def run_with_file_transport(dag_file: str, directory: Path) -> tuple[Any, list[dict[str, Any]]]:
    """``dag.test()`` of a DAG file with OpenLineage's file transport: (the run, its events)."""
    log = directory / "events.jsonl"
    with openlineage_enabled({"type": "file", "log_file_path": str(log), "append": True}):
        run = load_dag(DAGS / dag_file).test()
    return run, read_events(log)


@pytest.fixture(scope="module")
def file_run(demo_file_run):
    """The example DAG with the file transport: the worker's shared run (``tests/integration/conftest.py``)."""
    return demo_file_run


@pytest.fixture(scope="module")
def http_run(airflow_db):
    """The example DAG with the HTTP transport, the Spark conf injection on, and every Spark conf recorded."""
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook

    submitted: dict[str, dict[str, Any]] = {}
    submit = SparkLineageHook.submit

    def recording_submit(self, application: str = "", **kwargs: Any) -> Any:
        submitted[self._name] = dict(self._conf)
        return submit(self, application, **kwargs)

    mp = pytest.MonkeyPatch()
    mp.setattr(SparkLineageHook, "submit", recording_submit)
    forget_demo_schemas()
    transport = {"type": "http", "url": None, "endpoint": "api/v1/lineage"}
    try:
        with Receiver() as receiver:
            transport["url"] = receiver.url
            with openlineage_enabled(
                transport,
                AIRFLOW__OPENLINEAGE__SPARK_INJECT_PARENT_JOB_INFO="true",
                AIRFLOW__OPENLINEAGE__SPARK_INJECT_TRANSPORT_INFO="true",
            ):
                run = load_dag(DAGS / "spark_column_lineage_demo.py").test()
    finally:
        mp.undo()
    return run, receiver, submitted


@pytest.fixture(scope="module")
def failed_run(airflow_db, tmp_path_factory):
    return run_with_file_transport("lineage_test_failures.py", tmp_path_factory.mktemp("openlineage-fail"))


# -- helpers -----------------------------------------------------------------------------------


def task_event(events: list[dict], job: str, event_type: str) -> dict:
    found = [e for e in events if e["job"]["name"] == job and e["eventType"] == event_type]
    kinds = [(e["eventType"], e["job"]["name"]) for e in events]
    assert len(found) == 1, f"{len(found)} {event_type} events of {job} in {kinds}"
    return found[0]


def by_name(event: dict, side: str) -> dict[str, dict]:
    """Datasets of one side of an event by the catalog table name in their symlink."""
    out = {}
    for d in event[side]:
        (identifier,) = d["facets"]["symlinks"]["identifiers"]
        out[identifier["name"].removeprefix(T)] = d
    return out


def table_of(datasets: dict[str, dict], namespace: str, name: str) -> str:
    (table,) = [t for t, d in datasets.items() if (d["namespace"], d["name"]) == (namespace, name)]
    return table


def summary(event: dict) -> tuple:
    """What must be equal in two runs of the same DAG: everything but ids, times and Airflow's run facets."""
    return (
        event["eventType"],
        event["job"]["name"],
        sorted(event["job"]["facets"]),
        event["job"]["facets"].get("sql"),
        sorted(event["run"]["facets"]),
        event["run"]["facets"].get(EXTRACTION),
        event.get("inputs"),
        event.get("outputs"),
    )


# -- file transport ----------------------------------------------------------------------------


def test_listener_fires_start_and_complete_for_both_tasks(file_run):
    run, events = file_run
    assert run.state == "success"
    kinds = [(e["eventType"], e["job"]["name"]) for e in events]
    for job in (PREPARE, BUILD):
        assert kinds.count(("START", job)) == 1 and kinds.count(("COMPLETE", job)) == 1
    assert ("COMPLETE", DEMO) in kinds  # the DAG run itself
    assert all(kind in ("START", "COMPLETE") for kind, _ in kinds)


def test_every_event_and_facet_is_valid_against_the_spec(file_run, schemas):
    _, events = file_run
    checked = set()
    for event in events:
        checked.update(validate_event(event, schemas))
    ours = {
        "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
        "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
        "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
        "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet",
    }
    assert ours <= checked
    assert any(url.endswith("/AirflowLineageExtractionRunFacet") for url in checked)


def test_complete_event_of_build_dwd_users_has_the_seed_lineage_edge_by_edge(file_run):
    _, events = file_run
    event = task_event(events, BUILD, "COMPLETE")
    inputs = by_name(event, "inputs")
    outputs = by_name(event, "outputs")
    assert set(outputs) == {"dwd_users"}, "one output dataset per written table"
    assert set(inputs) == {"ods_users", "dim_company", "dwd_users"}  # dwd_users: read by the closing SELECT
    target = outputs["dwd_users"]
    assert target["namespace"] == "file"
    assert target["name"] == os.path.join(os.environ["AIRFLOW_LINEAGE_LOCAL_DIR"], "warehouse", "dwd_users")
    assert target["facets"]["symlinks"]["identifiers"] == [
        {"namespace": "spark_catalog", "name": T + "dwd_users", "type": "TABLE"}
    ]

    lineage = target["facets"]["columnLineage"]
    got: dict[str, dict[tuple[str, str], set[tuple[str, str]]]] = {}
    for column, entry in lineage["fields"].items():
        for field in entry["inputFields"]:
            table = table_of(inputs, field["namespace"], field["name"])  # references an input dataset
            edges = got.setdefault(column, {}).setdefault((table, field["field"]), set())
            for t in field["transformations"]:
                assert t["type"] == "DIRECT" and t["masking"] is False
                edges.add((t["subtype"], t["description"]))
    assert got == SEED
    for column, edges in SEED_JOIN.items():  # the seed join statement, edge by edge
        for table, field, subtype in edges:
            assert subtype in {s for s, _ in got[column][(table, field)]}, (column, table, field, subtype)

    indirect = {
        (table_of(inputs, f["namespace"], f["name"]), f["field"], t["type"], t["subtype"])
        for f in lineage["dataset"]
        for t in f["transformations"]
    }
    assert indirect == SEED_INDIRECT

    columns = ["id", "name", "company_name", "birthday", "ts", "p"]
    assert [f["name"] for f in target["facets"]["schema"]["fields"]] == columns
    assert [f["name"] for f in inputs["ods_users"]["facets"]["schema"]["fields"]] == ["id", "name", "birthday", "ts"]
    assert [f["name"] for f in inputs["dim_company"]["facets"]["schema"]["fields"]] == ["company_name", "user_id"]
    assert all("type" not in f for d in event["inputs"] for f in d["facets"]["schema"]["fields"])


def test_complete_event_carries_sql_and_how_the_lineage_was_extracted(file_run):
    _, events = file_run
    event = task_event(events, BUILD, "COMPLETE")
    sql = event["job"]["facets"]["sql"]
    assert sql["dialect"] == "spark"
    assert "FROM ods_users a JOIN dim_company b ON a.id = b.user_id" in sql["query"]
    assert "{{" not in sql["query"]
    extraction = event["run"]["facets"][EXTRACTION]
    assert extraction["methods"] == ["plan"] and extraction["confidence"] == 1.0 and extraction["warnings"] == []
    assert [(s["index"], s.get("target")) for s in extraction["statements"]] == [
        (0, T + "dwd_users"), (1, T + "dwd_users"), (2, None)
    ]
    # Each statement's plan lineage, checked against the static lineage of the same SQL.
    assert [s["agreement"] for s in extraction["statements"]] == [
        {"static": "same", "only_plan": [], "only_static": []}] * 3


def test_prepare_tables_outputs_both_tables_each_with_its_own_facet(file_run):
    _, events = file_run
    event = task_event(events, PREPARE, "COMPLETE")
    outputs = by_name(event, "outputs")
    assert set(outputs) == {"ods_users", "dim_company"}
    assert event["inputs"] == []
    written = {"ods_users": ["id", "name", "birthday", "ts"], "dim_company": ["user_id", "company_name"]}
    for table, columns in written.items():
        facets = outputs[table]["facets"]
        assert [f["name"] for f in facets["schema"]["fields"]] == columns
        assert facets["columnLineage"]["fields"] == {}  # VALUES: no column comes from a dataset
        assert facets["columnLineage"]["dataset"] == []


def test_start_events_carry_the_static_lineage_of_the_sql(file_run):
    _, events = file_run
    for job in (PREPARE, BUILD):
        event = task_event(events, job, "START")
        assert event["job"]["facets"]["sql"]["dialect"] == "spark"
        assert event["run"]["facets"][EXTRACTION]["methods"] == ["sql"]
    start = task_event(events, BUILD, "START")
    complete = task_event(events, BUILD, "COMPLETE")
    assert "INSERT INTO dwd_users" in start["job"]["facets"]["sql"]["query"]
    # Named as the plan names it on completion (the embedded warehouse), so the two merge.
    assert [(d["namespace"], d["name"]) for d in start["outputs"]] == [
        (d["namespace"], d["name"]) for d in complete["outputs"]]
    fields = start["outputs"][0]["facets"]["columnLineage"]["fields"]
    assert [(f["name"], f["field"]) for f in fields["id"]["inputFields"]] == [
        (complete["inputs"][[i["name"].rsplit("/", 1)[-1] for i in complete["inputs"]].index("ods_users")]["name"], "id")]


# -- HTTP transport ----------------------------------------------------------------------------


def test_http_transport_receives_the_same_events(http_run, file_run, schemas):
    run, receiver, _ = http_run
    _, file_events = file_run
    assert run.state == "success"
    assert receiver.events, "the receiver got no event: the listener did not fire"
    assert set(receiver.paths) == {"/api/v1/lineage"}
    for event in receiver.events:
        validate_event(event, schemas)
    key = lambda e: (e["job"]["name"], e["eventType"])  # noqa: E731
    assert sorted(map(summary, receiver.events), key=str) == sorted(map(summary, file_events), key=str)
    assert sorted(map(key, receiver.events)) == sorted(map(key, file_events))


def test_spark_conf_carries_parent_job_and_transport_for_openlineage_spark(http_run):
    _, receiver, submitted = http_run
    conf = submitted["airflow-lineage-build_dwd_users"]
    complete = task_event(receiver.events, BUILD, "COMPLETE")
    parent = complete["run"]["facets"]["parent"]
    assert conf["spark.openlineage.parentJobNamespace"] == complete["job"]["namespace"]
    assert conf["spark.openlineage.parentJobName"] == BUILD
    assert conf["spark.openlineage.parentRunId"] == complete["run"]["runId"]
    assert conf["spark.openlineage.rootParentRunId"] == parent["root"]["run"]["runId"]
    assert conf["spark.openlineage.rootParentJobName"] == DEMO
    assert conf["spark.openlineage.transport.type"] == "http"
    assert conf["spark.openlineage.transport.url"] == receiver.url
    assert conf["spark.openlineage.transport.endpoint"] == "api/v1/lineage"
    assert conf["spark.sql.catalogImplementation"] == "hive"  # the embedded Spark's own settings stay


# -- a failing task ----------------------------------------------------------------------------


def test_failing_sql_emits_start_and_fail_with_the_error_and_no_lineage(failed_run, schemas):
    run, events = failed_run
    assert run.state == "failed"
    for event in events:
        validate_event(event, schemas)
    job = "lineage_syntax_error.bad_sql"
    assert [e["eventType"] for e in events if e["job"]["name"] == job] == ["START", "FAIL"]
    fail = task_event(events, job, "FAIL")
    error = fail["run"]["facets"]["errorMessage"]
    assert "Statement 3 of 4 has a syntax error at line 4 of the script" in error["message"]
    assert error["programmingLanguage"] == "python"
    assert "SparkJobError" in error["stackTrace"]
    assert fail["outputs"] == [] and fail["inputs"] == []
    assert "SELEC a FROM syntax_t" in fail["job"]["facets"]["sql"]["query"]
    extraction = fail["run"]["facets"][EXTRACTION]
    assert extraction["methods"] == ["none"] and extraction["confidence"] == 0.0 and extraction["statements"] == []
