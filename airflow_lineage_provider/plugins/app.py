"""The plugin's FastAPI app: the column-lineage pages and the JSON API they read.

Airflow mounts plugin apps without any authentication of their own, so every route that
shows or returns lineage depends on ``requires_access_dag("GET", DagAccessEntity.XCOM)``:
the caller must be signed in (``Authorization: Bearer`` or the UI's ``_token`` cookie, which
the page sends when the Airflow UI shows it in an iframe) and allowed to read the DAG's XComs.
Only the static bundle (no data in it) is served to anyone.
"""

from __future__ import annotations

import html
import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy import select

from airflow_lineage_provider.lineage.model import XCOM_KEY, DocumentError
from airflow_lineage_provider.plugins.graph import TaskChanges, TaskLineage, build_graph, trace_graph

URL_PREFIX = "/column-lineage"
STATIC_DIR = Path(__file__).resolve().parent / "static"


def _requires_xcom_read() -> Any:
    """Airflow's own check: signed in, and may read this DAG's XComs (401 / 403 otherwise)."""
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
    from airflow.api_fastapi.core_api.security import requires_access_dag

    return Depends(requires_access_dag("GET", DagAccessEntity.XCOM))


# Airflow keeps a map index in a 32-bit integer column; -1 is an unmapped task.
MAP_INDEX_RANGE = (-1, 2**31 - 1)


def parse_map_index(raw: str | None) -> int | None:
    """The map index of a tab's URL; ``None`` (every map index) when it is absent or not a number.

    Airflow leaves ``{MAP_INDEX}`` in the URL as is for an unmapped task. A number no task can
    have is a 400 that says so, never a database error.
    """
    if raw is None:
        return None
    try:
        index = int(raw.strip())
    except ValueError:
        return None
    low, high = MAP_INDEX_RANGE
    if not low <= index <= high:
        raise HTTPException(400, f"map_index {raw.strip()[:40]} is out of range: a map index is {low} (not mapped) "
                                 f"to {high}; leave it out for every map index")
    return index


def check_exists(dag_id: str, run_id: str, task_id: str | None = None) -> None:
    """404, saying what was not found, for a DAG, run or task that does not exist: a mistyped or
    deleted run must not look like a run with no lineage."""
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    with create_session() as session:
        run = session.scalar(select(DagRun.id).where(DagRun.dag_id == dag_id, DagRun.run_id == run_id))
        if run is None:
            known = session.scalar(select(DagModel.dag_id).where(DagModel.dag_id == dag_id))
            raise HTTPException(404, f"DAG {dag_id!r} has no run {run_id!r}" if known else f"no DAG {dag_id!r}")
        if task_id is not None and session.scalar(select(TaskInstance.task_id).where(
                TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id, TaskInstance.task_id == task_id)
                .limit(1)) is None:
            raise HTTPException(404, f"run {run_id!r} of DAG {dag_id!r} has no task {task_id!r}")


def lineage_version(dag_id: str, run_id: str, task_id: str | None = None, map_index: int | None = None
                    ) -> tuple[Any, ...]:
    """What the run's graph is built from (``runs.run_version``). Equal versions, equal graphs."""
    from airflow_lineage_provider.runs import run_version

    return run_version(dag_id, run_id, [task_id] if task_id is not None else None, map_index)


def read_lineage(dag_id: str, run_id: str, task_id: str | None = None,
                 map_index: int | None = None) -> tuple[list[TaskLineage], list[str]]:
    """The lineage documents of a DAG run (or one task of it), in task order.

    A value that is not a lineage document is skipped with a warning, never a server error.
    """
    from airflow_lineage_provider.runs import run_documents

    documents, problems = run_documents(dag_id, run_id, [task_id] if task_id is not None else None, map_index)
    return [TaskLineage(task_id=p.task_id, map_index=p.map_index, report=r) for p, r in documents], problems


