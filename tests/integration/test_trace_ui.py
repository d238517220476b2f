"""The trace across DAGs through its API and its page: a real `airflow api-server`, two users, headless Chromium.

Three DAGs that share tables run first (tests/dags/lineage_test_trace.py, no Spark). The server's auth
manager is SimpleAuthManager with per-DAG permissions (tests/integration/auth_manager.py): ``partial`` may
not read ``trace_report``, ``onedag`` may read only it, as a FAB or Keycloak role would say; ``norole`` has
no role. What each user gets is checked in the API's
answer and on the page; the API's hops are compared with ``airflow-lineage trace --json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, venv_bin
from tests.integration.api_server import api_server
from tests.integration.test_trace import T, three_dags  # noqa: F401 - the module's fixture
from tests.integration.test_ui import _get, _screenshot, _token, browser  # noqa: F401 - the module's fixture

pytestmark = [pytest.mark.slow, pytest.mark.airflow]


@pytest.fixture(scope="module")
def server(three_dags, tmp_path_factory):  # noqa: F811
    # The rollup's latest run is its second version, whichever test module ran first.
    assert three_dags.rollup_dag.test(run_conf={"version": 2}).state == "success"
    home = Path(os.environ["AIRFLOW_HOME"])
    log = tmp_path_factory.mktemp("api-server-trace") / "api-server.log"
    env = {"AIRFLOW__CORE__AUTH_MANAGER": "tests.integration.auth_manager.PerDagAuthManager",
           "AIRFLOW_LINEAGE_TEST_HIDDEN": "partial:trace_report,onedag:trace_dwd|trace_rollup",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    with api_server("admin:admin,partial:viewer,norole:,onedag:viewer", home / "trace_test_passwords.json", log,
                    env=env) as running:
        yield running


def _trace(server, user: str | None, path: str = "/column-lineage/api/trace", **params) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {_token(server, user)}"} if user else {}
    return _get(f"{server['base']}{path}?{urllib.parse.urlencode(params)}", headers)


def test_the_api_gives_the_cli_hops_and_requires_sign_in(server):
    status, _ = _trace(server, None, dataset=T + "company_rollup.name")
    assert status == 401
    status, body = _trace(server, "admin", dataset=T + "company_rollup.name", direction="upstream")
    assert status == 200, body
    answer = json.loads(body)
    cli = subprocess.run([venv_bin("airflow-lineage"), "trace", T + "company_rollup.name", "--upstream", "--json"],
                         capture_output=True, text=True, env=os.environ, timeout=300)
    assert cli.returncode == 0, cli.stderr
    assert answer["trace"] == json.loads(cli.stdout)
    assert len(answer["trace"]["hops"]) == 6 and answer["trace"]["hidden"] == []
    # The same trace drawn as the run view draws a run: its tables and tasks.
    assert {t["label"] for t in answer["graph"]["tables"]} == {
        T + "company_rollup", T + "company_report", T + "dwd_users", T + "dim_company", T + "ods_users"}
    assert {t["task_id"] for t in answer["graph"]["tasks"]} == {
        "trace_rollup.build_rollup", "trace_report.build_report", "trace_dwd.build_dwd"}


def test_a_user_without_a_dag_sees_a_hidden_marker_never_its_columns(server):
    status, body = _trace(server, "partial", dataset=T + "company_rollup.name", direction="upstream")
    assert status == 200, body
    answer = json.loads(body)
    hops = answer["trace"]["hops"]
    assert [(h["run"]["dag_id"], h["target"]["column"], h["source"]["column"]) for h in hops] == [
        ("trace_rollup", "name", "company_name")]
    assert answer["trace"]["hidden"] == [{"direction": "upstream", "depth": 2, "hops": 2}]
    text = body.decode()
    assert "trace_report" not in text and "build_report" not in text and "dwd_users" not in text
    # Downstream of a source only trace_dwd and the hidden DAG read: A's hops, then the marker.
    status, body = _trace(server, "partial", dataset=T + "ods_users.birthday", direction="downstream")
    answer = json.loads(body)
    assert [(h["run"]["dag_id"], h["target"]["column"]) for h in answer["trace"]["hops"]] == [("trace_dwd", "age")]
    assert answer["trace"]["hidden"] == [{"direction": "downstream", "depth": 2, "hops": 1}]
    assert "age_band" not in body.decode()
    # Search offers nothing only the hidden DAG names.
    status, body = _trace(server, "partial", path="/column-lineage/api/trace/search", q="age_band")
    assert status == 200 and json.loads(body) == {"results": []}
    status, body = _trace(server, "admin", path="/column-lineage/api/trace/search", q="age_band")
    assert [r["column"] for r in json.loads(body)["results"]] == ["age_band"]


def test_an_answer_too_big_keeps_its_nearest_depths_and_says_how_many_it_left_out(server):
    status, body = _trace(server, "admin", dataset=T + "company_rollup.name", direction="upstream", limit=3)
    assert status == 200, body
    trace = json.loads(body)["trace"]
    assert [h["depth"] for h in trace["hops"]] == [1, 2, 2]
    assert (trace["omitted"], trace["shown_depth"]) == (3, 2)
    status, body = _trace(server, "admin", dataset=T + "company_rollup.name", limit=0)
    assert status == 422  # FastAPI's own answer to a number out of range


def test_wrong_parameters_say_which(server):
    status, body = _trace(server, "admin", dataset=T + "company_rollup.name", depth="0")
    assert status == 400 and "at least 1 step" in json.loads(body)["detail"]
    status, body = _trace(server, "admin", dataset="default.nowhere.x")
    assert status == 404 and "no task with column lineage" in json.loads(body)["detail"]
    status, body = _trace(server, "admin", dataset=T + "company_rollup.name", direction="sideways")
    assert status == 400 and "direction" in json.loads(body)["detail"]


def _context(server, browser, user: str):  # noqa: F811
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(server["base"] + "/auth/login")
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill(server["passwords"][user])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/auth/login" not in url)
    return context, page


def _highlighted(frame) -> dict[str, set[str]]:
    return frame.evaluate("""() => { const v = window.columnLineage;
      const names = (cls) => v.cy.nodes('.column.' + cls).map(n => v.index.tables.get(n.data('table')).label + '.' + n.data('label'));
      return {selected: names('selected-column'), upstream: names('upstream'), downstream: names('downstream')}; }""")


def test_the_page_finds_a_column_and_draws_its_path_across_dags(server, browser, tmp_path):  # noqa: F811
    context, page = _context(server, browser, "admin")
    try:
        # Through Airflow's menu entry: the plugin's page in Airflow's frame.
        page.goto(server["base"] + "/plugin/column-lineage-trace")
        frame_locator = page.frame_locator("iframe")
        frame_locator.locator("#column-lineage-app[data-state=empty]").wait_for()
        frame_locator.locator("#cl-trace-search").fill("trace.company_report.company")
        # The report's column, found by search, traced both ways.
        found = frame_locator.locator(f"#cl-trace-results button[data-dataset='{T}company_report'][data-column=company_name]")
        found.wait_for()
        offered = frame_locator.locator("#cl-trace-results button").evaluate_all(
            "bs => bs.map(b => b.dataset.dataset + '.' + b.dataset.column)")
        assert offered == [f"{T}company_report.company_name"]
        found.click()
        frame_locator.locator("#column-lineage-app[data-state=ready]").wait_for()
        frame = next(f for f in page.frames if "/column-lineage/trace?" in f.url
                     and f.evaluate("() => (document.querySelector('#column-lineage-app') || {dataset: {}}).dataset.state")
                     == "ready")
        got = _highlighted(frame)
        assert set(got["selected"]) == {T + "company_report.company_name"}
        assert set(got["upstream"]) == {T + "dwd_users.company_name", T + "dim_company.company_name"}
        assert set(got["downstream"]) == {T + "company_rollup.name", T + "company_rollup.users"}
        # The DAGs it crosses, each way in the order it reaches them; a DAG's button shows its tables.
        chips = frame.locator("#cl-trace-dags .cl-dag-chip").evaluate_all(
            "bs => bs.map(b => [b.dataset.direction, b.dataset.dag, b.textContent])")
        assert chips == [["upstream", "trace_report", "trace_report 1"], ["upstream", "trace_dwd", "trace_dwd 2"],
                         ["downstream", "trace_rollup", "trace_rollup 1"]]
        frame.locator("#cl-trace-dags .cl-dag-chip[data-dag=trace_dwd]").click()
        assert frame.evaluate("""() => { const cy = window.columnLineage.cy, e = cy.extent();
          const [n] = cy.nodes('.table').filter(t => window.columnLineage.index.tables.get(t.id()).label.endsWith('.dwd_users'));
          const b = n.boundingBox(); return b.x1 >= e.x1 && b.x2 <= e.x2 && b.y1 >= e.y1 && b.y2 <= e.y2; }""")
        facts = frame.locator("#cl-trace-runs").inner_text()
        assert "trace_dwd.build_dwd" in facts and "trace_rollup.build_rollup" in facts
        assert T + "dim_company" in frame.locator("#cl-trace-facts").inner_text()  # a source without lineage
        _screenshot(page, tmp_path, "trace-across-dags.png")

        # The impact of a source column across both DAGs, downstream only.
        # A name only the trace DAGs have: in the full suite other DAGs read an ods_users.birthday too.
        frame.locator("#cl-trace-search").fill("trace.ods_users.birth")
        birthday = frame.locator(f"#cl-trace-results button[data-dataset='{T}ods_users'][data-column=birthday]")
        birthday.wait_for()
        frame.select_option("#cl-trace-direction", "downstream")
        birthday.click()
        frame.wait_for_url(lambda url: "column=birthday" in url)
        frame.locator("#column-lineage-app[data-state=ready]").wait_for()
        got = _highlighted(frame)
        assert set(got["downstream"]) == {T + "dwd_users.age", T + "company_report.age_band"}
        assert got["upstream"] == []
    finally:
        context.close()


def test_the_page_shows_a_hidden_marker_to_a_user_without_the_dag(server, browser):  # noqa: F811
    context, page = _context(server, browser, "partial")
    try:
        page.goto(server["base"] + "/column-lineage/trace?" + urllib.parse.urlencode(
            {"dataset": T + "company_rollup", "column": "name", "direction": "upstream"}))
        page.locator("#column-lineage-app[data-state=ready]").wait_for()
        hidden = page.locator(".cl-hidden-hops").inner_text()
        assert "2 hops hidden" in hidden
        assert "trace_report" not in page.content() and "dwd_users" not in page.content()
    finally:
        context.close()


def test_a_run_column_links_to_its_trace(server, browser, three_dags):  # noqa: F811
    from tests.integration.test_ui import _latest_successful_run

    run_id = _latest_successful_run("trace_report")
    context, page = _context(server, browser, "admin")
    try:
        page.goto(f"{server['base']}/column-lineage/dags/trace_report/runs/{urllib.parse.quote(run_id, safe='')}")
        page.locator("#column-lineage-app[data-state=ready]").wait_for()
        page.locator(f"#cl-tables button[data-column='{T}company_report.users']").click()
        page.locator("#cl-trace-link").click()
        page.wait_for_url(lambda url: "/column-lineage/trace?" in url)
        page.locator("#column-lineage-app[data-state=ready]").wait_for()
        assert "/column-lineage/trace?" in page.url
        assert page.locator("#cl-trace-start").inner_text() == f"{T}company_report.users"
        got = _highlighted(page.main_frame)
        assert set(got["upstream"]) == {T + "dwd_users.id", T + "ods_users.id"}
        assert set(got["downstream"]) == {T + "company_rollup.users"}
    finally:
        context.close()


D = "spark_catalog.default."  # the example DAGs' tables


# -- the two example DAGs, on real Spark: DAG A writes dwd_users, DAG B reads it into a report ----------------

@pytest.fixture(scope="module")
def demo_dags(airflow_db):
    from tests.conftest import DAGS
    from tests.integration.test_example_dag import load_dag
    from tests.integration.test_ui import DEMO, _latest_successful_run

    if _latest_successful_run(DEMO) is None:
        assert load_dag(DAGS / "spark_column_lineage_demo.py").test().state == "success"
    assert load_dag(DAGS / "spark_company_report_demo.py").test().state == "success"


def _page_trace(page, server, **params):
    page.goto(server["base"] + "/column-lineage/trace?" + urllib.parse.urlencode(params))
    page.locator("#column-lineage-app[data-state=ready]").wait_for()
    return _highlighted(page.main_frame)


@pytest.mark.spark
def test_the_example_dags_trace_a_report_column_back_through_dag_a(server, browser, demo_dags):  # noqa: F811
    status, body = _trace(server, "admin", dataset=D + "company_report.company_name", direction="upstream")
    assert status == 200, body
    answer = json.loads(body)
    hops = {(h["depth"], h["target"]["label"], h["target"]["column"], h["source"]["label"], h["source"]["column"],
             h["subtype"], h["run"]["dag_id"]) for h in answer["trace"]["hops"] if not h["indirect"]}
    assert hops == {
        (1, D + "company_report", "company_name", D + "dwd_users", "company_name", "IDENTITY",
         "spark_company_report_demo"),
        (2, D + "dwd_users", "company_name", D + "dim_company", "company_name", "IDENTITY",
         "spark_column_lineage_demo"),
        (2, D + "dwd_users", "company_name", D + "ods_users", "name", "IDENTITY", "spark_column_lineage_demo"),
    }
    cli = subprocess.run([venv_bin("airflow-lineage"), "trace", D + "company_report.company_name", "--upstream",
                          "--json"], capture_output=True, text=True, env=os.environ, timeout=300)
    assert cli.returncode == 0, cli.stderr
    assert answer["trace"] == json.loads(cli.stdout)

    context, page = _context(server, browser, "admin")
    try:
        got = _page_trace(page, server, dataset=D + "company_report", column="company_name")
        assert set(got["upstream"]) == {D + "dwd_users.company_name", D + "dim_company.company_name",
                                        D + "ods_users.name"}
        got = _page_trace(page, server, dataset=D + "ods_users", column="birthday", direction="downstream")
        assert set(got["downstream"]) == {D + "dwd_users.birthday", D + "dwd_users.p",
                                          D + "company_report.oldest_birthday", D + "company_report.first_day"}
    finally:
        context.close()


# -- issue 42: hidden tables ---------------------------------------------------------------------------------

def test_a_hidden_table_is_answered_over_http_as_a_table_that_does_not_exist(server):
    """``norole`` reads no DAG, ``onedag`` only trace_report: a table only other DAGs touch gets the unknown
    table's status and body, under any spelling; search offers nothing of it."""
    wh = "/warehouse/trace.db/"
    cases = [("norole", {"dataset": T + "dwd_users"}), ("norole", {"dataset": "TRACE.DWD_USERS.AGE"}),
             ("norole", {"dataset": wh + "dwd_users", "column": "id"}),
             ("onedag", {"dataset": "`trace`.`ods_users`.`birthday`", "direction": "downstream"}),
             ("onedag", {"dataset": "file/" + wh + "ods_users"}), ("onedag", {"dataset": T + "company_rollup.name",
                                                                             "depth": "1"})]
    for user, params in cases:
        unknown = {k: v.replace("_users", "_nosuch").replace("_USERS", "_NOSUCH").replace("_rollup", "_nosuch")
                   for k, v in params.items()}
        assert _trace(server, "admin", **params)[0] == 200, params
        got, none = _trace(server, user, **params), _trace(server, user, **unknown)
        assert got[0] == none[0] == 404, (user, params, got)
        assert json.loads(got[1]) == {"detail": json.loads(none[1])["detail"].replace(
            unknown["dataset"], params["dataset"])}, (user, params)
    for user, q in (("norole", "trace.dwd"), ("norole", "birthday"), ("onedag", "trace.ods_users"),
                    ("onedag", "company_rollup")):
        assert _trace(server, user, path="/column-lineage/api/trace/search", q=q) == (200, b'{"results":[]}'), q
    # The table trace_dwd writes and trace_report reads: the reader's hops, the writer counted, never named.
    status, body = _trace(server, "onedag", dataset=T + "dwd_users.company_name")
    assert status == 200, body
    trace = json.loads(body)["trace"]
    assert {h["run"]["dag_id"] for h in trace["hops"]} == {"trace_report"}
    assert trace["hidden"][0] == {"direction": "upstream", "depth": 1, "hops": 3}
    for leak in (b"trace_dwd", b"trace_rollup", b"ods_users", b"dim_company", b"company_rollup"):
        assert leak not in body, leak
