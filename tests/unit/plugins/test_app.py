"""The plugin's FastAPI app with a stand-in auth manager: 401 and 403 come from Airflow's own dependency.

SimpleAuthManager lets every role read XComs; the real server test proves 403 with a user that has
no role. Here an auth manager that denies shows the app asks Airflow about exactly this DAG's XComs.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from airflow_lineage_provider.lineage.model import LineageReport, StatementLineage
from airflow_lineage_provider.plugins import app as app_module
from airflow_lineage_provider.plugins.graph import TaskLineage

RUN = "manual__2026-01-01T00:00:00+00:00"


class FakeUser:
    def get_id(self) -> str:
        return "u"

    def get_name(self) -> str:
        return "u"


class FakeAuthManager:
    def __init__(self, allow: bool) -> None:
        self.allow = allow
        self.calls: list[dict] = []

    async def get_user_from_token(self, token: str) -> FakeUser:
        from jwt import InvalidTokenError

        if token != "good":
            raise InvalidTokenError("bad token")
        return FakeUser()

    def is_authorized_dag(self, **kwargs) -> bool:
        self.calls.append(kwargs)
        return self.allow


@pytest.fixture
def client(monkeypatch):
    from airflow.api_fastapi.core_api import security
    from airflow.models.dag import DagModel

    manager = FakeAuthManager(allow=True)
    monkeypatch.setattr(security, "get_auth_manager", lambda: manager)
    monkeypatch.setattr(DagModel, "get_team_name", staticmethod(lambda dag_id: None))
    reads: list[tuple] = []

    def read_lineage(dag_id, run_id, task_id=None, map_index=None):
        reads.append((dag_id, run_id, task_id, map_index))
        report = LineageReport((StatementLineage(0, "SELECT 1", "plan", 1.0, None, columns=(("one", ()),)),))
        return [TaskLineage(task_id or "t", -1, report)], []

    monkeypatch.setattr(app_module, "read_lineage", read_lineage)
    monkeypatch.setattr(app_module, "check_exists", lambda dag_id, run_id, task_id=None: None)  # no metadata DB
    monkeypatch.setattr(app_module, "read_changes", lambda dag_id, run_id, tasks: {})
    c_version = {"v": 0}
    monkeypatch.setattr(app_module, "lineage_version", lambda *key: (key, c_version["v"]))
    monkeypatch.setattr(app_module, "_cache", app_module._GraphCache())
    c = TestClient(app_module.create_app())
    c.manager, c.reads, c.version = manager, reads, c_version
    return c


def test_api_without_credentials_is_401(client):
    r = client.get(f"/api/dags/d/runs/{RUN}/tasks/t")
    assert r.status_code == 401
    assert client.reads == []


def test_api_with_an_invalid_token_is_refused(client):
    r = client.get(f"/api/dags/d/runs/{RUN}", headers={"Authorization": "Bearer forged"})
    assert r.status_code == 403  # Airflow's answer to a token it cannot verify
    assert client.reads == []


def test_api_for_a_user_the_auth_manager_denies_is_403(client):
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity

    client.manager.allow = False
    for url in (f"/api/dags/secret_dag/runs/{RUN}", f"/api/dags/secret_dag/runs/{RUN}/tasks/t",
                f"/dags/secret_dag/runs/{RUN}", f"/dags/secret_dag/runs/{RUN}/tasks/t"):
        r = client.get(url, headers={"Authorization": "Bearer good"})
        assert r.status_code == 403, url
    assert client.reads == []
    assert {(c["method"], c["access_entity"], c["details"].id) for c in client.manager.calls} == {
        ("GET", DagAccessEntity.XCOM, "secret_dag")}


def test_api_with_the_ui_cookie_returns_the_graph_and_no_document_twice(client):
    client.cookies.set("_token", "good")
    r = client.get(f"/api/dags/d/runs/{RUN}/tasks/t", params={"map_index": "{MAP_INDEX}"})
    assert r.status_code == 200
    body = r.json()
    assert client.reads == [("d", RUN, "t", None)]  # the literal placeholder: every map index
    assert r.headers["content-type"] == "application/json"
    assert set(body) == {"dag_id", "run_id", "task_id", "map_index", "graph", "problems"}
    assert body["graph"]["tables"][0]["columns"] == ["one"]
    # What the side panel shows of each statement comes with the graph.
    [statement] = body["graph"]["tasks"][0]["statements"]
    assert {k: statement[k] for k in ("sql", "method", "confidence", "warnings")} == {
        "sql": "SELECT 1", "method": "plan", "confidence": 1.0, "warnings": []}
    client.get(f"/api/dags/d/runs/{RUN}/tasks/t", params={"map_index": "3"})
    assert client.reads[-1] == ("d", RUN, "t", 3)


def test_views_need_authentication_and_say_so_as_a_page(client):
    r = client.get(f"/dags/d/runs/{RUN}/tasks/t")
    assert r.status_code == 401
    assert r.headers["content-type"].startswith("text/html")
    assert "Sign in to Airflow" in r.text


def test_static_bundle_is_served_without_credentials(client):
    assert client.get("/static/column-lineage.js").status_code == 200
    assert client.get("/static/column-lineage.css").status_code == 200


def test_page_escapes_every_id_and_quotes_them_in_urls(client):
    dag = 'd"><img src=x onerror=alert(1)>'
    r = client.get(f"/dags/{dag}/runs/{RUN}/tasks/t", params={"map_index": "{MAP_INDEX}"},
                   headers={"Authorization": "Bearer good"})
    assert r.status_code == 200
    assert "<img" not in r.text
    assert 'data-dag-id="d&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"' in r.text
    assert "<title>Column lineage: d&quot;&gt;&lt;img src=x onerror=alert(1)&gt; / t</title>" in r.text
    assert f'data-api="/api/dags/d%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E/runs/{app_module.quote(RUN, safe="")}/tasks/t"' in r.text
    assert 'data-map-index=""' in r.text
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'self'" in csp
    r = client.get(f"/dags/d/runs/{RUN}/tasks/t", params={"map_index": "2"}, headers={"Authorization": "Bearer good"})
    assert "/tasks/t?map_index=2" in r.text and 'data-map-index="2"' in r.text


@pytest.mark.parametrize("raw, expected", [(None, None), ("{MAP_INDEX}", None), ("", None), ("-1", -1), ("4", 4), (" 2 ", 2)])
def test_map_index_of_a_tab_url(raw, expected):
    assert app_module.parse_map_index(raw) == expected


def test_plugin_is_registered_with_both_tabs_the_menu_page_and_the_app():
    from importlib.metadata import entry_points

    [ep] = [e for e in entry_points(group="airflow.plugins") if e.name == "column_lineage"]
    plugin = ep.load()
    assert plugin.fastapi_apps[0]["url_prefix"] == "/column-lineage"
    views = {v["destination"]: v for v in plugin.external_views}
    assert set(views) == {"task_instance", "dag_run", "nav"}
    assert "{MAP_INDEX}" in views["task_instance"]["href"] and "{TASK_ID}" in views["task_instance"]["href"]
    assert views["nav"]["href"] == "/column-lineage/trace"  # the trace across DAGs, in Airflow's menu
    assert len({v["url_route"] for v in plugin.external_views}) == 3  # the UI finds a tab by its route


def test_a_map_index_no_task_can_have_is_a_400_that_says_so(client):
    client.cookies.set("_token", "good")
    for raw in ("99999999999999999999999", "-2", "2147483648"):
        r = client.get(f"/api/dags/d/runs/{RUN}/tasks/t", params={"map_index": raw})
        assert r.status_code == 400, raw
        assert r.json()["detail"].startswith(f"map_index {raw} is out of range: a map index is -1 (not mapped)")
    assert client.reads == []
    assert client.get(f"/api/dags/d/runs/{RUN}/tasks/t", params={"map_index": "2147483647"}).status_code == 200


def test_every_answer_says_nosniff_and_lineage_is_never_cached(client):
    client.cookies.set("_token", "good")
    for url in (f"/api/dags/d/runs/{RUN}", f"/dags/d/runs/{RUN}", f"/dags/d/runs/{RUN}/tasks/t"):
        r = client.get(url)
        assert r.status_code == 200, url
        assert r.headers["X-Content-Type-Options"] == "nosniff" and r.headers["Cache-Control"] == "no-store", url
    client.cookies.clear()
    refused = client.get(f"/dags/d/runs/{RUN}")
    assert refused.status_code == 401 and refused.headers["X-Content-Type-Options"] == "nosniff"
    assert client.get("/static/column-lineage.js").headers["X-Content-Type-Options"] == "nosniff"


def test_an_invalid_sign_in_is_called_invalid_not_a_missing_permission(client):
    client.cookies.set("_token", "forged")
    r = client.get(f"/dags/d/runs/{RUN}/tasks/t")
    assert r.status_code == 403
    assert "Your sign-in is not valid (it may have expired): sign in to Airflow again." in r.text
    assert "You may not read" not in r.text


def test_a_runs_graph_is_built_once_while_its_lineage_is_the_same(client):
    client.cookies.set("_token", "good")
    first = client.get(f"/api/dags/d/runs/{RUN}")
    assert client.get(f"/api/dags/d/runs/{RUN}").content == first.content
    assert client.reads == [("d", RUN, None, None)]
    client.version["v"] += 1  # a task re-ran: a new XCom, a new version
    assert client.get(f"/api/dags/d/runs/{RUN}").status_code == 200
    assert len(client.reads) == 2
    client.manager.allow = False  # a cached graph is still behind the authorization check
    assert client.get(f"/api/dags/d/runs/{RUN}").status_code == 403


def test_a_page_for_a_dag_run_or_task_that_does_not_exist_is_a_404_page_as_its_api(client, monkeypatch):
    """The page checks what its API checks (``check_exists``): a mistyped DAG is a 404 that names it, as
    a short page the tab's iframe shows, never the page shell of a run with no lineage."""
    from fastapi import HTTPException

    def check_exists(dag_id, run_id, task_id=None):
        if dag_id == "no_such_dag":
            raise HTTPException(404, f"no DAG {dag_id!r}")
        if task_id == "no_such_task":
            raise HTTPException(404, f"run {run_id!r} of DAG {dag_id!r} has no task {task_id!r}")

    monkeypatch.setattr(app_module, "check_exists", check_exists)
    client.cookies.set("_token", "good")
    for url, detail in ((f"/dags/no_such_dag/runs/{RUN}", "no DAG &#x27;no_such_dag&#x27;"),
                        (f"/dags/no_such_dag/runs/{RUN}/tasks/t", "no DAG &#x27;no_such_dag&#x27;"),
                        (f"/dags/d/runs/{RUN}/tasks/no_such_task", "has no task &#x27;no_such_task&#x27;")):
        page, api = client.get(url), client.get("/api" + url)
        assert (page.status_code, api.status_code) == (404, 404), url
        assert page.headers["content-type"].startswith("text/html") and detail in page.text, page.text
        assert "column-lineage-app" not in page.text
        assert page.headers["X-Content-Type-Options"] == "nosniff"
    assert client.get(f"/dags/d/runs/{RUN}/tasks/t").status_code == 200


