"""The column-lineage UI for real: `airflow api-server`, the real SimpleAuthManager, headless Chromium.

The example DAG's run (real Spark) and a Spark-free DAG with hostile names are done first with
dag.test() in the session's Airflow home; the api-server subprocess uses that home and database.
The browser signs in through Airflow's login page and opens the tabs the way a person does, through
the Airflow UI, which puts the plugin's page in an iframe.

Screenshots go to the test's temporary directory; with UPDATE_SCREENSHOTS=1 they also replace
those in docs/images/ that the README and docs/ui.md show.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import DAGS, ROOT, venv_bin
from tests.integration.api_server import api_server
from tests.integration.test_example_dag import SEED_JOIN, SEED_SINGLE, load_dag

pytestmark = [pytest.mark.slow, pytest.mark.airflow, pytest.mark.spark]

CHROMIUM = "/usr/bin/chromium"
DEMO = "spark_column_lineage_demo"
T = "spark_catalog.default."
SHOTS = ROOT / "docs" / "images"


def _latest_successful_run(dag_id: str) -> str | None:
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        run = session.scalars(select(DagRun).where(DagRun.dag_id == dag_id, DagRun.state == "success")
                              .order_by(DagRun.id.desc())).first()
        return run.run_id if run else None


@pytest.fixture(scope="module")
def demo_run_id(airflow_db) -> str:
    """The example DAG run done: reuse the one test_example_dag made in this session, else run it."""
    run_id = _latest_successful_run(DEMO)
    if run_id is None:
        run = load_dag(DAGS / "spark_column_lineage_demo.py").test()
        assert run.state == "success"
        run_id = run.run_id
    return run_id


@pytest.fixture(scope="module")
def ui_run_id(airflow_db) -> str:
    run = load_dag(DAGS / "lineage_test_ui.py").test()
    assert run.state == "success"
    return run.run_id


@pytest.fixture(scope="module")
def scale_run_id(airflow_db) -> str:
    """4 tasks x 100 columns: over the page's collapse threshold, a few seconds to run."""
    run = load_dag(DAGS / "lineage_test_ui_scale.py").test()
    assert run.state == "success"
    return run.run_id


@pytest.fixture(scope="module")
def changes_run_ids(airflow_db) -> tuple[str, str]:
    """Two runs of a DAG whose second run changes one statement."""
    dag = load_dag(DAGS / "lineage_test_ui_changes.py")
    first = dag.test()
    second = dag.test(run_conf={"version": 2})
    assert first.state == second.state == "success"
    return first.run_id, second.run_id


