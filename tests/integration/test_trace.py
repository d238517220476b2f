"""The column trace across DAGs on real Airflow: three DAGs that share tables run with dag.test(), then the
follower reads their lineage XComs from the database and ``airflow-lineage trace`` answers the same.

No Spark: the DAGs push the documents a Spark task would (tests/dags/lineage_test_trace.py).
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import subprocess

import pytest

from tests.conftest import DAGS, venv_bin

pytestmark = pytest.mark.airflow

T = "spark_catalog.trace."


def _dags():
    spec = importlib.util.spec_from_file_location("lineage_test_trace", DAGS / "lineage_test_trace.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def three_dags(airflow_db):
    m = _dags()
    for dag in (m.dwd_dag, m.report_dag, m.rollup_dag):
        assert dag.test().state == "success"
    return m


def _hops(trace) -> set[tuple]:
    return {(h.direction, h.depth, h.target.label, h.target.column, h.source.label, h.source.column, h.subtype,
             h.run.dag_id) for h in trace.hops}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([venv_bin("airflow-lineage"), "trace", *args], capture_output=True, text=True,
                          env=os.environ, timeout=300)


def test_the_follower_joins_three_dags_and_the_cli_gives_the_same_hops(three_dags):
    from airflow_lineage_provider.lineage.trace import TraceQuery
    from airflow_lineage_provider.runs import TraceFollower

    follower = TraceFollower()
    assert follower.refresh() >= 3  # the three DAGs' runs, and those other tests of the session left
    trace = TraceQuery.parse(T + "company_rollup.name", downstream=False).run(follower.index)
    assert _hops(trace) == {
        ("upstream", 1, T + "company_rollup", "name", T + "company_report", "company_name", "IDENTITY", "trace_rollup"),
        ("upstream", 2, T + "company_report", "company_name", T + "dwd_users", "company_name", "IDENTITY",
         "trace_report"),
        ("upstream", 2, T + "company_report", "", T + "dwd_users", "company_name", "GROUP_BY", "trace_report"),
        ("upstream", 3, T + "dwd_users", "company_name", T + "dim_company", "company_name", "IDENTITY", "trace_dwd"),
        ("upstream", 3, T + "dwd_users", "", T + "ods_users", "company_id", "JOIN", "trace_dwd"),
        ("upstream", 3, T + "dwd_users", "", T + "dim_company", "id", "JOIN", "trace_dwd"),
    }
    assert sorted(s.dataset.label for s in trace.sources) == [T + "dim_company", T + "ods_users"]

    done = _cli(T + "company_rollup.name", "--upstream", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(trace.to_dict()))

    impact = _cli("trace.ods_users.birthday", "--downstream", "--csv")
    assert impact.returncode == 0, impact.stderr
    rows = list(csv.DictReader(io.StringIO(impact.stdout)))
    assert [(r["depth"], r["dag_id"], r["target"], r["target_column"]) for r in rows] == [
        ("1", "trace_dwd", T + "dwd_users", "age"), ("2", "trace_report", T + "company_report", "age_band")]

    text = _cli("trace.company_report.users", "--depth", "1")
    assert text.returncode == 0, text.stderr
    assert "upstream:" in text.stdout and "downstream:" in text.stdout
    assert "spark_catalog.trace.company_rollup.users <- spark_catalog.trace.company_report.users" in text.stdout


def test_a_new_run_is_followed_and_as_of_shows_the_old_edge(three_dags):
    from airflow_lineage_provider.lineage.trace import TraceQuery
    from airflow_lineage_provider.runs import TraceFollower

    follower = TraceFollower()
    follower.refresh()
    before = TraceQuery.parse(T + "company_rollup.users", downstream=False, depth="1").run(follower.index)
    [old] = before.hops
    assert follower.refresh() == 0  # nothing new: nothing read again

    assert three_dags.rollup_dag.test(run_conf={"version": 2}).state == "success"
    assert follower.refresh() == 1
    after = TraceQuery.parse(T + "company_rollup.users", downstream=False, depth="1").run(follower.index)
    assert {(h.source.column, h.subtype) for h in after.hops} == {("users", "AGGREGATION"),
                                                                  ("company_name", "AGGREGATION")}
    old_query = TraceQuery.parse(T + "company_rollup.users", downstream=False, depth="1", as_of=old.run.ended)
    then = old_query.run(follower.index_at(old_query.as_of))
    assert then.hops == before.hops
    # The follower keeps each task's latest run only: the earlier time is read from the database.
    with pytest.raises(ValueError, match="latest run only"):
        old_query.run(follower.index)

    # A restart reads everything again and knows the same.
    again = TraceFollower()
    read = again.refresh()
    # It reads one document a task (its latest run), however many runs the database keeps, and the
    # time of the run before: the rollup's first version is not read again.
    assert 0 < read <= len(again.index._runs)
    rollup = again.index._runs[("trace_rollup", "build_rollup", -1)]
    assert [bool(r.edges) for r in rollup] == [False, True] and rollup[0].run.ended == old.run.ended
    assert TraceQuery.parse(T + "company_rollup.users", downstream=False, depth="1").run(again.index) == after
    done = _cli(T + "company_rollup.users", "--upstream", "--depth", "1", "--as-of", old.run.ended, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(then.to_dict()))


def test_cli_says_what_is_wrong(three_dags):
    unknown = _cli("trace.nowhere.x")
    assert unknown.returncode == 1 and "no task with column lineage writes or reads trace.nowhere.x" in unknown.stderr
    bad = _cli("trace.company_report.users", "--depth", "0")
    assert bad.returncode == 2 and "at least 1 step" in bad.stderr


# -- issue 42: hidden tables ---------------------------------------------------------------------------------
# The API's trace and search, as the real app function answers them over the real follower and database,
# with Airflow's SimpleAuthManager less some DAGs (tests/integration/auth_manager.py): ``norole`` has no
# role (reads no DAG), ``onedag`` may read trace_report only.

WH = "/warehouse/trace.db/"


@pytest.fixture
def as_user(three_dags, monkeypatch):
    """``ask(user, dataset, **params)``: (status, body) of the trace API's answer for a user."""
    from airflow.api_fastapi.app import _AuthManagerState
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from fastapi import HTTPException

    from airflow_lineage_provider.plugins.app import trace_answer
    from tests.integration.auth_manager import PerDagAuthManager

    monkeypatch.setenv("AIRFLOW_LINEAGE_TEST_HIDDEN", "onedag:trace_dwd|trace_rollup")
    monkeypatch.setattr(_AuthManagerState, "instance", PerDagAuthManager())
    users = {"admin": SimpleAuthManagerUser(username="admin", role="admin"),
             "norole": SimpleAuthManagerUser(username="norole", role=None),
             "onedag": SimpleAuthManagerUser(username="onedag", role="viewer")}

    def ask(user: str, dataset: str, column: str | None = None, direction: str = "both", depth: str = "all",
            as_of: str | None = None) -> tuple[int, dict]:
        try:
            return 200, json.loads(json.dumps(trace_answer(users[user], dataset, column, direction, depth, as_of)))
        except HTTPException as e:
            return e.status_code, {"detail": e.detail}

    ask.users = users
    return ask


