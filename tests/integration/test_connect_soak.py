"""A shared Spark Connect server stays bounded (issue 42), on a real server whose admin set small bounds.

1,000 keys that write and never send their barrier (tasks killed mid-block) and 200 tasks that do, on one
server: while the orphans wait they hold no thread and no open file of the server's, the tasks each get
exactly their own write, a client with no key runs its jobs throughout, and once the orphans expire the
server's threads, open files and base are back where they started. Then the server dies after a task's
last write: the task's waits end at its own timeout, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

from airflow_lineage_provider.hooks import spark_connect
from airflow_lineage_provider.hooks.jvm_listener import IDLE_TIMEOUT_CONF, KEY_CONF, MAX_KEYS_CONF
from tests.integration.test_spark_connect import (
    _classic_env_restored,  # noqa: F401 - autouse: env put back
    document,
    serving,
    session,
    target_of,
    until,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]

IDLE_S, MAX_KEYS = 10, 200
# The soak's server keeps its catalog in memory: a Hive session state per client session would make the
# thousand sessions cost a minute more, and the bounds under test are the listener's, not the catalog's.
SOAK_CONF = {IDLE_TIMEOUT_CONF: str(IDLE_S), MAX_KEYS_CONF: str(MAX_KEYS),
             "spark.sql.catalogImplementation": "in-memory"}
ORPHANS, TASKS, TASK_THREADS = 1000, 200, 4
SLACK = 40  # threads and files a JVM opens or ends on its own between two looks (Spark's pools, jars)


@pytest.fixture(scope="module")
def soak_server(tmp_path_factory):
    """(the server's JVM process, sc:// URL, base, log): the admin's bounds set small."""
    with serving(tmp_path_factory.mktemp("connect-soak"), conf=SOAK_CONF) as (proc, url, base, log):
        yield jvm_of(proc.pid), url, base, log


def jvm_of(pid: int) -> psutil.Process:
    """The server's JVM: spark-submit execs it, else it is a child."""
    process = psutil.Process(pid)
    for candidate in (process, *process.children(recursive=True)):
        if "SparkConnectServer" in " ".join(candidate.cmdline()):
            return candidate
    raise AssertionError(f"no SparkConnectServer JVM under {pid}")


def held(jvm: psutil.Process, base: Path) -> tuple[int, int, int]:
    """What a key could hold of the server: the listener's threads, its files open under the base, and all
    the server's open files. (Spark's own pools grow with a thousand sessions, with or without the listener,
    and shrink a minute later: counted apart, they would hide nothing and prove nothing.)"""
    dump = subprocess.run(["jcmd", str(jvm.pid), "Thread.print"], capture_output=True, text=True, check=True).stdout
    ours = sum(1 for line in dump.splitlines() if line.startswith('"airflow-lineage'))
    under_base = sum(1 for f in jvm.open_files() if f.path.startswith(str(base)))
    return ours, under_base, jvm.num_fds()


def files_in(base: Path) -> list[str]:
    """The files under the base now (os.walk passes over a directory removed while it looks)."""
    return [os.path.join(d, f) for d, _, files in os.walk(base) for f in files]


def orphans(url: str, first: int, count: int) -> None:
    """``count`` tasks killed between a write and their barrier: a session, its key, one write, gone."""
    for n in range(first, first + count):
        spark = session(url)
        try:
            spark.sql(f"SET {KEY_CONF}=soak/orphan/{n}/1-{os.urandom(4).hex()}")
            spark.sql(f"CREATE VIEW soak.orphan_{n + 100} AS SELECT n FROM soak.sink")  # a write: captured
        finally:
            spark.stop()


def tasks(spark, base: Path, numbers: range, results: dict) -> None:
    """Tasks one after another on one session, each with its key, one write and its barrier."""
    for n in numbers:
        key = f"soak/task/{n}/1-{os.urandom(4).hex()}"
        secret = spark_connect.start(spark, key)
        spark.sql(f"CREATE VIEW soak.task_{n + 100} AS SELECT n FROM soak.sink")
        results[n] = spark_connect.finish(spark, str(base), key, secret=secret, timeout=120)


def plain_jobs(spark, stop: threading.Event, ran: list) -> None:
    """Another tenant's jobs with no key, throughout: each must succeed."""
    while not stop.is_set():
        spark.sql("INSERT INTO soak.plain SELECT id FROM range(10)")
        ran.append(spark.sql("SELECT count(*) FROM soak.plain").collect()[0][0])
        stop.wait(1)


@pytest.fixture(scope="module")
def soak(soak_server):
    jvm, url, base, _ = soak_server
    admin = session(url)
    admin.sql("CREATE DATABASE soak")
    for table in ("sink", "plain"):
        admin.sql(f"CREATE TABLE soak.{table} (n BIGINT) USING parquet")
    # Warm: the server's pools and jars as a soak leaves them, then the baseline once those keys expired.
    orphans(url, -20, 20)
    warm: dict = {}
    tasks(admin, base, range(-TASK_THREADS, 0), warm)
    until(lambda: not files_in(base), "the warm-up keys' expiry", limit=IDLE_S * 6)
    baseline = held(jvm, base)

    sessions = [session(url) for _ in range(TASK_THREADS)]
    plain = session(url)
    results: dict = {}
    ran: list = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def guarded(step, *args):
        try:
            step(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised in the test
            errors.append(e)

    workers = [threading.Thread(target=guarded, args=(tasks, spark, base, range(t, TASKS, TASK_THREADS), results))
               for t, spark in enumerate(sessions)]
    other = threading.Thread(target=guarded, args=(plain_jobs, plain, stop, ran))
    for worker in (*workers, other):
        worker.start()
    guarded(orphans, url, 0, ORPHANS)  # here: the Connect builder keeps class-wide state no thread may race on
    # The orphans are all still open (the last ones well within their idle time), the tasks perhaps running;
    # an expired key's thread ends two seconds after its last step.
    waiting = until(lambda: (h := held(jvm, base))[0] <= 1 + TASK_THREADS and h, "the listener's threads settling",
                    limit=IDLE_S / 2)
    for worker in workers:
        worker.join(600)
    stop.set()
    other.join(120)
    leftover = len(files_in(base))
    until(lambda: not files_in(base), "the orphans' expiry", limit=IDLE_S * 6)
    after = until(lambda: (h := held(jvm, base))[0] <= 1 and h, "the listener's threads ending", limit=30)
    for spark in (*sessions, plain, admin):
        spark.stop()
    return {"baseline": baseline, "waiting": waiting, "after": after, "results": results, "ran": ran,
            "errors": errors, "leftover": leftover}


def test_keys_that_never_send_their_barrier_hold_no_thread_or_file_and_expire(soak):
    assert not soak["errors"], soak["errors"][:3]
    (threads0, base0, files0), waiting, after = soak["baseline"], soak["waiting"], soak["after"]
    assert threads0 <= 1 + TASK_THREADS and base0 == 0, soak["baseline"]
    # A thousand open keys: no thread and no open file each (the listener held one of each per key before).
    assert waiting[0] <= threads0 + 1 + TASK_THREADS and waiting[1] == 0, (soak["baseline"], waiting)
    assert waiting[2] <= files0 + SLACK, (soak["baseline"], waiting)
    # The cap kept at most MAX_KEYS keys' files in the base; expiry emptied it.
    assert 0 < soak["leftover"] <= MAX_KEYS
    assert after[0] <= 1 and after[1] == 0 and after[2] <= files0 + SLACK, (soak["baseline"], after)


def test_tasks_beside_a_thousand_orphans_each_get_exactly_their_write(soak):
    results = soak["results"]
    assert sorted(results) == list(range(TASKS))
    for n, result in results.items():
        assert result.warnings == [], (n, result.warnings)
        assert [target_of(s) for s in document(result)["statements"]] == [f"spark_catalog.soak.task_{n + 100}"]


def test_another_tenants_jobs_with_no_key_never_failed(soak):
    assert not soak["errors"]
    assert len(soak["ran"]) >= 2 and soak["ran"] == sorted(soak["ran"])  # each insert landed, none failed


TASK_OF_A_DYING_SERVER = """
import json, os, sys
from pyspark.sql import SparkSession
from airflow_lineage_provider.hooks import session_capture, spark_connect
url, base = sys.argv[1:3]
spark = SparkSession.builder.remote(url).create()
key = "soak/dies/run/1-" + os.urandom(4).hex()
secret = spark_connect.start(spark, key)
spark.sql("INSERT INTO soak.sink VALUES (-1)")
print("written", flush=True)
sys.stdin.readline()  # the server is killed meanwhile
result = spark_connect.finish(spark, base, key, secret=secret, timeout=8)
capture, why = session_capture.begin(spark, "soak/later/run/1-x", timeout=8)
print(json.dumps({"records": result.records, "warnings": result.warnings, "capture": capture is not None,
                  "why": why}), flush=True)
os._exit(0)  # the Connect client would retry the dead server at exit for ten minutes more
"""


def test_a_server_that_dies_after_the_last_write_costs_the_task_its_timeout_not_more(soak, soak_server):
    """Killed after the write: the barrier's wait ends at the task's timeout (the Connect client alone would
    retry for ten minutes), and a capture begun on the dead server gives up as soon, saying why. The task is
    a process of its own, as in Airflow: its client is left retrying when it ends."""
    jvm, url, base, _ = soak_server
    task = subprocess.Popen([sys.executable, "-c", TASK_OF_A_DYING_SERVER, url, str(base)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert task.stdout.readline().strip() == "written"
        jvm.kill()
        jvm.wait(60)
        task.stdin.write("go\n")
        task.stdin.flush()
        answer = json.loads(task.stdout.readline() or "null")
    finally:
        task.kill()
        task.wait()
    assert answer["records"] == [] and not answer["capture"]
    assert answer["warnings"] == ["no plan lineage: the Spark Connect server did not answer the lineage barrier "
                                  "within 8 s (is it still running and reachable?)"]
    assert answer["why"] == ("the Spark Connect server did not answer the lineage settings' read within 8 s (is it "
                             "still running and reachable?)")