def _get(url: str, headers: dict | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture(scope="module")
def server(airflow_db, demo_run_id, ui_run_id, scale_run_id, changes_run_ids, tmp_path_factory):
    """`airflow api-server` on 127.0.0.1 with two users: admin, and one with no role (no permission)."""
    home = Path(os.environ["AIRFLOW_HOME"])
    log = tmp_path_factory.mktemp("api-server") / "api-server.log"
    with api_server("admin:admin,norole:", home / "ui_test_passwords.json", log) as running:
        yield {**running, "demo": demo_run_id, "ui": ui_run_id, "scale": scale_run_id, "changes": changes_run_ids}


def _token(server, user: str) -> str:
    body = json.dumps({"username": user, "password": server["passwords"][user]}).encode()
    request = urllib.request.Request(server["base"] + "/auth/token", data=body,
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=60) as r:
        return json.loads(r.read())["access_token"]


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _api(server, run_id: str, task_id: str | None = None, dag_id: str = DEMO, **params) -> str:
    url = f"{server['base']}/column-lineage/api/dags/{dag_id}/runs/{_q(run_id)}"
    if task_id:
        url += f"/tasks/{task_id}"
    return url + (("?" + urllib.parse.urlencode(params)) if params else "")


# ---------------------------------------------------------------- the API, over HTTP


def test_plugin_api_without_credentials_is_401(server):
    for url in (_api(server, server["demo"]), _api(server, server["demo"], "build_dwd_users"),
                f"{server['base']}/column-lineage/dags/{DEMO}/runs/{_q(server['demo'])}"):
        status, body = _get(url)
        assert status == 401, url
        assert b"spark_catalog" not in body


def test_signed_in_user_without_a_role_is_403(server):
    token = _token(server, "norole")  # SimpleAuthManager: a user with no role has no permission
    status, body = _get(_api(server, server["demo"]), {"Authorization": f"Bearer {token}"})
    assert status == 403
    assert b"spark_catalog" not in body


def test_admin_reads_the_run_lineage_from_xcom(server):
    token = _token(server, "admin")
    status, body = _get(_api(server, server["demo"]), {"Authorization": f"Bearer {token}"})
    assert status == 200
    data = json.loads(body)
    assert {t["task_id"] for t in data["graph"]["tasks"]} == {"prepare_tables", "build_dwd_users"}
    assert "documents" not in data  # the graph carries what the page shows: no document sent twice
    labels = [t["label"] for t in data["graph"]["tables"]]
    assert labels.count(T + "ods_users") == 1  # written by prepare_tables, read by build_dwd_users: one node


def test_an_unknown_dag_run_or_task_is_a_404_that_names_it(server):
    headers = {"Authorization": f"Bearer {_token(server, 'admin')}"}
    for url, detail in (
        (_api(server, server["demo"], dag_id="no_such_dag"), "no DAG 'no_such_dag'"),
        (_api(server, "manual__1999-01-01T00:00:00+00:00"),
         f"DAG '{DEMO}' has no run 'manual__1999-01-01T00:00:00+00:00'"),
        (_api(server, server["demo"], "no_such_task"), f"run '{server['demo']}' of DAG '{DEMO}' has no task 'no_such_task'"),
    ):
        status, body = _get(url, headers)
        assert (status, json.loads(body)["detail"]) == (404, detail), url
    status, _ = _get(_api(server, server["ui"], "no_lineage", dag_id="lineage_test_ui"), headers)
    assert status == 200  # a task that left no lineage is not missing


def test_map_index_selects_one_mapped_task_instance(server):
    headers = {"Authorization": f"Bearer {_token(server, 'admin')}"}
    for raw, expected in (("1", {1}), ("{MAP_INDEX}", {0, 1})):
        status, body = _get(_api(server, server["ui"], "mapped", dag_id="lineage_test_ui", map_index=raw), headers)
        assert status == 200
        assert {t["map_index"] for t in json.loads(body)["graph"]["tasks"]} == expected


# ---------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: scripts/test.sh installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (scripts/test.sh installs it with apt-get)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM,
                              args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def signed_in(server, browser):
    """A browser context signed in as admin through Airflow's own login page."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(server["base"] + "/auth/login")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill(server["passwords"]["admin"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/auth/login" not in url)
    assert any(c["name"] == "_token" for c in context.cookies())
    page.close()
    yield context
    context.close()


@pytest.fixture
def page(signed_in):
    page = signed_in.new_page()
    page.set_default_timeout(90_000)
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    yield page
    page.close()


def _open_tab(page, path: str, state: str = "ready"):
    """Open an Airflow UI page and its "Column lineage" tab; the plugin's frame once it has drawn."""
    page.goto(path)
    page.frame_locator("iframe").locator(f"#column-lineage-app[data-state={state}]").wait_for()
    [frame] = [f for f in page.frames if "/column-lineage/" in f.url]
    return frame


def _task_tab(server, task_id: str, run_id: str, dag_id: str = DEMO) -> str:
    return f"{server['base']}/dags/{dag_id}/runs/{_q(run_id)}/tasks/{task_id}/plugin/column-lineage"


def _drawn(frame) -> dict:
    """What Cytoscape drew: tables with their column rows, and edges between named columns."""
    return frame.evaluate("""() => {
      const v = window.columnLineage, cy = v.cy, ext = cy.extent();
      const label = (id) => v.index.tables.get(id).label;
      const inView = (e) => { const b = e.boundingBox(); return b.x1 >= ext.x1 - 1 && b.x2 <= ext.x2 + 1 && b.y1 >= ext.y1 - 1 && b.y2 <= ext.y2 + 1; };
      const col = (n) => label(n.data('table')) + '.' + n.data('label');
      return {
        tables: cy.nodes('.table').map(n => ({label: label(n.id()), shown: n.visible() && inView(n),
          rows: cy.nodes('.column').filter(c => c.data('table') === n.id()).map(c => c.data('label'))})),
        edges: cy.edges('.direct').map(e => ({source: col(e.source()), target: col(e.target()),
          subtype: e.data('subtype'), shown: e.visible() && inView(e)})),
        indirect: cy.edges('.indirect').map(e => ({source: col(e.source()), target: label(e.target().id()), shown: e.visible()})),
        canvas: v.canvas.getBoundingClientRect().width * v.canvas.getBoundingClientRect().height,
      };
    }""")


def _click_column(page, frame, table: str, column: str) -> None:
    """A real mouse click on the column's row, where Cytoscape drew it."""
    pos = frame.evaluate("""([table, column]) => {
      const v = window.columnLineage;
      const [n] = v.cy.nodes('.column').filter(c => c.data('label') === column && v.index.tables.get(c.data('table')).label === table);
      const p = n.renderedPosition(), r = v.canvas.getBoundingClientRect();
      return {x: r.left + p.x, y: r.top + p.y};
    }""", [table, column])
    box = page.locator("iframe").bounding_box()
    page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])