def read_changes(dag_id: str, run_id: str, tasks: list[TaskLineage]) -> dict[tuple[str, int], TaskChanges]:
    """Each task instance's lineage against its previous successful run's: the diff the CLI prints
    (``lineage/diff.py``), the previous run found as the CLI finds a task's runs (``runs.py``)."""
    from airflow.utils.session import create_session

    from airflow_lineage_provider.lineage.diff import diff
    from airflow_lineage_provider.runs import previous_successful, read_document

    out: dict[tuple[str, int], TaskChanges] = {}
    with create_session() as session:
        for t in tasks:
            previous = previous_successful(dag_id, t.task_id, run_id, t.map_index, session=session)
            if previous is None:
                continue
            try:
                old = read_document(dag_id, t.task_id, previous, session=session)
            except DocumentError:
                continue  # the older value is not a lineage document: nothing to compare with
            out[(t.task_id, t.map_index)] = TaskChanges(previous.run_id, diff(old, t.report))
    return out


def _payload(dag_id: str, run_id: str, task_id: str | None, map_index: int | None) -> dict[str, Any]:
    """What the page needs and nothing twice: the graph holds each statement's SQL, method, confidence,
    warnings and agreement for the side panel, and each task's changes."""
    tasks, problems = read_lineage(dag_id, run_id, task_id, map_index)
    return {
        "dag_id": dag_id,
        "run_id": run_id,
        "task_id": task_id,
        "map_index": map_index,
        "graph": build_graph(tasks, read_changes(dag_id, run_id, tasks)),
        "problems": problems,
    }


class _GraphCache:
    """A run's graph is built once: the JSON of the last few (DAG, run, task, map index) asked for, kept while
    their version (``lineage_version``: which XComs, pushed when, compared with which run) is the same.

    Reading and decoding a 20 x 500-column run's documents is most of an answer's time; a finished run's
    lineage does not change, and a cleared and re-run task pushes a new XCom, so a new version. Only served
    after the route's own authorization check.
    """

    SIZE = 8

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, tuple[tuple, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple, version: tuple) -> bytes | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit[0] != version:
                return None
            self._entries.move_to_end(key)
            return hit[1]

    def put(self, key: tuple, version: tuple, body: bytes) -> None:
        with self._lock:
            self._entries[key] = (version, body)
            self._entries.move_to_end(key)
            while len(self._entries) > self.SIZE:
                self._entries.popitem(last=False)


_cache = _GraphCache()


def _answer(dag_id: str, run_id: str, task_id: str | None, map_index: int | None) -> Response:
    check_exists(dag_id, run_id, task_id)
    key = (dag_id, run_id, task_id, map_index)
    version = lineage_version(*key)
    body = _cache.get(key, version)
    if body is None:
        body = json.dumps(_payload(*key), separators=(",", ":")).encode()
        _cache.put(key, version, body)
    return Response(body, media_type="application/json")


def visible_to(user: Any) -> Any:
    """``visible(dag_id)``: whether ``user`` may read the DAG's XComs, as the run view requires, asked
    of Airflow's auth manager once per DAG a trace reaches (never per hop)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails

    manager = get_auth_manager()
    known: dict[str, bool] = {}

    def visible(dag_id: str) -> bool:
        if dag_id not in known:
            known[dag_id] = bool(manager.is_authorized_dag(method="GET", access_entity=DagAccessEntity.XCOM,
                                                           details=DagDetails(id=dag_id), user=user))
        return known[dag_id]

    return visible


DIRECTIONS = {"both": (True, True), "upstream": (True, False), "downstream": (False, True)}


# The hops one answer carries at most: the nearest whole depths, the rest counted (``Trace.nearest``).
TRACE_HOPS = 2500


def trace_answer(user: Any, dataset: str, column: str | None, direction: str, depth: str, as_of: str | None,
                 limit: int = TRACE_HOPS) -> dict[str, Any]:
    """A trace across DAGs as the user may see it; 400 saying which parameter is wrong, 404 when no task
    with lineage of a DAG the user may read writes or reads the start (a table only hidden DAGs touch is
    answered as one that does not exist). The index follows new runs first (``runs.TraceFollower``)."""
    from airflow_lineage_provider.lineage.trace import TraceQuery
    from airflow_lineage_provider.runs import trace_follower

    if direction not in DIRECTIONS:
        raise HTTPException(400, f"direction {direction[:20]!r}: one of {', '.join(DIRECTIONS)}")
    up, down = DIRECTIONS[direction]
    try:
        query = TraceQuery.parse(dataset, column=column, depth=depth, as_of=as_of, upstream=up, downstream=down)
    except ValueError as e:
        raise HTTPException(400, str(e)) from None
    answer = query.run(trace_follower().index_at(query.as_of), visible=visible_to(user), limit=limit)
    if isinstance(answer, str):
        raise HTTPException(404, answer)
    return {"query": {"dataset": query.start, "column": query.column, "direction": direction,
                      "depth": query.depth, "as_of": query.as_of}, "trace": answer.to_dict(),
            "graph": trace_graph(answer)}


# Defence in depth behind textContent: only the plugin's own script runs, nothing is fetched
# from elsewhere, and only Airflow's own pages may frame the page.
_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'")


def _url(request: Request, *segments: str) -> str:
    """A path under the plugin's prefix, each segment quoted (a run id may hold ``+``, ``:`` or worse)."""
    return request.scope.get("root_path", "") + "".join("/" + quote(s, safe="") for s in segments)