# -- issue 42: hidden tables ---------------------------------------------------------------------------------
# The trace API answers a table no DAG the user may read touches as one that does not exist: same status,
# same body, no location, no column. Users: ``admin`` reads every DAG, ``one`` DAG B only, ``norole`` none.

POLICY = {"admin": lambda dag: True, "one": lambda dag: dag == "dag_b", "norole": lambda dag: False}


class PolicyUser(FakeUser):
    def __init__(self, name: str) -> None:
        self.name = name

    def get_id(self) -> str:
        return self.name

    def get_name(self) -> str:
        return self.name


class PolicyAuthManager(FakeAuthManager):
    async def get_user_from_token(self, token: str) -> PolicyUser:
        from jwt import InvalidTokenError

        if token not in POLICY:
            raise InvalidTokenError("bad token")
        return PolicyUser(token)

    def is_authorized_dag(self, **kwargs) -> bool:
        self.calls.append(kwargs)
        return POLICY[kwargs["user"].get_name()](kwargs["details"].id)


class StandingFollower:
    """The follower's face the routes use, over an index built in the test."""

    def __init__(self, index) -> None:
        self.index = index

    def refresh(self) -> int:
        return 0

    def index_at(self, as_of):
        return self.index


@pytest.fixture
def trace_client(monkeypatch):
    import airflow.api_fastapi.app as airflow_app
    from airflow.api_fastapi.core_api import security

    from airflow_lineage_provider import runs
    from tests.unit.lineage.test_trace import hidden_and_partial

    manager = PolicyAuthManager(allow=True)
    monkeypatch.setattr(security, "get_auth_manager", lambda: manager)
    monkeypatch.setattr(airflow_app, "get_auth_manager", lambda: manager)
    monkeypatch.setattr(runs, "trace_follower", lambda: StandingFollower(hidden_and_partial()))
    c = TestClient(app_module.create_app())
    c.manager = manager
    return c


