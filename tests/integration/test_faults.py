"""Faults and hostile input, as a user meets them: each run asserts the task's outcome and the message.

A planted credential (``tests/dags/lineage_test_secrets.py``) is looked for in everything a run leaves:
the task log, XCom, the OpenLineage events (file transport) and the error raised, for a successful
run, a run that fails in Spark and a run whose SQL does not parse.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dags.lineage_test_secrets import PLANTED
from tests.integration.test_example_dag import xcoms
from tests.integration.test_openlineage import openlineage_enabled, read_events

pytestmark = [pytest.mark.spark, pytest.mark.airflow]


def run_secret_dag(dag_name: str, tmp_path: Path, capfd, transport: dict | None = None
                   ) -> tuple[object, str, list[dict], dict]:
    """(the run, everything it printed, its OpenLineage events, its XCom documents)."""
    from tests.conftest import DAGS

    log = tmp_path / "events.jsonl"
    module = load_dag_module(DAGS / "lineage_test_secrets.py")
    dag = getattr(module, dag_name)
    capfd.readouterr()
    from airflow.sdk._shared.secrets_masker import reset_secrets_masker

    reset_secrets_masker()  # what the run masks, its own task registered: not an earlier test in this process
    with openlineage_enabled(transport or {"type": "file", "log_file_path": str(log), "append": True}):
        run = dag.test()
    out = capfd.readouterr()
    return run, out.out + out.err, read_events(log) if log.exists() else [], xcoms(dag.dag_id, run.run_id)


def load_dag_module(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def api_answers(dag_id: str, run_id: str, task_id: str, monkeypatch) -> list[str]:
    """What the plugin's API answers for the run and the task (the real app and metadata database;
    only Airflow's auth manager is a stand-in that lets the request through)."""
    from airflow.api_fastapi.core_api import security
    from airflow.models.dag import DagModel
    from fastapi.testclient import TestClient

    from airflow_lineage_provider.plugins import app as app_module

    class Allow:
        async def get_user_from_token(self, token):
            return type("User", (), {"get_id": lambda self: "u", "get_name": lambda self: "u"})()

        def is_authorized_dag(self, **kwargs):
            return True

    monkeypatch.setattr(security, "get_auth_manager", lambda: Allow())
    monkeypatch.setattr(DagModel, "get_team_name", staticmethod(lambda dag_id: None))
    client = TestClient(app_module.create_app())
    client.cookies.set("_token", "t")
    answers = []
    for url in (f"/api/dags/{dag_id}/runs/{run_id}", f"/api/dags/{dag_id}/runs/{run_id}/tasks/{task_id}",
                f"/dags/{dag_id}/runs/{run_id}/tasks/{task_id}"):
        r = client.get(url)
        assert r.status_code == 200, (url, r.text[:300])
        answers.append(r.text)
    return answers


def assert_no_secret(*artefacts: object) -> None:
    for artefact in artefacts:
        text = artefact if isinstance(artefact, str) else json.dumps(artefact, default=str)
        assert PLANTED not in text, f"the planted secret leaked: ...{text[max(0, text.find(PLANTED) - 200):][:300]}"


@pytest.mark.slow
def test_a_successful_run_shows_no_secret_anywhere(airflow_db, tmp_path, capfd, monkeypatch):
    run, printed, events, docs = run_secret_dag("ok", tmp_path, capfd)
    assert run.state == "success"
    assert "[airflow-lineage] statement 1/7" in printed  # the driver's log lines are there, scrubbed
    assert "password=***" in printed
    for line in ("statement 3/7 (line 3): SET spark.hadoop.fs.s3a.secret.key=***",
                 "statement 4/7 (line 4): SET spark.some.password = ***",
                 "statement 7/7 (line 12): INSERT OVERWRITE DIRECTORY"):
        assert line in printed, line
    assert {e["eventType"] for e in events} >= {"START", "COMPLETE"}
    statements = docs["secret_in_sql"]["statements"]
    assert [st["method"] for st in statements] == ["plan", "plan", "plan"]
    assert statements[2]["sql"].startswith("INSERT OVERWRITE DIRECTORY") and "secret_src" in statements[2]["sql"]
    task_events = [e for e in events if e["job"]["name"].endswith(".secret_in_sql")]
    assert {e["eventType"] for e in task_events} == {"START", "COMPLETE"}
    for event in task_events:  # the SQL facet: every spelling masked, the rest of the script as it was
        query = event["job"]["facets"]["sql"]["query"]
        for kept in ("SET spark.hadoop.fs.s3a.secret.key=***;", "-- password=***", "'sfPassword' = '***'",
                     "password '***'", "'x-api-key' '***'", "path '", "/* the service token is *** */",
                     "FROM secret_src; -- token: ***"):
            assert kept in query, (kept, query)
    answers = api_answers("lineage_secrets_ok", run.run_id, "secret_in_sql", monkeypatch)
    assert "password=***" in answers[0]  # the API does show the (scrubbed) SQL
    rendered = rendered_fields("lineage_secrets_ok", run.run_id, "secret_in_sql")
    assert "secret_src" in rendered["sql"], rendered  # the UI's Rendered Template shows the SQL, masked
    assert_no_secret(printed, events, docs, *answers, *cli_answers(run, capfd), rendered)


def cli_answers(run, capfd) -> list[str]:
    """What ``airflow-lineage`` prints of the run (show, as JSON and as a table) and of its script
    (static extraction, no JVM)."""
    from airflow_lineage_provider import cli
    from tests.dags.lineage_test_secrets import SPELLINGS, URL

    printed = []
    for argv in (["show", "--dag-id", run.dag_id, "--run-id", run.run_id, "--format", "json"],
                 ["show", "--dag-id", run.dag_id, "--run-id", run.run_id],
                 ["extract", "--method", "sql", "-e", f"SELECT '{URL}' AS url;\n" + SPELLINGS, "--format", "json"],
                 ["extract", "--method", "sql", "-e", SPELLINGS]):
        capfd.readouterr()
        assert cli.main(argv) == 0, argv
        out = capfd.readouterr()
        printed.append(out.out + out.err)
    assert "secret_src" in printed[0] and "secrets_out_copy" in printed[2]
    return printed


