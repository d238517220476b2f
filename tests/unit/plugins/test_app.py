"""The plugin's FastAPI app with a stand-in auth manager: 401 and 403 come from Airflow's own dependency.

SimpleAuthManager lets every role read XComs; the real server test proves 403 with a user that has
no role. Here an auth manager that denies shows the app asks Airflow about exactly this DAG's XComs.
"""

from __future__ import annotations

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