def _as(client, user: str, path: str = "/api/trace", **params):
    r = client.get(path, params=params, headers={"Authorization": f"Bearer {user}"})
    return r.status_code, r.json()


def _unknown(value):
    from tests.unit.lineage.test_trace import unknown_spelling

    return unknown_spelling(value) if isinstance(value, str) else value


def _back(body):
    """An unknown table's answer with the asked name put back: what the hidden table's must equal."""
    return json.loads(json.dumps(body).replace("nosuch", "secret").replace("NOSUCH", "SECRET"))


@pytest.mark.parametrize("params", [
    {"dataset": "spark_catalog.default.secret"}, {"dataset": "default.secret", "direction": "upstream"},
    {"dataset": "secret", "direction": "downstream", "depth": "1"}, {"dataset": "Spark_Catalog.Default.SECRET"},
    {"dataset": "`default`.`secret`"}, {"dataset": "default.secret.ssn"}, {"dataset": "DEFAULT.SECRET.SSN"},
    {"dataset": "`spark_catalog`.`default`.`secret`.`SSN`", "as_of": "2026-12-01"},
    {"dataset": "/wh/secret"}, {"dataset": "file//wh/secret"}, {"dataset": "/wh/secret", "column": "ssn"},
    {"dataset": "/WH/SECRET", "column": "SALARY", "limit": "1"}, {"dataset": "default.vault.ssn"},
])
def test_the_trace_api_answers_a_hidden_table_as_an_unknown_one(trace_client, params):
    status, body = _as(trace_client, "admin", **params)
    assert status == 200 and body["trace"]["found"], body  # the spelling names it, for whom may see it
    for user in ("norole", "one"):
        hidden = _as(trace_client, user, **params)
        unknown = _as(trace_client, user, **{k: _unknown(v) for k, v in params.items()})
        assert hidden[0] == unknown[0] == 404
        assert hidden[1] == _back(unknown[1]) == {"detail": f"no task with column lineage writes or reads "
                                                            f"{params['dataset']}" + (
                                                                f" (column {params['column']})" if "column" in params
                                                                else "")}
        text = json.dumps(hidden[1]).lower()
        assert "/wh/" not in text or "/wh/" in params["dataset"].lower()
        assert "salary" not in text or "SALARY" in params.get("column", "")
        assert "dag_a" not in text and "build_secret" not in text