@pytest.mark.slow
def test_a_parse_error_shows_no_secret_in_the_log_the_error_or_the_fail_event(airflow_db, tmp_path, capfd,
                                                                              monkeypatch):
    run, printed, events, docs = run_secret_dag("parse_error", tmp_path, capfd)
    assert_no_secret(*api_answers("lineage_secrets_parse_error", run.run_id, "secret_in_bad_sql", monkeypatch))
    assert run.state == "failed"
    assert "Statement 1 of 1 has a syntax error at line 3 of the script" in printed
    assert "PARSE_SYNTAX_ERROR" in printed
    [fail] = [e for e in events if e["eventType"] == "FAIL" and e["job"]["name"].endswith(".secret_in_bad_sql")]
    error = fail["run"]["facets"]["errorMessage"]
    assert "PARSE_SYNTAX_ERROR" in error["message"]
    assert docs == {}
    rendered = rendered_fields("lineage_secrets_parse_error", run.run_id, "secret_in_bad_sql")
    assert "USING org.apache.spark.sql.jdbc" in rendered["sql"], rendered
    assert_no_secret(printed, events, rendered)


@pytest.mark.slow
def test_a_run_error_shows_no_secret_in_the_log_the_error_or_the_fail_event(airflow_db, tmp_path, capfd,
                                                                            monkeypatch):
    run, printed, events, docs = run_secret_dag("run_error", tmp_path, capfd)
    assert_no_secret(*api_answers("lineage_secrets_run_error", run.run_id, "secret_in_failing_sql", monkeypatch))
    assert run.state == "failed"
    assert "Statement 1 of 1 failed at line 1 of the script" in printed
    assert "UNRESOLVED_COLUMN" in printed
    [fail] = [e for e in events if e["eventType"] == "FAIL" and e["job"]["name"].endswith(".secret_in_failing_sql")]
    assert "UNRESOLVED_COLUMN" in fail["run"]["facets"]["errorMessage"]["message"]
    assert docs == {}
    rendered = rendered_fields("lineage_secrets_run_error", run.run_id, "secret_in_failing_sql")
    assert "SELECT" in rendered["sql"].upper(), rendered
    assert_no_secret(printed, events, rendered)


def run_fault_dag(name: str, capfd) -> tuple[object, str, dict]:
    from tests.conftest import DAGS

    dag = getattr(load_dag_module(DAGS / "lineage_test_faults.py"), name)
    capfd.readouterr()
    run = dag.test()
    out = capfd.readouterr()
    return run, out.out + out.err, xcoms(dag.dag_id, run.run_id)


@pytest.mark.slow
def test_an_unwritable_dump_uri_costs_the_lineage_a_warning_not_the_job(airflow_db, capfd):
    from tests.dags.lineage_test_faults import DUMP_URI_OUT

    run, printed, docs = run_fault_dag("dump_uri", capfd)
    assert run.state == "success"
    assert Path(DUMP_URI_OUT).is_dir()  # the job ran and wrote
    [doc] = docs.values()
    warning = ("dump_uri file:///proc/airflow-lineage-forbidden cannot be written (No such file or directory): the "
               "job ran with a local plan dump instead; fix dump_uri (a directory this worker can write) for "
               "cluster mode")
    assert warning in doc["warnings"]
    assert doc["statements"][0]["method"] == "plan"  # the local dump still gave the plan's lineage
    assert warning in printed


def test_an_empty_script_succeeds_without_starting_spark_and_says_so(airflow_db, capfd):
    run, printed, docs = run_fault_dag("empty", capfd)
    assert run.state == "success"
    assert "spark-submit" not in printed and "Spark-Submit cmd" not in printed
    assert docs["comments_only"]["statements"] == []
    assert docs["comments_only"]["warnings"] == [
        "the SQL has no statement (it is empty or holds only comments): Spark was not started"]
    assert "The SQL has no statement (it is empty or holds only comments): Spark was not started" in printed