def _highlighted(frame, cls: str) -> set[str]:
    return set(frame.evaluate("""(cls) => { const v = window.columnLineage;
      return v.cy.nodes('.column.' + cls).map(n => v.index.tables.get(n.data('table')).label + '.' + n.data('label')); }""", cls))


def _screenshot(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    page.screenshot(path=str(path))
    assert path.stat().st_size > 20_000  # a drawn page, not a blank one
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, SHOTS / name)
    return path


def _seed_edges() -> set[tuple[str, str, str]]:
    """The seed statements' column edges, as test_example_dag checks them in XCom."""
    out = set()
    for statement in (SEED_SINGLE, SEED_JOIN):
        for column, sources in statement.items():
            out |= {(f"{table}.{field}", T + "dwd_users." + column, subtype) for table, field, subtype in sources}
    return out


def test_task_tab_draws_the_seed_lineage_and_clicking_a_column_shows_its_impact(server, page, tmp_path):
    frame = _open_tab(page, _task_tab(server, "build_dwd_users", server["demo"]))
    # Airflow's UI filled in the ids and left {MAP_INDEX} as is for this unmapped task.
    assert "map_index=%7BMAP_INDEX%7D" in frame.url or "map_index={MAP_INDEX}" in frame.url
    drawn = _drawn(frame)
    assert drawn["canvas"] > 100_000
    tables = {t["label"]: t for t in drawn["tables"]}
    assert set(tables) == {T + "ods_users", T + "dim_company", T + "dwd_users", "query result: build_dwd_users statement 3"}
    assert all(t["shown"] for t in drawn["tables"])
    assert tables[T + "dwd_users"]["rows"] == ["id", "name", "company_name", "birthday", "ts", "p"]
    assert set(tables[T + "ods_users"]["rows"]) == {"id", "name", "birthday", "ts"}
    # Both seed statements write dwd_users: an edge per column pair, drawn with its strongest subtype.
    strongest: dict[tuple[str, str], str] = {}
    for source, target, subtype in _seed_edges():
        if strongest.get((source, target)) != "TRANSFORMATION":
            strongest[(source, target)] = subtype
    strongest[(T + "dwd_users.p", "query result: build_dwd_users statement 3.p")] = "IDENTITY"
    assert {(e["source"], e["target"]): e["subtype"] for e in drawn["edges"]} == strongest
    assert all(e["shown"] for e in drawn["edges"])
    # Indirect inputs are off by default; ticked, they are drawn.
    assert not frame.locator("#cl-indirect").is_checked() and drawn["indirect"] == []
    frame.locator("#cl-indirect").check()
    drawn = _drawn(frame)
    assert {(e["source"], e["target"]) for e in drawn["indirect"]} >= {
        (T + "ods_users.id", T + "dwd_users"), (T + "dim_company.user_id", T + "dwd_users")}

    # Hovering an edge shows its expression.
    mid = frame.evaluate("""() => { const v = window.columnLineage;
      const [e] = v.cy.edges('.direct').filter(e => e.target().data('label') === 'p' && e.source().data('label') === 'birthday');
      const p = e.renderedMidpoint(), r = v.canvas.getBoundingClientRect(); return {x: r.left + p.x, y: r.top + p.y}; }""")
    box = page.locator("iframe").bounding_box()
    page.mouse.move(box["x"] + mid["x"], box["y"] + mid["y"])
    tooltip = frame.locator("#cl-tooltip")
    tooltip.wait_for(state="visible")
    assert "date_format(a.birthday, 'yyyyMMdd')" in tooltip.inner_text()

    # Clicking ods_users.birthday highlights its downstream path.
    _click_column(page, frame, T + "ods_users", "birthday")
    frame.locator("#cl-selected").wait_for()
    assert frame.locator("#cl-selected").inner_text() == "ods_users.birthday"
    downstream = _highlighted(frame, "downstream")
    assert {T + "dwd_users.birthday", T + "dwd_users.p"} <= downstream
    assert not downstream & {T + "dwd_users.name", T + "dwd_users.id", T + "dwd_users.ts", T + "dwd_users.company_name"}
    assert _highlighted(frame, "upstream") == set()
    listed = frame.locator("#cl-downstream li").evaluate_all("els => els.map(e => e.dataset.column)")
    assert {T + "dwd_users.birthday", T + "dwd_users.p"} <= set(listed)
    _screenshot(page, tmp_path, "column-lineage-task.png")

    # The impact list exports as CSV.
    with page.expect_download() as download:
        frame.locator("#cl-export").click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert {(r["direction"], r["table"], r["column"]) for r in rows} >= {
        ("downstream", T + "dwd_users", "birthday"), ("downstream", T + "dwd_users", "p")}
    assert all(r["selected_table"] == T + "ods_users" and r["selected_column"] == "birthday" for r in rows)

    # Indirect edges can be hidden; the walk then follows values only.
    frame.locator("#cl-indirect").uncheck()
    assert not any(e["shown"] for e in _drawn(frame)["indirect"])
    assert "query result: build_dwd_users statement 3.users" not in _highlighted(frame, "downstream")

    # Search finds a column; the table level shows tables only.
    frame.locator("#cl-search").fill("company")
    found = frame.locator("#cl-search-results li").all_inner_texts()
    assert "dwd_users.company_name" in found and "dim_company.company_name" in found
    frame.locator("button[data-level=tables]").click()
    level = frame.evaluate("() => ({tables: window.columnLineage.cy.nodes('.table').length, "
                           "columns: window.columnLineage.cy.nodes('.column').length, "
                           "edges: window.columnLineage.cy.edges('.table-edge').length})")
    assert level == {"tables": 4, "columns": 0, "edges": 3}