def test_the_search_api_offers_nothing_of_a_hidden_table(trace_client):
    for q in ("secret", "SECRET", "default.secret", "ssn", "salary", "vault", "build_secret"):
        for user in ("norole", "one"):
            assert _as(trace_client, user, "/api/trace/search", q=q) == (200, {"results": []}), (user, q)
    status, body = _as(trace_client, "admin", "/api/trace/search", q="secret")
    assert status == 200 and {r["column"] for r in body["results"]} == {"", "SSN", "salary"}
    # The visible reader's names of a table a hidden DAG writes: its catalog name, never the location.
    status, body = _as(trace_client, "one", "/api/trace/search", q="dwd_users")
    assert {(r["namespace"], r["name"], r["column"]) for r in body["results"]} == {
        ("spark_catalog", "default.dwd_users", ""), ("spark_catalog", "default.dwd_users", "company_name"),
        ("spark_catalog", "default.dwd_users", "id")}


def test_a_table_written_by_a_hidden_dag_and_read_by_a_visible_one_shows_the_reader_and_counts_the_writer(
        trace_client):
    status, body = _as(trace_client, "one", dataset="default.dwd_users.company_name")
    assert status == 200
    trace = body["trace"]
    assert trace["start"] == {"namespace": "spark_catalog", "name": "default.dwd_users",
                              "label": "spark_catalog.default.dwd_users", "column": "company_name"}
    assert [(h["run"]["dag_id"], h["target"]["column"], h["source"]["column"]) for h in trace["hops"]] == [
        ("dag_b", "company_name", "company_name")]
    assert trace["hidden"] == [{"direction": "upstream", "depth": 1, "hops": 3}] and trace["sources"] == []
    text = json.dumps(body)
    for leak in ("dag_a", "build_dwd", "/wh/dwd_users", "ods_users", "dim_company", "birthday", '"age"'):
        assert leak not in text, leak
    # The writer's view of the same table, for whom may read DAG A: its hops are there.
    status, body = _as(trace_client, "admin", dataset="default.dwd_users.company_name")
    assert status == 200 and "dag_a" in json.dumps(body) and body["trace"]["hidden"] == []
    # A user with no role gets for the same table what they get for a table that does not exist.
    assert _as(trace_client, "norole", dataset="default.dwd_users.company_name") == (
        404, {"detail": "no task with column lineage writes or reads default.dwd_users.company_name"})