@pytest.mark.slow
def test_two_embedded_jobs_at_once_take_turns_on_the_catalog_and_say_so_once(tmp_path):
    """Derby lets one JVM into the embedded catalog: the second job waits, in one line, then runs."""
    import subprocess

    from tests.conftest import venv_bin

    procs = []
    for n in (1, 2):
        script = tmp_path / f"job{n}.sql"
        script.write_text(f"CREATE TABLE IF NOT EXISTS fault_turns_{n} (a INT) USING parquet;\n"
                          f"INSERT INTO fault_turns_{n} SELECT 1;\n")
        procs.append(subprocess.Popen([venv_bin("airflow-lineage"), "extract", "--sql", str(script)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    for n, (out, _) in enumerate(outs, 1):
        assert f"statement 2 -> spark_catalog.default.fault_turns_{n}" in out
    waits = [line for _, err in outs for line in err.splitlines() if "waiting for the embedded Spark catalog" in line]
    assert len(waits) == 1 and waits[0].startswith("airflow-lineage: waiting for the embedded Spark catalog (")
    assert all("XSDB6" not in err for _, err in outs)


def test_a_job_that_waits_too_long_for_the_catalog_gives_up_saying_why(tmp_path):
    import fcntl

    from airflow_lineage_provider.hooks import local_spark

    conf = local_spark.local_conf(str(tmp_path / "state"))
    said: list[str] = []
    with open(local_spark.catalog_lock_path(conf), "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(local_spark.CatalogBusyError) as raised:
            with local_spark.catalog_lock(conf, said.append, timeout=1):
                pytest.fail("the catalog was held by another job")
    assert len(said) == 1 and "another job is using it" in said[0]
    assert "was still in use by another job after 1 s: run embedded tasks one at a time" in str(raised.value)


@pytest.mark.parametrize(("damage", "warning"), [
    ("corrupt", "plan dump line 2 unreadable"),
    ("truncated", "plan dump line 2 unreadable"),
    ("no plans", "no plan dump at"),
    ("no result", "the job left no result file (it was killed or crashed before the end)"),
])
def test_a_damaged_dump_costs_lineage_a_warning_never_the_task(tmp_path, damage, warning):
    """What the hook reads back after the job, damaged four ways: the operator's document says what
    was lost and keeps what was not; nothing is raised (the task's outcome is the Spark job's)."""
    from airflow_lineage_provider.hooks.spark_lineage import _json_loads
    from airflow_lineage_provider.job.capture import digested
    from airflow_lineage_provider.job.dump import DumpWriter, JobResult, read_dump
    from airflow_lineage_provider.operators.spark_lineage import SparkSqlLineageOperator
    from tests.helpers import SRC_DST, plan_record

    writer = DumpWriter(str(tmp_path))
    for index in (0, 1):
        writer.record(digested({**plan_record("seed_join"), "index": index, "sql": "INSERT ..."}, []))
    writer.finish(JobResult(statements=[{"index": 0, "status": "ok"}, {"index": 1, "status": "ok"}]))
    plans = tmp_path / "plans.jsonl"
    lines = plans.read_text().splitlines()
    if damage == "corrupt":
        plans.write_text(lines[0] + "\n" + "{not json at all\n")
    elif damage == "truncated":
        plans.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])
    elif damage == "no plans":
        plans.unlink()
    else:
        (tmp_path / "result.json").unlink()
    op = SparkSqlLineageOperator(task_id="t", sql=SRC_DST, schema_cache=False)
    report = op.lineage_reporter.extract(read_dump(str(tmp_path), _json_loads()))
    assert any(w.startswith(warning) for w in report.warnings), report.warnings
    kept = [s for s in report.statements if s.method == "plan"]
    assert len(kept) == {"corrupt": 1, "truncated": 1, "no plans": 0, "no result": 2}[damage]


# Each event fails once: the client's default five retries of each of a run's events would make the test wait
# half a minute for the same outcome.
NO_RETRY = {"total": 0}


@pytest.mark.slow
def test_an_openlineage_endpoint_that_refuses_changes_nothing(airflow_db, tmp_path, capfd):
    """Nothing listens on the transport's port: the events are lost, the task and its XCom are not."""
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago: connections to it are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run, printed, _, docs = run_secret_dag("ok", tmp_path, capfd, {"type": "http", "url": f"http://127.0.0.1:{port}",
                                                                   "timeout": 2, "retry": NO_RETRY})
    assert run.state == "success"
    assert docs["secret_in_sql"]["statements"][0]["method"] == "plan"


@pytest.mark.slow
def test_a_capture_that_cannot_be_imported_leaves_the_job_running_and_says_why(airflow_db, capfd, monkeypatch):
    """The driver cannot import its capture (a broken install): the SQL runs all the same, the task
    succeeds, and its lineage is the static lineage of the SQL, with the reason."""
    from tests.dags.lineage_test_faults import DUMP_URI_OUT
    from tests.helpers import DATA

    monkeypatch.setenv("PYTHONPATH", str(DATA / "faults" / "capture_import"))
    run, printed, docs = run_fault_dag("capture_broken", capfd)
    assert run.state == "success"
    assert Path(DUMP_URI_OUT + "_capture").is_dir()  # the job wrote
    [doc] = docs.values()
    assert any(w.startswith("no plan was captured (the plan capture could not be loaded (ImportError: injected: "
                            "the capture is broken)") for w in doc["warnings"]), doc["warnings"]
    assert [s["method"] for s in doc["statements"]] == ["sql"]
    assert "the plan capture could not be loaded (ImportError: injected: the capture is broken)" in printed


@pytest.mark.slow
def test_an_openlineage_endpoint_that_hangs_changes_nothing(airflow_db, tmp_path, capfd):
    """The transport's server accepts and never answers: the task and its XCom are as without it."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept_and_hang() -> None:
        server.settimeout(0.5)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])  # read nothing, answer nothing
            except OSError:
                continue

    threading.Thread(target=accept_and_hang, daemon=True).start()
    try:
        run, _, _, docs = run_secret_dag("ok", tmp_path, capfd, {
            "type": "http", "url": f"http://127.0.0.1:{server.getsockname()[1]}", "timeout": 2, "retry": NO_RETRY})
    finally:
        stop.set()
        for conn in held:
            conn.close()
        server.close()
    assert run.state == "success"
    assert docs["secret_in_sql"]["statements"][0]["method"] == "plan"


def _processes_named(marker: str) -> list[str]:
    import subprocess

    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


@pytest.mark.slow
def test_a_task_killed_mid_statement_leaves_no_spark_process_behind(airflow_db):
    """``airflow tasks test`` of a long statement, stopped with SIGTERM as Airflow stops a task: the
    operator's on_kill stops spark-submit, and no JVM of the job outlives the task."""
    import os
    import signal
    import subprocess
    import time

    from tests.conftest import venv_bin

    marker = "airflow-lineage-long_statement"  # the job's --name
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    task = subprocess.Popen([venv_bin("airflow"), "tasks", "test", "lineage_fault_kill", "long_statement"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not _processes_named(marker) and time.monotonic() < deadline and task.poll() is None:
            time.sleep(1)
        if not _processes_named(marker):
            task.kill()
            pytest.fail("the Spark job never started: " + (task.communicate(timeout=30)[0] or "")[-3000:])
        time.sleep(5)  # mid-statement
        task.send_signal(signal.SIGTERM)
        task.wait(timeout=120)
        deadline = time.monotonic() + 30
        while _processes_named(marker) and time.monotonic() < deadline:
            time.sleep(1)
        assert _processes_named(marker) == [], "a Spark process outlived the killed task"
        printed = task.stdout.read() if task.stdout else ""
        # on_kill stopped spark-submit (killed, not failed on its own): the task failed.
        assert "The Spark job failed" in printed and "Error code is: -9" in printed, printed[-2000:]
        assert "Column lineage:" not in printed  # no lineage is reported for a job that did not finish
    finally:
        if task.poll() is None:
            os.killpg(task.pid, signal.SIGKILL)
        for line in _processes_named(marker):
            os.kill(int(line.split()[0]), signal.SIGKILL)


@pytest.mark.slow
def test_a_retry_after_a_partial_write_reports_the_second_try_alone(airflow_db, capfd):
    from tests.dags.lineage_test_faults import RETRY_OUT

    run, printed, docs = run_fault_dag("retry", capfd)
    assert run.state == "success"
    assert "Statement 2 of 2 failed at line 2 of the script" in printed  # try 1, after its first write
    [doc] = docs.values()
    got = [(s["index"], s["target"]["name"]) for s in doc["statements"]]
    assert got == [(0, f"{RETRY_OUT}_1"), (1, f"{RETRY_OUT}_2")], json.dumps(doc["statements"], indent=1)[:3000]
    assert "no_such_column" not in json.dumps(doc)  # the document is try 2's
    assert Path(f"{RETRY_OUT}_2").is_dir()


_F = "airflow-lineage/1"
MALFORMED_DOCUMENTS = [  # (the file's bytes, what the CLI says is wrong)
    (b"[1,2,3]", "is not a lineage document: it is a list, not an object"),
    (b'"text"', "is not a lineage document: it is a string, not an object"),
    (b"null", "is not a lineage document: it is null, not an object"),
    (b'{"statements": null}', "is not a lineage document: key 'format' is missing"),
    (b'{"format": "airflow-lineage/9"}', "is not a lineage document: its format is 'airflow-lineage/9', not "
                                         "'airflow-lineage/1'"),
    (b'{"format": "%s", "statements": null}' % _F.encode(), "'statements' is null, not a list of statements"),
    (b'{"format": "%s", "statements": [1]}' % _F.encode(), "statement 1: it is a number, not an object"),
    (b'{"format": "%s", "statements": [{"sql": "x"}]}' % _F.encode(), "statement 1: key 'index' is missing"),
    (b'{"format": "%s", "statements": [{"index": true}]}' % _F.encode(),
     "statement 1: 'index' is a boolean, not a whole number"),
    (b'{"format": "%s", "statements": [{"index": 0}, {"index": 4, "columns": {"c": [{"table": "t"}]}}]}'
     % _F.encode(), "statement 2 (index 4), column 'c', input 1: key 'field' is missing"),
    (b'{"format": "%s", "statements": [{"index": 4, "columns": {"c": [{"table": "t", "field": 1}]}}]}'
     % _F.encode(), "statement 1 (index 4), column 'c', input 1: 'field' is a number, not a string"),
    (b'{"format": "%s", "statements": [{"index": 4, "columns": {"c": {"table": "t"}}}]}' % _F.encode(),
     "statement 1 (index 4), column 'c': it is an object, not a list of inputs"),
    (b'{"format": "%s", "statements": [{"index": 4, "target": {"name": "/x"}}]}' % _F.encode(),
     "statement 1 (index 4), target: key 'namespace' is missing"),
    (b'{"format": "%s", "statements": [{"index": 4, "confidence": "high"}]}' % _F.encode(),
     "statement 1 (index 4): 'confidence' is a string, not a number"),
    (b'{"format": "%s", "statements": [{"index": 4, "warnings": "w"}]}' % _F.encode(),
     "statement 1 (index 4): 'warnings' is a string, not a list of strings"),
    (b'{"format": "%s", "statements": [{"index": 4, "indirect": [{"table": "t", "field": "f", "masking": "no"}]}]}'
     % _F.encode(), "statement 1 (index 4), indirect inputs, input 1: 'masking' is a string, not true or false"),
    (b'{"format": "%s", "statements": [{"index": 4, "agreement": {"only_plan": [null]}}]}' % _F.encode(),
     "statement 1 (index 4), agreement: item 1 of 'only_plan' is null, not a string"),
    (b'{"format": "%s", "warnings": [1]}' % _F.encode(), "is not a lineage document: item 1 of 'warnings' is a "
                                                         "number, not a string"),
    (b"", "is not JSON: Expecting value"),
    (b'{"format": ', "is not JSON: Expecting value"),
    (b"[" * 100_000 + b"]" * 100_000, "its JSON is nested too deep to read"),
    ("{\"format\": \"é\"}".encode("latin-1"), "is not UTF-8 text: byte 12 (0xe9) cannot be decoded"),
]


@pytest.mark.parametrize("number", range(len(MALFORMED_DOCUMENTS)))
def test_diff_of_a_document_of_the_wrong_shape_names_the_file_and_what_and_exits_2(tmp_path, number):
    import subprocess

    from tests.conftest import venv_bin

    data, said = MALFORMED_DOCUMENTS[number]
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"format": _F, "statements": []}))
    bad.write_bytes(data)
    for args in ([str(good), str(bad)], [str(bad), str(good)]):
        proc = subprocess.run([venv_bin("airflow-lineage"), "diff", *args], capture_output=True, text=True,
                              timeout=60)
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
        assert "Traceback" not in proc.stderr
        [line] = proc.stderr.splitlines()
        assert line.startswith(f"airflow-lineage: {bad}") and said in line, line


def test_diff_of_a_file_that_cannot_be_read_says_so_and_exits_2(tmp_path):
    import subprocess

    from tests.conftest import venv_bin

    good = tmp_path / "good.json"
    good.write_text(json.dumps({"format": _F}))
    for path, said in ((tmp_path / "missing.json", "No such file or directory"), (tmp_path, "Is a directory")):
        proc = subprocess.run([venv_bin("airflow-lineage"), "diff", str(good), str(path)], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.strip() == f"airflow-lineage: cannot read {path}: {said}"


@pytest.mark.slow
def test_show_and_diff_skip_a_lineage_xcom_that_is_no_document_saying_why(airflow_db, capfd):
    """Eleven tasks push an XCom ``column_lineage`` that is no lineage document (tests/dags/lineage_test_faults.py):
    the CLI skips each with the reason the UI's API gives, and prints no traceback."""
    import subprocess

    from airflow_lineage_provider import cli as cli_module
    from tests.conftest import DAGS, venv_bin
    from tests.dags.lineage_test_faults import MALFORMED_XCOMS

    dag = load_dag_module(DAGS / "lineage_test_faults.py").bad_xcoms
    runs = [dag.test().run_id, dag.test().run_id, dag.test(run_conf={"bad": True}).run_id]

    def cli(*args: str) -> subprocess.CompletedProcess:
        """The command's entry point in this process (each process of its own imports Airflow: ~2.5 s of CPU)."""
        capfd.readouterr()
        try:
            code = cli_module.main(list(args))
        except SystemExit as exit_:
            code = exit_.code
        out = capfd.readouterr()
        assert "Traceback" not in out.err + out.out
        return subprocess.CompletedProcess(["airflow-lineage", *args], code, out.out, out.err)

    # Once as a user runs it, in a process of its own: the same answer as the entry point's.
    own = subprocess.run([venv_bin("airflow-lineage"), "show", "--dag-id", "lineage_fault_xcoms", "--run-id", runs[0],
                          "--format", "json"], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in own.stderr + own.stdout
    entry = cli("show", "--dag-id", "lineage_fault_xcoms", "--run-id", runs[0], "--format", "json")
    assert (own.returncode, own.stdout, own.stderr) == (entry.returncode, entry.stdout, entry.stderr)

    for fmt in ("table", "json"):
        shown = cli("show", "--dag-id", "lineage_fault_xcoms", "--run-id", runs[0], "--format", fmt)
        assert shown.returncode == 0, shown.stderr
        skipped = [line for line in shown.stderr.splitlines() if line.startswith("airflow-lineage: skipped task ")]
        assert len(skipped) == len(MALFORMED_XCOMS), shown.stderr
        for task_id, (_, said) in MALFORMED_XCOMS.items():
            line = f"airflow-lineage: skipped task {task_id}: XCom 'column_lineage' is not a lineage document ("
            assert any(s.startswith(line) and said in s for s in skipped), (task_id, shown.stderr)
        if fmt == "json":
            assert list(json.loads(shown.stdout)["tasks"]) == ["good"]
        else:
            assert "== task good" in shown.stdout and "a <- s.a" in shown.stdout.replace("  ", " ")
    latest = cli("show", "--dag-id", "lineage_fault_xcoms")  # the run where every task pushed a broken one
    assert latest.returncode == 1 and latest.stdout == ""
    assert ("skipped task good: XCom 'column_lineage' is not a lineage document (statement 1 (index 0), target: "
            "it is a string, not an object)") in latest.stderr
    assert f"no column lineage in XCom for DAG lineage_fault_xcoms, run {runs[2]}" in latest.stderr

    # diff: the newest run's document is broken, so the last two readable ones are compared.
    diffed = cli("diff", "--dag-id", "lineage_fault_xcoms", "--task-id", "good")
    assert diffed.returncode == 0, diffed.stderr
    assert diffed.stdout.splitlines() == [f"column lineage: {runs[0]} -> {runs[1]}", "no change in the column lineage"]
    assert diffed.stderr.startswith(f"airflow-lineage: skipped task good: XCom 'column_lineage' in run {runs[2]} "
                                    "is not a lineage document (statement 1 (index 0), target:")
    for task_id, (_, said) in MALFORMED_XCOMS.items():
        proc = cli("diff", "--dag-id", "lineage_fault_xcoms", "--task-id", task_id)
        assert proc.returncode == 2 and proc.stdout == ""
        lines = proc.stderr.splitlines()
        assert len(lines) == 4 and all(said in line for line in lines[:3]), proc.stderr
        assert lines[3] == (f"airflow-lineage: task {task_id} of DAG lineage_fault_xcoms has a lineage document in "
                            "0 successful runs: two are needed")
    given = cli("diff", "--dag-id", "lineage_fault_xcoms", "--task-id", "good", "--run-id", runs[1], "--run-id",
                runs[2])
    assert given.returncode == 2
    assert given.stderr.splitlines()[-1] == ("airflow-lineage: task good of DAG lineage_fault_xcoms has a lineage "
                                             "document in 1 of the runs given: two are needed")


@pytest.mark.slow
def test_one_hook_run_twice_with_one_dump_dir_returns_each_runs_writes_alone(airflow_db, tmp_path):
    """``SparkLineageHook(dump_dir=...)`` used for two jobs: the second's result holds its own write only."""
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.lineage.extract import from_records

    hook = SparkLineageHook(conn_id=None, dump_dir=str(tmp_path / "dumps"))
    results = [hook.run_sql(f"INSERT OVERWRITE DIRECTORY '{tmp_path / name}' USING parquet SELECT 1 AS {name};")
               for name in ("one", "two")]
    targets = [[s.target.name for s in from_records(r.records, r.warnings).statements] for r in results]
    assert targets == [[str(tmp_path / "one")], [str(tmp_path / "two")]]
    assert len(list((tmp_path / "dumps").iterdir())) == 2


def test_the_page_of_an_unknown_dag_run_or_task_is_a_404_as_its_api(airflow_db, monkeypatch):
    """The real app and metadata database (only Airflow's auth manager is a stand-in): each page answers
    what its API answers, 404 naming what does not exist."""
    from airflow.api_fastapi.core_api import security
    from airflow.models.dag import DagModel
    from fastapi.testclient import TestClient

    from airflow_lineage_provider.plugins import app as app_module
    from tests.conftest import DAGS

    class Allow:
        async def get_user_from_token(self, token):
            return type("User", (), {"get_id": lambda self: "u", "get_name": lambda self: "u"})()

        def is_authorized_dag(self, **kwargs):
            return True

    run = load_dag_module(DAGS / "lineage_test_faults.py").bad_xcoms.test()
    monkeypatch.setattr(security, "get_auth_manager", lambda: Allow())
    monkeypatch.setattr(DagModel, "get_team_name", staticmethod(lambda dag_id: None))
    client = TestClient(app_module.create_app())
    client.cookies.set("_token", "t")
    dag = "lineage_fault_xcoms"
    for path, detail in ((f"/dags/no_such_dag/runs/{run.run_id}", "no DAG 'no_such_dag'"),
                         (f"/dags/no_such_dag/runs/{run.run_id}/tasks/good", "no DAG 'no_such_dag'"),
                         (f"/dags/{dag}/runs/no_such_run", f"DAG '{dag}' has no run 'no_such_run'"),
                         (f"/dags/{dag}/runs/{run.run_id}/tasks/nope", f"run '{run.run_id}' of DAG '{dag}' has no task "
                                                                       "'nope'")):
        page, api = client.get(path), client.get("/api" + path)
        assert (page.status_code, api.status_code) == (404, 404), path
        assert api.json()["detail"] == detail
        assert html_unescape(page.text).count(detail) == 1 and "column-lineage-app" not in page.text
    for path in (f"/dags/{dag}/runs/{run.run_id}", f"/dags/{dag}/runs/{run.run_id}/tasks/good"):
        assert client.get(path).status_code == 200 and client.get("/api" + path).status_code == 200


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


# -- a JVM application under the listener: its faults cost the lineage, never the job ---------------------


@pytest.fixture(scope="module")
def jar_without_capture(tmp_path_factory, spark) -> dict[str, list]:
    """What the jar (tests/java/jvmapp) writes run by spark-submit alone, no listener: what each fault run must
    write too."""
    import os
    import subprocess

    from airflow_lineage_provider.hooks import local_spark
    from tests.rowlevel import jvm_app_jar

    out = tmp_path_factory.mktemp("jar_alone")
    proc = subprocess.run([local_spark.spark_submit(), "--master", "local[*]", "--conf", "spark.ui.enabled=false",
                           "--class", "lineagetest.WriteRange", jvm_app_jar(), str(out / "range"), str(out / "total")],
                          env={**os.environ, **local_spark.local_env()}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return jar_rows(spark, str(out))


def jar_rows(spark, out: str) -> dict[str, list]:
    return {name: sorted(tuple(r) for r in spark.read.parquet(f"{out}/{name}").collect()) for name in ("range", "total")}


@pytest.fixture
def shipped_jar(tmp_path, monkeypatch):
    """The jar the hook checks, pointed at a copy of the package's that the test may damage or remove (the
    package's own is never touched); the jar application's path for the DAG file."""
    import shutil

    from airflow_lineage_provider.hooks import jvm_listener
    from tests.rowlevel import jvm_app_jar

    monkeypatch.setenv("AIRFLOW_LINEAGE_TEST_JVM_APP", jvm_app_jar())
    jar = tmp_path / "shipped" / jvm_listener.JAR.name
    jar.parent.mkdir()
    shutil.copy(jvm_listener.JAR, jar)
    monkeypatch.setattr(jvm_listener, "JAR", jar)
    return jar


def run_jar_fault(name: str, out: str, capfd) -> tuple[object, str, dict]:
    import shutil

    from tests.dags.lineage_test_faults import JAR_FAULT_OUT

    shutil.rmtree(f"{JAR_FAULT_OUT}/{out}", ignore_errors=True)
    return run_fault_dag(name, capfd)


def said_once(printed: str, start: str) -> str:
    """The one log line holding ``start``: from there, without the log's own suffix (`` [logger] loc=...``)."""
    import re

    lines = [line for line in printed.splitlines() if start in line]
    assert len(lines) == 1, lines
    return re.sub(r"\s+\[[\w.]+\]\s+loc=\S+$", "", lines[0][lines[0].index(start):])


@pytest.mark.slow
def test_a_listener_jar_removed_after_the_check_costs_nothing(airflow_db, spark, capfd, monkeypatch, shipped_jar,
                                                             jar_without_capture):
    """The package's jar disappears (an upgrade, a cleaner) between the check and spark-submit: the run's own
    checked copy is what Spark loads, so the job and its lineage are whole."""
    from airflow_lineage_provider.hooks import jvm_listener
    from tests.dags.lineage_test_faults import JAR_FAULT_OUT

    check = jvm_listener.checked_copy

    def check_then_remove(directory: str):
        checked = check(directory)
        shipped_jar.unlink()
        return checked

    monkeypatch.setattr(jvm_listener, "checked_copy", check_then_remove)
    run, printed, docs = run_jar_fault("jar_app", "jar_app", capfd)
    assert run.state == "success" and not shipped_jar.exists()
    assert jar_rows(spark, f"{JAR_FAULT_OUT}/jar_app") == jar_without_capture
    assert [(s["method"], s["target"]["name"]) for s in docs["jar_app"]["statements"]] == [
        ("plan", f"{JAR_FAULT_OUT}/jar_app/range"), ("plan", f"{JAR_FAULT_OUT}/jar_app/total")]
    assert "No plan column lineage" not in printed


@pytest.mark.slow
def test_a_damaged_listener_jar_is_not_added_the_jar_runs_and_one_line_says_why(airflow_db, spark, capfd,
                                                                               shipped_jar, jar_without_capture):
    """Spark fails a session whose listener class cannot load: a jar that fails its check is never added."""
    from airflow_lineage_provider.hooks.jvm_listener import CLASS_ENTRIES
    from tests.dags.lineage_test_faults import JAR_FAULT_OUT
    from tests.helpers import damage_crc

    damage_crc(shipped_jar, CLASS_ENTRIES[0])
    run, printed, docs = run_jar_fault("jar_app", "jar_app", capfd)
    assert run.state == "success"
    assert jar_rows(spark, f"{JAR_FAULT_OUT}/jar_app") == jar_without_capture
    why = (f"the listener jar {shipped_jar} is damaged (its entry {CLASS_ENTRIES[0]} fails its CRC check): the "
           "application runs without the listener")
    assert docs["jar_app"]["statements"] == [] and docs["jar_app"]["warnings"] == [f"no plan lineage: {why}"]
    assert said_once(printed, "No plan column lineage:") == f"No plan column lineage: {why}"
    assert "airflow_lineage.listener" not in printed  # not in the submitted command either


@pytest.mark.slow
def test_a_dump_uri_this_worker_cannot_write_leaves_the_jar_a_local_dump(airflow_db, spark, capfd, shipped_jar,
                                                                        jar_without_capture):
    from tests.dags.lineage_test_faults import JAR_FAULT_OUT

    run, printed, docs = run_jar_fault("jar_dump_uri", "dump_uri", capfd)
    assert run.state == "success"
    assert jar_rows(spark, f"{JAR_FAULT_OUT}/dump_uri") == jar_without_capture
    [doc] = docs.values()
    warning = ("dump_uri file:///proc/airflow-lineage-forbidden cannot be written (No such file or directory): the "
               "job ran with a local plan dump instead; fix dump_uri (a directory this worker can write) for "
               "cluster mode")
    assert doc["warnings"] == [warning]
    assert [s["method"] for s in doc["statements"]] == ["plan", "plan"]  # the local dump gave the lineage
    assert said_once(printed, "dump_uri file:///proc/") == warning


@pytest.mark.slow
def test_a_dump_the_spark_driver_cannot_write_costs_the_lineage_one_line(airflow_db, spark, capfd, shipped_jar,
                                                                        jar_without_capture):
    """memory:// is fsspec's in-process file system: this worker makes the run's directory, the driver's
    Hadoop has no client for it, so the listener cannot write its dump."""
    from tests.dags.lineage_test_faults import JAR_FAULT_OUT

    run, printed, docs = run_jar_fault("jar_driver_dump", "driver_dump", capfd)
    assert run.state == "success"
    assert jar_rows(spark, f"{JAR_FAULT_OUT}/driver_dump") == jar_without_capture
    [doc] = docs.values()
    assert doc["statements"] == []
    [warning] = doc["warnings"]
    assert warning.startswith("no plan lineage: the JVM listener left no result in memory://airflow-lineage-faults/run-")
    assert warning.endswith("(it could not write there, or did not run: its warning is in the Spark driver's log)")
    assert said_once(printed, "No plan column lineage:") == "No plan column lineage: " + warning[len("no plan lineage: "):]
    assert "[airflow-lineage] warning: the plan dump memory://airflow-lineage-faults/run-" in printed  # the driver's


@pytest.mark.slow
def test_a_listener_that_throws_costs_each_write_its_lineage_not_the_job(airflow_db, spark, capfd, shipped_jar,
                                                                        jar_without_capture):
    from tests.dags.lineage_test_faults import JAR_FAULT_OUT

    run, printed, docs = run_jar_fault("jar_listener_throws", "listener_throws", capfd)
    assert run.state == "success"
    assert jar_rows(spark, f"{JAR_FAULT_OUT}/listener_throws") == jar_without_capture
    [doc] = docs.values()
    assert doc["statements"] == []
    assert len(doc["warnings"]) == 2 and all(
        w.startswith("a write's plan was not captured (") and "forced by spark.airflow.lineage.failForTest" in w
        for w in doc["warnings"]), doc["warnings"]
    # The driver's log says it once, not once per write.
    assert printed.count("[airflow-lineage] warning: a write's plan was not captured (") == 1


# -- issue 42: a user's jar that holds listener classes ----------------------------------------------------------


@pytest.fixture
def old_listener(monkeypatch) -> str:
    """The jar of an old ``airflow_lineage.listener.LineageListener`` (tests/java/oldlistener, compiled with javac),
    for the DAG file; the jar application's path too."""
    from tests.rowlevel import jvm_app_jar, old_listener_jar

    monkeypatch.setenv("AIRFLOW_LINEAGE_TEST_OLD_LISTENER_JAR", old_listener_jar())
    monkeypatch.setenv("AIRFLOW_LINEAGE_TEST_JVM_APP", jvm_app_jar())
    return old_listener_jar()


def old_copy_in(jar: str) -> str:
    """Why the listener is not added: the one sentence that names the jar and the class."""
    return (f"{jar} holds another copy of the listener's class airflow_lineage.listener.LineageListener: an older "
            "copy of the listener would be loaded and fail the run")


@pytest.mark.slow
def test_spark_fails_a_job_that_loads_the_planted_class_before_ours(old_listener, tmp_path):
    """What the check spares the user: plain spark-submit with our listener conf and the old copy ahead of our jar,
    as a hook without the check would submit it, fails the session."""
    import os
    import subprocess

    from airflow_lineage_provider.hooks import jvm_listener, local_spark
    from tests.rowlevel import jvm_app_jar

    listeners = jvm_listener.listener_conf(None, str(tmp_path / "dump"))
    conf = [arg for key, value in {**listeners, "spark.ui.enabled": "false",
                                   "spark.sql.catalogImplementation": "in-memory"}.items()
            for arg in ("--conf", f"{key}={value}")]
    proc = subprocess.run([local_spark.spark_submit(), "--master", "local[1]", *conf, "--jars",
                           f"{old_listener},{jvm_listener.JAR}", "--class", "lineagetest.WriteRange", jvm_app_jar(),
                           str(tmp_path / "range"), str(tmp_path / "total")],
                          env={**os.environ, **local_spark.local_env()}, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert ("airflow_lineage.listener.LineageListener is not a subclass of "
            "org.apache.spark.sql.util.QueryExecutionListener") in proc.stderr
    assert not (tmp_path / "range").exists()


@pytest.mark.slow
def test_an_old_listener_class_in_the_application_jar_costs_the_lineage_one_line_not_the_job(
        airflow_db, spark, capfd, old_listener, monkeypatch, jar_without_capture):
    """The issue's sample: the user's fat jar holds an old shaded copy of the listener class."""
    from tests.dags.lineage_test_faults import JAR_FAULT_OUT
    from tests.rowlevel import jvm_app_with_old_listener

    monkeypatch.setenv("AIRFLOW_LINEAGE_TEST_JVM_APP", jvm_app_with_old_listener())
    run, printed, docs = run_jar_fault("jar_app", "jar_app", capfd)
    assert run.state == "success"
    assert jar_rows(spark, f"{JAR_FAULT_OUT}/jar_app") == jar_without_capture
    why = f"{old_copy_in(jvm_app_with_old_listener())}: the application runs without the listener"
    assert docs["jar_app"]["statements"] == [] and docs["jar_app"]["warnings"] == [f"no plan lineage: {why}"]
    assert said_once(printed, "No plan column lineage:") == f"No plan column lineage: {why}"
    assert "queryExecutionListeners" not in printed and "is not a subclass" not in printed


@pytest.mark.slow
def test_an_old_listener_class_in_a_stock_tasks_jars_dependency_costs_the_lineage_not_the_job(
        airflow_db, spark, capfd, old_listener, jar_without_capture):
    """The stock SparkSubmitOperator, adopted under the option, with the old copy in its ``jars``."""
    from tests.dags.lineage_test_faults import JAR_FAULT_OUT
    from tests.integration.test_stock_operators import stock_option

    with stock_option(True):
        run, printed, docs = run_jar_fault("stock_jar_copy", "stock_copy", capfd)
    assert run.state == "success"
    assert jar_rows(spark, f"{JAR_FAULT_OUT}/stock_copy") == jar_without_capture
    why = f"{old_copy_in(old_listener)}: the application runs without the listener"
    assert docs["stock_copy_in_jars"]["statements"] == []
    assert docs["stock_copy_in_jars"]["warnings"] == [f"no plan lineage: {why}"]
    assert said_once(printed, "No plan column lineage:") == f"No plan column lineage: {why}"


@pytest.mark.slow
def test_a_byte_identical_copy_of_the_listener_in_spark_jars_is_no_conflict_the_lineage_works(
        airflow_db, spark, capfd, monkeypatch, tmp_path, jar_without_capture):
    """A jar that vendors this very release's listener: Spark may load either copy, both are ours."""
    import shutil

    from airflow_lineage_provider.hooks import jvm_listener
    from tests.dags.lineage_test_faults import JAR_FAULT_OUT
    from tests.rowlevel import jvm_app_jar

    vendored = tmp_path / "vendored-lineage.jar"
    shutil.copy(jvm_listener.JAR, vendored)
    monkeypatch.setenv("AIRFLOW_LINEAGE_TEST_OLD_LISTENER_JAR", str(vendored))
    monkeypatch.setenv("AIRFLOW_LINEAGE_TEST_JVM_APP", jvm_app_jar())
    run, printed, docs = run_jar_fault("jar_copy_in_spark_jars", "copy_in_spark_jars", capfd)
    assert run.state == "success"
    assert jar_rows(spark, f"{JAR_FAULT_OUT}/copy_in_spark_jars") == jar_without_capture
    doc = docs["copy_in_spark_jars"]
    assert doc.get("warnings", []) == []
    assert [(s["method"], s["target"]["name"]) for s in doc["statements"]] == [
        ("plan", f"{JAR_FAULT_OUT}/copy_in_spark_jars/range"), ("plan", f"{JAR_FAULT_OUT}/copy_in_spark_jars/total")]
    assert "No plan column lineage" not in printed


@pytest.mark.slow
def test_the_cli_runs_a_jar_whose_spark_jars_hold_the_old_class_without_the_listener(old_listener, spark, tmp_path,
                                                                                   jar_without_capture):
    """``airflow-lineage extract --app``: the same check, the same sentence on stderr, the jar's own output."""
    import json
    import os
    import subprocess

    from tests.conftest import venv_bin
    from tests.rowlevel import jvm_app_jar

    out = tmp_path / "out"
    proc = subprocess.run([venv_bin("airflow-lineage"), "extract", "--app", jvm_app_jar(), "--class",
                           "lineagetest.WriteRange", "--format", "json", "--conf", f"spark.jars={old_listener}",
                           "--conf", "spark.sql.catalogImplementation=in-memory", "--", str(out / "range"),
                           str(out / "total")], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "AIRFLOW_LINEAGE_LOCAL_DIR": str(tmp_path / "state")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert jar_rows(spark, str(out)) == jar_without_capture
    assert [line for line in proc.stderr.splitlines() if line.startswith("airflow-lineage:")] == [
        f"airflow-lineage: no plan lineage: {old_copy_in(old_listener)}: the application ran without the listener"]
    assert json.loads(proc.stdout)["statements"] == []


# -- issue 42: credentials that are not names -------------------------------------------------------------------

NOT_NAMES_SQL = (
    f"SET spark.hadoop.fs.s3a.secret.key=\n  {PLANTED};\n"
    "CREATE TEMPORARY VIEW api USING json OPTIONS (\n"
    f"  path 's3a://b/in.json?X-Amz-Credential={PLANTED}%2F2026&X-Amz-Security-Token={PLANTED}"
    f"&X-Amz-Signature={PLANTED}',\n"
    f"  headers \"Authorization: Basic {PLANTED}\", authorization 'Bearer {PLANTED}',\n"
    f"  'http.header.Authorization' = 'Basic {PLANTED}', key '{PLANTED}');\n"
    f"CREATE TABLE t (a INT) USING parquet LOCATION '/data/t?x=1&password={PLANTED}/ü'\n"
    f"  TBLPROPERTIES ('aws.secret' = '{PLANTED}', 'owner' = 'etl');\n"
    f"CREATE TABLE api_out USING json OPTIONS (headers 'Authorization: Basic {PLANTED}', authorization \"Bearer {PLANTED}\",\n"
    f"  'http.header.Authorization' = 'Basic {PLANTED}', key '{PLANTED}', 'sas.token' = '{PLANTED}')\n"
    f"  LOCATION 'gs://b/out?X-Goog-Credential={PLANTED}&X-Goog-Signature={PLANTED}/part' AS SELECT a FROM t;\n"
    f"INSERT INTO t SELECT a FROM parquet.`https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig={PLANTED}`;\n"
    f"INSERT INTO t SELECT a FROM parquet.`/data/in&access_token={PLANTED}/dt=2026-01-01`;\n"
)


def test_extract_shows_no_credential_that_is_not_a_name_in_the_sql_or_the_dataset_names():
    """`airflow-lineage extract --method sql` as a user runs it (a subprocess, no JVM): pre-signed URLs' signatures,
    credentials and tokens, Authorization headers under any option name, secret property keys, a SET value on the
    next line and a password in a path's directory are masked in the statements and in every dataset name, and a
    path keeps its directories (each name is the path it was, its secret masked in place)."""
    import subprocess

    from tests.conftest import venv_bin

    runs = [subprocess.run([venv_bin("airflow-lineage"), "extract", "--method", "sql", "-e", NOT_NAMES_SQL, *fmt],
                           capture_output=True, text=True, timeout=120) for fmt in (["--format", "json"], [])]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert_no_secret(*(proc.stdout + proc.stderr for proc in runs))
    doc = json.loads(runs[0].stdout)
    sql = "\n".join(st["sql"] for st in doc["statements"])
    for kept in ("headers 'Authorization: ***'", 'authorization "***"', "'http.header.Authorization' = '***'",
                 "key '***'", "'sas.token' = '***'", "sig=***`"):
        assert kept in sql, (kept, sql)
    names = {(d["namespace"], d["name"]) for st in doc["statements"]
             for d in [*([st["target"]] if st.get("target") else []), *st.get("inputs", [])]}
    assert {("file", "/data/t?x=1&password=***/ü"), ("gs://b", "out?X-Goog-Credential=***&X-Goog-Signature=***/part"),
            ("https://acct.blob.core.windows.net", "/c/f?sv=2022-11-02&sig=***"),
            ("file", "/data/in&access_token=***/dt=2026-01-01")} <= names, names
    assert "/data/in&access_token=***/dt=2026-01-01.a" in runs[1].stdout


@pytest.mark.slow
def test_a_stock_submit_hides_each_secret_flags_value_and_names_a_secret_path_once_masked(airflow_db, spark, tmp_path,
                                                                                         capfd, monkeypatch):
    """A stock SparkSubmitOperator under the stock option: its logged command keeps the flags and hides their values
    (the Spark provider's masker took "JARARGSECRET9" for a key and hid the flag after it), and the path it writes,
    a password in one of its directories, is one name with the password masked in the log, XCom, OpenLineage, the
    asset event and the UI; the asset names that directory, not a cut one."""
    import shutil
    from urllib.parse import quote

    from tests.dags.lineage_test_secrets import OUT, STOCK_PATH
    from tests.integration.test_example_dag import asset_events
    from tests.integration.test_stock_operators import stock_option

    shutil.rmtree(f"{OUT}_stock", ignore_errors=True)
    with stock_option(True):
        run, printed, events, docs = run_secret_dag("stock_args", tmp_path, capfd)
    assert run.state == "success"
    assert sorted(tuple(r) for r in spark.read.parquet(STOCK_PATH).collect()) == \
        [(0, 0), (1, 1), (2, 4), (3, 9)]  # written where the path says (its "?" a glob matching itself)
    [command] = [line for line in printed.splitlines() if "Spark-Submit cmd:" in line and "squares.py" in line]
    assert "JARARGSECRET9 --db-password *** --password=*** --token ***" in command, command
    assert "spark.hadoop.fs.s3a.secret.key=******" in command
    name = STOCK_PATH.replace(PLANTED, "***")
    [statement] = docs["secret_in_args"]["statements"]
    assert (statement["target"]["namespace"], statement["target"]["name"]) == ("file", name)
    [complete] = [e for e in events if e["eventType"] == "COMPLETE" and e["job"]["name"].endswith(".secret_in_args")]
    assert [(o["namespace"], o["name"]) for o in complete["outputs"]] == [("file", name)]
    assets = asset_events("lineage_secrets_stock_args", run.run_id)
    assert [a for a in assets if a[0] == "secret_in_args"] == [("secret_in_args", "file://" + quote(name, safe="/!$&'()*+,;=:@"))]
    answers = api_answers("lineage_secrets_stock_args", run.run_id, "secret_in_args", monkeypatch)
    rendered = rendered_fields("lineage_secrets_stock_args", run.run_id, "secret_in_args")
    assert "--db-password" in json.dumps(rendered["application_args"]), rendered  # the UI's Rendered Template
    assert "spark.hadoop.fs.s3a.secret.key" in json.dumps(rendered["conf"]), rendered
    sql = rendered_fields("lineage_secrets_stock_args", run.run_id, "secret_in_stock_sql")
    assert "SET spark.some.password" in sql["sql"], sql  # its only templated field
    [written] = docs["secret_in_stock_sql"]["statements"]
    assert written["target"]["name"] == f"{OUT}_stock_sql"
    assert_no_secret(printed, events, docs, list(assets.items()), *answers, rendered, sql)


def rendered_fields(dag_id: str, run_id: str, task_id: str) -> dict:
    """What Airflow keeps of a task's rendered template fields (the UI's Rendered Template tab)."""
    from airflow.models.renderedtifields import RenderedTaskInstanceFields
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return session.scalars(select(RenderedTaskInstanceFields.rendered_fields).where(
            RenderedTaskInstanceFields.dag_id == dag_id, RenderedTaskInstanceFields.run_id == run_id,
            RenderedTaskInstanceFields.task_id == task_id)).one()
