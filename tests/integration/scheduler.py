"""A real Airflow deployment on 127.0.0.1 for the tests that the issue wants run "not only with dags
test": an api-server, a scheduler with the LocalExecutor and a dag-processor, on their own Airflow home
and SQLite database (Airflow 3.3 lets the LocalExecutor run on SQLite: tasks reach the database only
through the api-server's execution API), started together and stopped with their process groups.

The tasks run as Airflow runs them in production: the scheduler queues them, the executor starts a
supervisor per task, the task talks to the api-server, which records its XComs, its state and its asset
events; anything the api-server refuses at the end fails the task, as it would for a user.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from tests.integration.spark_cluster import free_port

# Seconds between looks at the database or the health endpoint: a look costs a few milliseconds, a late one
# keeps the test's worker idle.
POLL = 0.5


class Deployment:
    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.home = home
        self.env = env

    def airflow(self, *args: str, timeout: float = 120) -> str:
        proc = subprocess.run([str(Path(sys.executable).parent / "airflow"), *args], env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, f"airflow {' '.join(args)}: {proc.stderr[-2000:]}"
        return proc.stdout

    def query(self, sql: str, *params: Any) -> list[tuple]:
        with sqlite3.connect(self.home / "airflow.db", timeout=30) as db:
            return db.execute(sql, params).fetchall()

    def run(self, dag_id: str, run_id: str, *, timeout: float = 600) -> str:
        """Trigger ``dag_id`` (unpaused first) and wait for its run to end; its state."""
        deadline = time.monotonic() + timeout
        while not self.query("SELECT 1 FROM dag WHERE dag_id = ?", dag_id):  # the dag-processor parses it
            assert time.monotonic() < deadline, f"{dag_id} was never parsed; see {self.home}/dp.log"
            time.sleep(POLL)
        self.airflow("dags", "unpause", dag_id)
        self.airflow("dags", "trigger", dag_id, "-r", run_id)
        while True:
            rows = self.query("SELECT state FROM dag_run WHERE dag_id = ? AND run_id = ?", dag_id, run_id)
            if rows and rows[0][0] in ("success", "failed"):
                return rows[0][0]
            assert time.monotonic() < deadline, f"{dag_id} {run_id} did not end; see {self.home}/sched.log"
            time.sleep(POLL)

    def task_states(self, dag_id: str, run_id: str) -> dict[str, str]:
        return dict(self.query("SELECT task_id, state FROM task_instance WHERE dag_id = ? AND run_id = ?",
                               dag_id, run_id))

    def xcoms(self, dag_id: str, run_id: str, key: str) -> dict[str, Any]:
        rows = self.query("SELECT task_id, value FROM xcom WHERE dag_id = ? AND run_id = ? AND key = ?",
                          dag_id, run_id, key)
        return {task: _json(value) for task, value in rows}

    def asset_events(self, dag_id: str, run_id: str) -> dict[tuple[str, str], Any]:
        """{(source task, asset URI): extra} of a run's asset events, as the api-server recorded them."""
        rows = self.query("SELECT e.source_task_id, a.uri, e.extra FROM asset_event e JOIN asset a ON a.id = e.asset_id"
                          " WHERE e.source_dag_id = ? AND e.source_run_id = ?", dag_id, run_id)
        return {(task, uri): _json(extra) for task, uri, extra in rows}


def _json(value: Any) -> Any:
    while isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except ValueError:
            break
    return value


@contextmanager
def deployment(home: Path, dags: list[Path], env: dict[str, str] | None = None, *,
               timeout: float = 300) -> Iterator[Deployment]:
    """An api-server, a scheduler (LocalExecutor) and a dag-processor on a fresh home in ``home``, with
    ``dags`` copied into its DAGs folder and ``env`` added to their environment."""
    import shutil

    (home / "dags").mkdir(parents=True, exist_ok=True)
    for dag in dags:
        shutil.copy(dag, home / "dags" / dag.name)
    port = free_port()
    full = {**os.environ, **(env or {}),
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "2",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__API_AUTH__JWT_SECRET": "odd-paths-test-secret",  # the scheduler signs, the api-server reads
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
            "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2"}
    stack = Deployment(home, full)
    stack.airflow("db", "migrate", timeout=300)
    airflow = str(Path(sys.executable).parent / "airflow")
    procs: list[subprocess.Popen] = []
    logs = []
    try:
        for name, args in (("api", ["api-server", "-H", "127.0.0.1", "-p", str(port), "-w", "1"]),
                           ("sched", ["scheduler"]), ("dp", ["dag-processor"])):
            log = (home / f"{name}.log").open("w")
            logs.append(log)
            procs.append(subprocess.Popen([airflow, *args], env=full, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True))
        deadline = time.monotonic() + timeout
        while True:
            for proc in procs:
                assert proc.poll() is None, f"{proc.args[1]} exited with {proc.returncode}; logs in {home}"
            with suppress(OSError):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/monitor/health", timeout=10) as r:
                    health = json.loads(r.read())
                    if health["scheduler"]["status"] == "healthy" and health["dag_processor"]["status"] == "healthy":
                        break
            assert time.monotonic() < deadline, f"the deployment did not come up; logs in {home}"
            time.sleep(POLL)
        yield stack
    finally:
        for proc in procs:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for log in logs:
            log.close()