def _swapped(body: dict, hidden: str, unknown: str) -> dict:
    return json.loads(json.dumps(body).replace(unknown, hidden))


@pytest.mark.parametrize("dataset, column, hidden_from", [
    (T + "dwd_users", None, ("norole",)), ("trace.dwd_users.age", None, ("norole",)),
    ("`trace`.`dwd_users`.`AGE`", None, ("norole",)), (WH + "dwd_users", "company_name", ("norole",)),
    ("TRACE.ODS_USERS.BIRTHDAY", None, ("norole", "onedag")), (WH + "ods_users", None, ("norole", "onedag")),
    ("file/" + WH + "ods_users", None, ("norole", "onedag")), (T + "company_rollup.name", None, ("norole", "onedag")),
])
def test_a_hidden_table_gets_the_unknown_tables_answer_from_the_api(as_user, dataset, column, hidden_from):
    unknown = dataset.replace("dwd_users", "nosuch_a").replace("ods_users", "nosuch_b").replace(
        "ODS_USERS", "NOSUCH_B").replace("company_rollup", "nosuch_c")
    assert as_user("admin", dataset, column)[0] == 200
    for user in hidden_from:
        for direction, depth in (("both", "all"), ("upstream", "1"), ("downstream", "all")):
            got = as_user(user, dataset, column, direction, depth)
            none = as_user(user, unknown, column, direction, depth)
            assert got[0] == none[0] == 404, (user, dataset, got)
            assert got[1] == _swapped(none[1], dataset, unknown), (user, dataset)
            assert WH not in json.dumps(got[1]) or WH in dataset


