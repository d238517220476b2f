"""The example DAG end to end: real Airflow (dag.test on SQLite) and real local Spark."""

from __future__ import annotations

import importlib.util
import subprocess

import pytest

from tests.conftest import venv_bin
from tests.helpers import document_edges

pytestmark = [pytest.mark.spark, pytest.mark.airflow]

T = "spark_catalog.default."
SEED_SINGLE = {
    "id": {(T + "ods_users", "id", "IDENTITY")},
    "name": {(T + "ods_users", "name", "IDENTITY")},
    "company_name": {(T + "ods_users", "name", "IDENTITY")},
    "birthday": {(T + "ods_users", "birthday", "IDENTITY")},
    "ts": {(T + "ods_users", "ts", "IDENTITY")},
    "p": {(T + "ods_users", "birthday", "TRANSFORMATION")},
}
SEED_JOIN = {
    **SEED_SINGLE,
    "name": {(T + "ods_users", "name", "TRANSFORMATION"), (T + "dim_company", "company_name", "TRANSFORMATION")},
    "company_name": {(T + "dim_company", "company_name", "IDENTITY")},
}


def load_dag(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.dag


def xcoms(dag_id: str, run_id: str) -> dict[str, dict]:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.scalars(
            select(XComModel).where(XComModel.dag_id == dag_id, XComModel.run_id == run_id,
                                    XComModel.key == "column_lineage")
        ).all()
        return {r.task_id: XComModel.deserialize_value(r) for r in rows}



def asset_events(dag_id: str, run_id: str) -> dict[tuple[str, str], dict]:
    """{(source task, asset URI): extra} of a run's asset events."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(
            select(AssetEvent.source_task_id, AssetModel.uri, AssetEvent.extra)
            .join(AssetModel, AssetModel.id == AssetEvent.asset_id)
            .where(AssetEvent.source_dag_id == dag_id, AssetEvent.source_run_id == run_id)
        ).all()
    return {(task_id, uri): extra for task_id, uri, extra in rows}


@pytest.fixture(scope="module")
def demo_run(demo_file_run):
    """The worker's run of the example DAG (``tests/integration/conftest.py``; OpenLineage's file transport on) and
    its XCom documents."""
    run, _ = demo_file_run
    return run, xcoms(run.dag_id, run.run_id)


def test_demo_run_succeeds_and_pushes_lineage_for_both_tasks(demo_run):
    run, docs = demo_run
    assert run.state == "success"
    assert set(docs) == {"prepare_tables", "build_dwd_users"}
    assert all(d["format"] == "airflow-lineage/1" for d in docs.values())


def test_seed_statements_lineage_edge_by_edge(demo_run):
    _, docs = demo_run
    statements = docs["build_dwd_users"]["statements"]
    writes = [s for s in statements if s["target"]]
    assert [s["index"] for s in writes] == [0, 1]
    single, join = writes
    assert document_edges(single) == SEED_SINGLE
    assert document_edges(join) == SEED_JOIN
    assert list(single["columns"]) == ["id", "name", "company_name", "birthday", "ts", "p"]
    by_col = {c: {i["field"]: i["expression"] for i in inputs} for c, inputs in join["columns"].items()}
    assert by_col["name"] == {"name": "concat(a.name, b.company_name)", "company_name": "concat(a.name, b.company_name)"}
    assert by_col["p"] == {"birthday": "date_format(a.birthday, 'yyyyMMdd')"}
    assert {(i["table"], i["field"], i["subtype"]) for i in join["indirect"]} == {
        (T + "ods_users", "id", "JOIN"), (T + "dim_company", "user_id", "JOIN"),
    }
    for s in writes:
        assert s["method"] == "plan" and s["confidence"] == 1.0 and s["warnings"] == []
        assert s["target"]["table"] == T + "dwd_users"
        assert s["target"]["namespace"] == "file"
        assert s["target"]["name"].endswith("/warehouse/dwd_users")
        assert s["target"]["mode"] == "append"
    assert {d["table"] for d in join["inputs"]} == {T + "ods_users", T + "dim_company"}


def test_every_written_table_is_an_asset_event_named_by_its_location(demo_run):
    """Our operators publish their writes as Airflow asset events, as the stock operators do with the option."""
    import os

    run, _ = demo_run
    warehouse = os.path.join(os.environ["AIRFLOW_LINEAGE_LOCAL_DIR"], "warehouse")
    events = asset_events("spark_column_lineage_demo", run.run_id)
    assert set(events) == {
        ("prepare_tables", f"file://{warehouse}/ods_users"), ("prepare_tables", f"file://{warehouse}/dim_company"),
        ("build_dwd_users", f"file://{warehouse}/dwd_users"),
    }
    dwd = events["build_dwd_users", f"file://{warehouse}/dwd_users"]
    assert dwd["table"] == T + "dwd_users"
    # Read by the seed join (and by the closing SELECT, which writes nothing): what the table was made from.
    assert sorted(dwd["inputs"]) == [f"file://{warehouse}/dim_company", f"file://{warehouse}/ods_users"]
    assert dwd["columns"] == ["id", "name", "company_name", "birthday", "ts", "p"]


def test_bare_select_reports_its_result_columns(demo_run):
    _, docs = demo_run
    query = [s for s in docs["build_dwd_users"]["statements"] if s["target"] is None]
    assert len(query) == 1 and query[0]["index"] == 2
    assert document_edges(query[0]) == {"p": {(T + "dwd_users", "p", "IDENTITY")}, "users": set()}
    assert {(i["field"], i["subtype"]) for i in query[0]["indirect"]} == {("p", "GROUP_BY"), ("p", "SORT")}


def test_prepare_tables_reports_its_inserts_with_no_source(demo_run):
    _, docs = demo_run
    targets = [s["target"]["table"] for s in docs["prepare_tables"]["statements"]]
    assert targets == [T + "ods_users", T + "dim_company"]
    for s in docs["prepare_tables"]["statements"]:
        assert all(inputs == [] for inputs in s["columns"].values())


def test_show_command_prints_the_lineage_of_the_run(demo_run):
    run, _ = demo_run
    out = subprocess.run([venv_bin("airflow-lineage"), "show", "--dag-id", "spark_column_lineage_demo",
                          "--run-id", run.run_id], capture_output=True, text=True, check=True).stdout
    assert "== task build_dwd_users" in out
    assert "name         <- spark_catalog.default.dim_company.company_name  TRANSFORMATION" in out


def test_syntax_error_in_third_statement_fails_task_naming_it(airflow_db, capfd):
    from tests.conftest import DAGS

    dag = load_dag(DAGS / "lineage_test_failures.py")
    marker = DAGS.parent / "syntax_error_marker"
    run = dag.test()
    out = capfd.readouterr()
    text = out.out + out.err
    assert run.state == "failed"
    assert "Statement 3 of 4 has a syntax error at line 4 of the script" in text
    assert "PARSE_SYNTAX_ERROR" in text
    assert not marker.exists(), "no statement may run when the script does not parse"
    assert xcoms("lineage_syntax_error", run.run_id) == {}


def test_provider_is_listed_by_airflow(airflow_db):
    out = subprocess.run([venv_bin("airflow"), "providers", "list"], capture_output=True, text=True, check=True).stdout
    assert "airflow-lineage-provider" in out


def test_every_plan_statement_says_whether_the_static_extractor_agrees(demo_run):
    """The demo's SQL is read by both extractors; on its statements they agree edge for edge."""
    _, docs = demo_run
    for task in ("prepare_tables", "build_dwd_users"):
        for s in docs[task]["statements"]:
            assert s["agreement"] == {"static": "same", "only_plan": [], "only_static": []}, (task, s["index"])


def test_diff_of_a_tasks_last_two_runs_reads_xcom(airflow_db):
    """``airflow-lineage diff --dag-id --task-id``: the task's last two successful runs with lineage, old then new."""
    from tests.conftest import DAGS

    dag = load_dag(DAGS / "lineage_test_ui.py")
    runs = [dag.test().run_id for _ in range(2)]
    proc = subprocess.run([venv_bin("airflow-lineage"), "diff", "--dag-id", "lineage_test_ui", "--task-id", "hostile"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"column lineage: {runs[0]} -> {runs[1]}", "no change in the column lineage"]
    missing = subprocess.run([venv_bin("airflow-lineage"), "diff", "--dag-id", "lineage_test_ui", "--task-id",
                              "hostile", "--run-id", runs[0], "--run-id", "no_such_run"],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2
    assert "task hostile of DAG lineage_test_ui has no column lineage in run(s) no_such_run" in missing.stderr