def test_dag_run_tab_joins_the_tasks_graphs(server, page, tmp_path):
    frame = _open_tab(page, f"{server['base']}/dags/{DEMO}/runs/{_q(server['demo'])}/plugin/column-lineage-run")
    drawn = _drawn(frame)
    labels = [t["label"] for t in drawn["tables"]]
    assert labels.count(T + "ods_users") == 1 and labels.count(T + "dwd_users") == 1
    ods = frame.evaluate("""() => [...window.columnLineage.index.tables.values()].find(t => t.label.endsWith('.ods_users'))""")
    assert [w["task_id"] for w in ods["writers"]] == ["prepare_tables"]
    assert [r["task_id"] for r in ods["readers"]] == ["build_dwd_users"]
    statements = frame.locator("#cl-statements summary").all_inner_texts()
    assert any(s.startswith("prepare_tables") for s in statements)
    assert any(s.startswith("build_dwd_users") for s in statements)
    # The demo's statements, each checked against the static lineage of its SQL: they agree.
    assert frame.locator("#cl-statements .cl-agreement").all_inner_texts() == ["static agrees"] * len(statements)
    _screenshot(page, tmp_path, "column-lineage-dag-run.png")
    _click_column(page, frame, T + "ods_users", "birthday")
    frame.locator("#cl-selected").wait_for()
    assert {T + "dwd_users.birthday", T + "dwd_users.p"} <= _highlighted(frame, "downstream")
    assert "in build_dwd_users" in frame.locator("#cl-downstream").inner_text()