def _page(request: Request, *, title: str, api_url: str, scope: dict[str, Any]) -> HTMLResponse:
    """The HTML shell: the data comes from the API; every value here is escaped."""
    root = request.scope.get("root_path", "")
    attrs = " ".join(f'data-{k}="{html.escape(str(v), quote=True)}"' for k, v in
                     {"api": api_url, **{k: ("" if v is None else v) for k, v in scope.items()}}.items())
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="stylesheet" href="{html.escape(root)}/static/column-lineage.css">
</head><body>
<div id="column-lineage-app" {attrs}></div>
<script src="{html.escape(root)}/static/column-lineage.js"></script>
</body></html>"""
    return HTMLResponse(body, headers={"Cache-Control": "no-store", "Content-Security-Policy": _CSP})


def create_app() -> FastAPI:
    app = FastAPI(title="Column lineage", description="Column-level lineage of Spark SQL tasks, from XCom "
                  f"{XCOM_KEY!r}", docs_url=None, redoc_url=None)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    auth = _requires_xcom_read()

    @app.middleware("http")
    async def _headers(request: Request, call_next: Any) -> Response:
        """No browser guesses a type (nosniff), and no cache keeps lineage, which may name what a user
        may see no longer (no-store on everything but the static bundle)."""
        response = await call_next(request)
        response.headers["X-Content-Type-Options"] = "nosniff"
        if not request.url.path.startswith(request.scope.get("root_path", "") + "/static/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.get("/api/dags/{dag_id}/runs/{run_id}", dependencies=[auth])
    def dag_run_lineage(dag_id: str, run_id: str) -> Response:
        """Every task's lineage in a DAG run, stitched into one graph."""
        return _answer(dag_id, run_id, None, None)

    @app.get("/api/dags/{dag_id}/runs/{run_id}/tasks/{task_id}", dependencies=[auth])
    def task_lineage(dag_id: str, run_id: str, task_id: str,
                     map_index: str | None = Query(None, description="a number; anything else: every map index")
                     ) -> Response:
        """One task instance's lineage (all map indexes of the task when none is given)."""
        return _answer(dag_id, run_id, task_id, parse_map_index(map_index))

    @app.get("/dags/{dag_id}/runs/{run_id}", dependencies=[auth], response_class=HTMLResponse)
    def dag_run_page(request: Request, dag_id: str, run_id: str) -> HTMLResponse:
        check_exists(dag_id, run_id)  # the page answers 404 where its API does
        api = _url(request, "api", "dags", dag_id, "runs", run_id)
        return _page(request, title=f"Column lineage: {dag_id} / {run_id}", api_url=api,
                     scope={"view": "dag_run", "dag-id": dag_id, "run-id": run_id})

    @app.get("/dags/{dag_id}/runs/{run_id}/tasks/{task_id}", dependencies=[auth], response_class=HTMLResponse)
    def task_page(request: Request, dag_id: str, run_id: str, task_id: str,
                  map_index: str | None = None) -> HTMLResponse:
        index = parse_map_index(map_index)
        check_exists(dag_id, run_id, task_id)  # the page answers 404 where its API does
        api = _url(request, "api", "dags", dag_id, "runs", run_id, "tasks", task_id)
        if index is not None:
            api += f"?map_index={index}"
        run_page = _url(request, "dags", dag_id, "runs", run_id)
        return _page(request, title=f"Column lineage: {dag_id} / {task_id}", api_url=api,
                     scope={"view": "task", "dag-id": dag_id, "run-id": run_id, "task-id": task_id,
                            "map-index": index, "run-page": run_page})

    from airflow.api_fastapi.core_api.security import get_user

    @app.get("/api/trace")
    def trace_across_dags(user: Any = Depends(get_user),
                          dataset: str = Query(..., description="db.table.column, db.table, or a path"),
                          column: str | None = Query(None, description="the column, when dataset is a path"),
                          direction: str = Query("both", description="both, upstream or downstream"),
                          depth: str = Query("all", description="steps each way: a number or 'all'"),
                          as_of: str | None = Query(None, description="ISO 8601 time: each task's latest "
                                                                      "successful run then"),
                          limit: int = Query(TRACE_HOPS, ge=1, le=100_000, description="hops at most: the nearest "
                                             "whole depths, the rest counted in 'omitted'")) -> Response:
        """Where a column comes from and what it feeds, over every DAG's latest successful runs; hops of
        DAGs the caller may not read are counted as hidden, never shown (the CLI's ``trace --json``)."""
        body = trace_answer(user, dataset, column, direction, depth, as_of, limit)
        return Response(json.dumps(body, separators=(",", ":")), media_type="application/json")

    @app.get("/api/trace/search")
    def trace_search(user: Any = Depends(get_user), q: str = Query("", description="part of a name")) -> Response:
        """Datasets and columns to start a trace from, of the DAGs the caller may read."""
        from airflow_lineage_provider.runs import trace_follower

        follower = trace_follower()
        follower.refresh()
        found = follower.index.search(q[:200], visible=visible_to(user))
        return Response(json.dumps({"results": [f.to_dict() for f in found]}, separators=(",", ":")),
                        media_type="application/json")

    @app.get("/trace", response_class=HTMLResponse)
    def trace_page(request: Request, user: Any = Depends(get_user)) -> HTMLResponse:
        """The "Column lineage" page of Airflow's menu: search, then a column's trace across DAGs."""
        params = request.query_params
        return _page(request, title="Column lineage across DAGs", api_url=_url(request, "api", "trace"),
                     scope={"view": "trace", "search": _url(request, "api", "trace", "search"),
                            "dataset": params.get("dataset", "")[:1000], "column": params.get("column", "")[:1000],
                            "direction": params.get("direction", "both")[:20], "depth": params.get("depth", "all")[:10],
                            "as-of": params.get("as_of", "")[:40]})

    @app.exception_handler(HTTPException)
    async def _error(request: Request, exc: HTTPException) -> Response:
        """JSON for the API; a short page for the views, so an iframe says what is wrong."""
        api = request.url.path.startswith(request.scope.get("root_path", "") + "/api/")
        if api:
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
        detail = str(exc.detail or "").lower()
        message = ("Sign in to Airflow to see column lineage." if exc.status_code == 401
                   else "Your sign-in is not valid (it may have expired): sign in to Airflow again."
                   if exc.status_code == 403 and ("token" in detail or "invalid" in detail or "signature" in detail)
                   else "You may not read this DAG's XComs, so its column lineage is not shown."
                   if exc.status_code == 403 else str(exc.detail or "") or f"error {exc.status_code}")
        return HTMLResponse(f"<!doctype html><meta charset='utf-8'><title>{exc.status_code}</title>"
                            f"<p style='font-family:sans-serif'>{html.escape(message)}</p>",
                            status_code=exc.status_code, headers={"Cache-Control": "no-store",
                                                                  "X-Content-Type-Options": "nosniff"})

    return app


app = create_app()