def test_a_table_a_hidden_dag_writes_shows_its_visible_reader_and_counts_the_writer(as_user):
    status, body = as_user("onedag", "trace.dwd_users.company_name")
    assert status == 200, body
    trace = body["trace"]
    assert trace["found"] and (trace["start"]["label"], trace["start"]["column"]) == (T + "dwd_users", "company_name")
    assert {(h["direction"], h["run"]["dag_id"], h["target"]["label"], h["target"]["column"]) for h in trace["hops"]} == {
        ("downstream", "trace_report", T + "company_report", "company_name"),
        ("downstream", "trace_report", T + "company_report", "")}
    # trace_dwd's hops into dwd_users (a column and two join keys), trace_rollup's out of the report: counted.
    assert [(g["direction"], g["depth"]) for g in trace["hidden"]] == [("upstream", 1), ("downstream", 2)]
    assert trace["hidden"][0]["hops"] == 3 and trace["sources"] == []
    text = json.dumps(body)
    for leak in ("trace_dwd", "build_dwd", "trace_rollup", "company_rollup", "ods_users", "dim_company"):
        assert leak not in text, leak
    # Its age, which trace_dwd makes from ods_users.birthday: the report's hop, the making counted.
    status, body = as_user("onedag", "trace.dwd_users.AGE", direction="upstream")
    assert status == 200 and body["trace"]["start"]["column"] == "age" and body["trace"]["hops"] == []
    assert body["trace"]["hidden"] == [{"direction": "upstream", "depth": 1, "hops": 3}]
    assert "birthday" not in json.dumps(body) and "ods_users" not in json.dumps(body)
    # A column no DAG names: found nowhere, nothing counted; the table itself is one the user can see.
    status, body = as_user("onedag", "trace.dwd_users.nosuch")
    assert status == 200 and body["trace"]["found"] is False and body["trace"]["hidden"] == []


def test_search_offers_a_user_only_what_the_dags_they_may_read_name(as_user):
    from airflow_lineage_provider.plugins.app import visible_to
    from airflow_lineage_provider.runs import trace_follower

    follower = trace_follower()
    follower.refresh()

    def search(user: str, q: str) -> set[tuple[str, str]]:
        return {(f.label, f.column) for f in follower.index.search(q, visible=visible_to(as_user.users[user]))}

    assert search("admin", "trace.ods_users") >= {(T + "ods_users", ""), (T + "ods_users", "birthday")}
    for q in ("trace.ods_users", "trace.dwd_users", "trace.company_rollup", "birthday"):
        assert search("norole", q) == set(), q
    assert search("onedag", "trace.ods_users") == search("onedag", "trace.company_rollup") == set()
    assert search("onedag", "trace.dwd_users") == {(T + "dwd_users", ""), (T + "dwd_users", "company_name"),
                                                   (T + "dwd_users", "id"), (T + "dwd_users", "age")}