def test_hostile_names_render_as_text(server, page):
    from tests.dags.lineage_test_ui import XSS_COLUMN, XSS_DIFFERS, XSS_TABLE

    frame = _open_tab(page, _task_tab(server, "hostile", server["ui"], dag_id="lineage_test_ui"))
    drawn = _drawn(frame)
    assert {e["target"] for e in drawn["edges"]} == {f"{XSS_TABLE}.{XSS_COLUMN}"}
    # The column list in the side panel: the name is its text, and no element came of it.
    button = frame.locator("#cl-tables button.cl-colbtn", has_text="onerror")
    assert button.inner_text() == XSS_COLUMN
    summary = frame.locator("#cl-statements summary").first
    assert summary.locator(".cl-agreement").inner_text() == "static differs"
    summary.click()
    assert "upper('<i>x</i>')" in frame.locator("#cl-statements pre").first.inner_text()
    assert frame.locator("#cl-statements .cl-only-static").inner_text() == f"only static: {XSS_DIFFERS}"
    button.click()
    assert frame.locator("#cl-selected").inner_text() == f"<script>alert(2)</script>.{XSS_COLUMN}"
    frame.locator("#cl-search").fill("<img")
    assert XSS_COLUMN in frame.locator("#cl-search-results").inner_text()
    assert frame.locator("img, script:not([src]), b, i").count() == 0
    assert frame.evaluate("() => document.querySelectorAll('[onerror]').length") == 0
    page.wait_for_timeout(500)  # an onerror handler would have run by now
    assert page.dialogs == []


def test_task_without_lineage_shows_an_empty_state(server, page):
    frame = _open_tab(page, _task_tab(server, "no_lineage", server["ui"], dag_id="lineage_test_ui"), state="empty")
    message = frame.locator("#cl-message").inner_text()
    assert "Task no_lineage has no column lineage in this run." in message
    assert frame.evaluate("() => window.columnLineage === undefined")


# ---------------------------------------------------------------- at scale, focus, changes

SCALE = "lineage_test_ui_scale"
CHANGES = "lineage_test_ui_changes"


def _run_tab(server, dag_id: str, run_id: str) -> str:
    return f"{server['base']}/dags/{dag_id}/runs/{_q(run_id)}/plugin/column-lineage-run"


def _nodes(frame) -> dict:
    """The tables drawn (collapsed or open) and the columns drawn, by short name."""
    return frame.evaluate("""() => { const v = window.columnLineage, short = (id) => v.index.tables.get(id).label.split('.').pop();
      return {collapsed: v.cy.nodes('.table.collapsed').map(n => short(n.id())).sort(),
              open: v.cy.nodes('.table').not('.collapsed').map(n => short(n.id())).sort(),
              columns: v.cy.nodes('.column').map(n => short(n.data('table')) + '.' + n.data('label')).sort()}; }""")


def _click_table(page, frame, short: str) -> None:
    pos = frame.evaluate("""(short) => { const v = window.columnLineage;
      const t = [...v.index.tables.values()].find(t => t.label.endsWith('.' + short));
      const n = v.cy.getElementById(t.id); v.cy.center(n);
      const p = n.renderedPosition(), r = v.canvas.getBoundingClientRect(); return {x: r.left + p.x, y: r.top + p.y}; }""", short)
    box = page.locator("iframe").bounding_box()
    page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])


def _search(frame, text: str) -> None:
    frame.locator("#cl-search").fill(text)
    frame.locator("#cl-search").press("Enter")
    frame.locator("#cl-selected").wait_for()


def _listed(frame, direction: str) -> list[str]:
    return frame.locator(f"#cl-{direction} li").evaluate_all("els => els.map(e => e.dataset.column)")