def test_a_column_only_the_hidden_writer_names_is_an_unknown_column_of_the_visible_table(trace_client):
    age = _as(trace_client, "one", dataset="default.dwd_users.age")
    unknown = _as(trace_client, "one", dataset="default.dwd_users.nosuch")
    assert age[0] == unknown[0] == 200
    assert age[1] == json.loads(json.dumps(unknown[1]).replace("nosuch", "age"))
    assert age[1]["trace"]["found"] is False and age[1]["trace"]["hidden"] == []
    # The location only the hidden writer's plan gives is not an answer to the reader of DAG B.
    assert _as(trace_client, "one", dataset="/wh/dwd_users") == (
        404, {"detail": "no task with column lineage writes or reads /wh/dwd_users"})
    assert _as(trace_client, "admin", dataset="/wh/dwd_users")[0] == 200


def test_a_user_without_the_dag_is_asked_about_only_the_dags_that_touch_the_name(trace_client):
    """Airflow's auth manager is asked once per DAG that touches the name (no walk for a hidden table),
    and never for an unknown one: the work differs by those answers only."""
    _as(trace_client, "one", dataset="default.secret.ssn")
    assert {c["details"].id for c in trace_client.manager.calls} == {"dag_a"}
    trace_client.manager.calls.clear()
    _as(trace_client, "one", dataset="default.nosuch.ssn")
    assert trace_client.manager.calls == []