def test_a_wide_run_starts_collapsed_and_a_table_opens_on_demand(server, page):
    frame = _open_tab(page, _run_tab(server, SCALE, server["scale"]))
    tables = ["dim_keys", "scale_t0", "scale_t1", "scale_t2", "scale_t3", "scale_t4"]
    assert _nodes(frame) == {"collapsed": tables, "open": [], "columns": []}  # 501 columns: one node a table
    label = frame.evaluate("() => window.columnLineage.cy.nodes('.collapsed').map(n => n.data('label'))"
                           ".find(l => l.startsWith('scale_t2'))")
    assert label == "scale_t2\n100 columns\nkey, c001, c002, …"
    # Edges between collapsed tables say how many column edges they carry.
    counts = frame.evaluate("() => window.columnLineage.cy.edges('.merged').map(e => e.data('label'))")
    assert counts.count("100 columns") == 4
    _click_table(page, frame, "scale_t2")
    frame.locator("#cl-collapse").wait_for()
    drawn = _nodes(frame)
    assert drawn["open"] == ["scale_t2"] and len(drawn["collapsed"]) == 5
    assert len(drawn["columns"]) == 100 and all(c.startswith("scale_t2.") for c in drawn["columns"])
    frame.locator("#cl-collapse").click()
    assert _nodes(frame)["columns"] == []


def test_search_focuses_one_columns_path_with_depth_and_its_hops_named(server, page):
    frame = _open_tab(page, _run_tab(server, SCALE, server["scale"]))
    _search(frame, "scale_t2.c003")
    assert frame.locator("#cl-selected").inner_text() == "scale_t2.c003"
    # Only its path: one column in each table of the chain, every other table and column hidden, not faded.
    drawn = _nodes(frame)
    assert drawn["columns"] == [f"scale_t{i}.c003" for i in range(5)]
    assert drawn["collapsed"] == [] and "dim_keys" not in drawn["open"]
    assert frame.evaluate("() => window.columnLineage.open.has("
                          "[...window.columnLineage.index.tables.values()].find(t => t.label.endsWith('.scale_t2')).id)")
    frame.locator("#cl-depth-up").select_option("1")
    frame.locator("#cl-depth-down").select_option("1")
    assert _nodes(frame)["columns"] == ["scale_t1.c003", "scale_t2.c003", "scale_t3.c003"]
    assert _listed(frame, "upstream") == ["spark_catalog.default.scale_t1.c003"]
    assert _listed(frame, "downstream") == ["spark_catalog.default.scale_t3.c003"]
    # Each hop names its expression, subtype and task, in the list and on the edge.
    assert "transformation · in build_t3" in frame.locator("#cl-downstream").inner_text()
    assert "coalesce(s.c003, d.fallback)" in frame.locator("#cl-downstream").inner_text()
    edge = frame.evaluate("""() => { const v = window.columnLineage;
      return v.cy.edges('.direct').filter(e => e.target().data('label') === 'c003'
        && v.index.tables.get(e.target().data('table')).label.endsWith('.scale_t3'))[0].id(); }""")
    frame.evaluate("(id) => window.columnLineage.showEdge(id)", edge)
    assert frame.locator("#cl-edge").inner_text() == "scale_t2.c003 → scale_t3.c003 (transformation)"
    assert frame.locator("#cl-panel li").inner_text() == "transformation: coalesce(s.c003, d.fallback) — build_t3, statement 1"
    frame.locator("#cl-clear").click()
    assert _nodes(frame)["open"] == ["scale_t2"]  # the searched column's table stays open


def test_a_join_key_lists_its_values_and_counts_what_the_join_reaches_apart(server, page):
    frame = _open_tab(page, _run_tab(server, SCALE, server["scale"]))
    assert not frame.locator("#cl-indirect").is_checked()  # off by default
    _search(frame, "scale_t2.key")
    assert _listed(frame, "downstream") == ["spark_catalog.default.scale_t3.key", "spark_catalog.default.scale_t4.key"]
    # Through the join: every column of scale_t3 and scale_t4 (200), less the two keys listed already.
    through = frame.locator("#cl-through-indirect-downstream")
    assert through.get_attribute("data-count") == "198"
    assert through.inner_text().startswith("and 198 through a join, filter or grouping key")
    frame.locator("#cl-indirect").check()
    assert frame.locator("#cl-through-indirect-downstream").count() == 0
    downstream = _listed(frame, "downstream")
    assert len(downstream) == 200
    upstream = _listed(frame, "upstream")
    assert "spark_catalog.default.dim_keys.key" in upstream
    # The CSV holds the rows the panel shows.
    with page.expect_download() as download:
        frame.locator("#cl-export").click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert [f"{r['table']}.{r['column']}" for r in rows if r["direction"] == "downstream"] == downstream
    assert [f"{r['table']}.{r['column']}" for r in rows if r["direction"] == "upstream"] == upstream
    [row] = [r for r in rows if r["column"] == "c005" and r["table"].endswith("scale_t3")]
    assert (row["distance"], row["via_subtypes"], row["tasks"], row["via_columns"]) == ("1", "JOIN", "build_t3",
                                                                                         "scale_t2.key")


def test_the_changes_view_colours_what_the_second_run_changed(server, page):
    first, second = server["changes"]
    frame = _open_tab(page, _task_tab(server, "build_orders", first, dag_id=CHANGES))
    assert frame.locator("#cl-changes").is_disabled()  # the first run has nothing to compare with
    frame = _open_tab(page, _task_tab(server, "build_orders", second, dag_id=CHANGES))
    frame.locator("#cl-changes").check()
    edges = frame.evaluate("""() => window.columnLineage.cy.edges('.direct').map(e => [
      e.source().data('label') + '->' + e.target().data('label'),
      ['change-added', 'change-changed'].find(c => e.hasClass(c)) || null, e.style('line-color')])""")
    marks = {name: change for name, change, _ in edges}
    assert marks == {"id->id": None, "amount->amount": "change-changed", "amount->total": "change-changed",
                     "tax->total": "change-added"}
    colours = {change: colour for _, change, colour in edges}
    assert colours["change-added"] == "rgb(47,133,90)" and colours["change-changed"] == "rgb(214,158,46)"
    lost = frame.evaluate("() => window.columnLineage.cy.nodes('.column.lost').map(n => n.data('label'))")
    assert lost == ["discount"]
    lines = frame.locator("#cl-changes-panel li").evaluate_all("els => els.map(e => e.textContent)")
    assert lines[0] == "! spark_catalog.default.orders_clean.discount lost all its sources"
    assert f"compared with {first}" in frame.locator("#cl-changes-panel").inner_text()
    # One diff: the CLI prints the same lines for the task's two runs.
    cli = subprocess.run([venv_bin("airflow-lineage"), "diff", "--dag-id", CHANGES, "--task-id", "build_orders"],
                         capture_output=True, text=True, timeout=120, env=os.environ)
    assert cli.returncode == 1, cli.stderr
    assert cli.stdout.splitlines() == [f"column lineage: {first} -> {second}", *lines]
    # The edge panel says what it was.
    frame.evaluate("""() => { const v = window.columnLineage;
      v.showEdge(v.cy.edges('.change-changed').filter(e => e.target().data('label') === 'amount')[0].id()); }""")
    assert "was transformation: amount * 100" in frame.locator("#cl-panel li").inner_text()
    # The unchanged task of the same run says so.
    frame = _open_tab(page, _task_tab(server, "build_report", second, dag_id=CHANGES))
    frame.locator("#cl-changes").check()
    assert frame.locator("#cl-changes-panel li").count() == 0
    assert "no change in the column lineage" in frame.locator("#cl-changes-panel").inner_text()


def test_the_run_tab_colours_each_tasks_changes_alike(server, page):
    """The DAG run's tab joins the tasks: the changes it colours are each task's own, as its task tab shows."""
    first, second = server["changes"]
    frame = _open_tab(page, _run_tab(server, CHANGES, second))
    frame.locator("#cl-changes").check()
    marked = frame.evaluate("""() => window.columnLineage.cy.edges('.direct').filter(e => e.hasClass('change-added')
      || e.hasClass('change-changed')).map(e => e.source().data('label') + '->' + e.target().data('label')
      + (e.hasClass('change-added') ? ' added' : ' changed')).sort()""")
    assert marked == ["amount->amount changed", "amount->total changed", "tax->total added"]
    assert frame.evaluate("() => window.columnLineage.cy.nodes('.column.lost').map(n => n.data('label'))") == ["discount"]
    panel = frame.locator("#cl-changes-panel").inner_text()
    assert "! spark_catalog.default.orders_clean.discount lost all its sources" in panel
    assert f"compared with {first}" in panel
