"""A shared Spark Connect server stays bounded (issue 42), on a real server whose admin set small bounds.

1,000 keys that write and never send their barrier (tasks killed mid-block) and 200 tasks that do, on one
server: while the orphans wait they hold no thread and no open file of the server's, the tasks each get
exactly their own write, a client with no key runs its jobs throughout, and once the orphans expire the
server's threads, open files and base are back where they started. Then the server dies after a task's
last write: the task's waits end at its own timeout, saying why.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import psutil
import pytest

from airflow_lineage_provider.hooks import session_capture, spark_connect
from airflow_lineage_provider.hooks.jvm_listener import IDLE_TIMEOUT_CONF, KEY_CONF, MAX_KEYS_CONF
from tests.integration.test_spark_connect import (
    _connect_ready,
    document,
    session,
    start_server,
    stop_server,
    target_of,
    until,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]

IDLE_S, MAX_KEYS = 10, 200
ORPHANS, TASKS, TASK_THREADS = 1000, 200, 4
SLACK = 40  # threads and files a JVM opens or ends on its own between two looks (Spark's pools, jars)


@pytest.fixture(scope="module")
def soak_server(tmp_path_factory):
    """(the server's JVM process, sc:// URL, base, log): the admin's bounds set small."""
    why = _connect_ready()
    if why:
        pytest.skip(why)
    proc, url, base, log = start_server(tmp_path_factory.mktemp("connect-soak"),
                                        conf={IDLE_TIMEOUT_CONF: str(IDLE_S), MAX_KEYS_CONF: str(MAX_KEYS)})
    try:
        yield jvm_of(proc.pid), url, base, log
    finally:
        stop_server(proc)


def jvm_of(pid: int) -> psutil.Process:
    """The server's JVM: spark-submit execs it, else it is a child."""
    process = psutil.Process(pid)
    for candidate in (process, *process.children(recursive=True)):
        if "SparkConnectServer" in " ".join(candidate.cmdline()):
            return candidate
    raise AssertionError(f"no SparkConnectServer JVM under {pid}")


def held(jvm: psutil.Process) -> tuple[int, int]:
    """The server's threads and open files."""
    return jvm.num_threads(), jvm.num_fds()


def files_in(base: Path) -> list[Path]:
    return [p for p in base.rglob("*") if p.is_file()] if base.exists() else []


def orphans(url: str, first: int, count: int) -> None:
    """``count`` tasks killed between a write and their barrier: a session, its key, one write, gone."""
    for n in range(first, first + count):
        spark = session(url)
        try:
            spark.sql(f"SET {KEY_CONF}=soak/orphan/{n}/1-{os.urandom(4).hex()}")
            spark.sql(f"INSERT INTO soak.sink VALUES ({n})")
        finally:
            spark.stop()


def tasks(spark, base: Path, numbers: range, results: dict) -> None:
    """Tasks one after another on one session, each with its key, one write and its barrier."""
    for n in numbers:
        key = f"soak/task/{n}/1-{os.urandom(4).hex()}"
        secret = spark_connect.start(spark, key)
        spark.sql(f"INSERT INTO soak.mine_{n % TASK_THREADS} VALUES ({n})")
        results[n] = spark_connect.finish(spark, str(base), key, secret=secret, timeout=120)


def plain_jobs(spark, stop: threading.Event, ran: list) -> None:
    """Another tenant's jobs with no key, throughout: each must succeed."""
    while not stop.is_set():
        spark.sql("INSERT INTO soak.plain SELECT id FROM range(10)")
        ran.append(spark.sql("SELECT count(*) FROM soak.plain").collect()[0][0])


@pytest.fixture(scope="module")
def soak(soak_server):
    jvm, url, base, _ = soak_server
    admin = session(url)
    admin.sql("CREATE DATABASE soak")
    for table in ("sink", "plain", *(f"mine_{t}" for t in range(TASK_THREADS))):
        admin.sql(f"CREATE TABLE soak.{table} (n BIGINT) USING parquet")
    # Warm: the server's pools and jars as a soak leaves them, then the baseline once those keys expired.
    orphans(url, -20, 20)
    warm: dict = {}
    tasks(admin, base, range(-TASK_THREADS, 0), warm)
    until(lambda: not files_in(base), "the warm-up keys' expiry", limit=IDLE_S * 6)
    baseline = held(jvm)

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
    waiting = held(jvm)  # the orphans are all still open, the tasks perhaps still running
    for worker in workers:
        worker.join(600)
    stop.set()
    other.join(120)
    leftover = len(files_in(base))
    until(lambda: not files_in(base), "the orphans' expiry", limit=IDLE_S * 6)
    after = held(jvm)
    for spark in (*sessions, plain, admin):
        spark.stop()
    return {"baseline": baseline, "waiting": waiting, "after": after, "results": results, "ran": ran,
            "errors": errors, "leftover": leftover}


def test_keys_that_never_send_their_barrier_hold_no_thread_or_file_and_expire(soak):
    assert not soak["errors"], soak["errors"][:3]
    (threads0, files0), (threads1, files1), (threads2, files2) = soak["baseline"], soak["waiting"], soak["after"]
    # A thousand open keys: no thread or file each (the listener held one of each per key before).
    assert threads1 <= threads0 + SLACK and files1 <= files0 + SLACK, (soak["baseline"], soak["waiting"])
    # The cap kept at most MAX_KEYS keys' files in the base; expiry emptied it.
    assert 0 < soak["leftover"] <= MAX_KEYS
    assert threads2 <= threads0 + SLACK and files2 <= files0 + SLACK, (soak["baseline"], soak["after"])


def test_tasks_beside_a_thousand_orphans_each_get_exactly_their_write(soak):
    results = soak["results"]
    assert sorted(results) == list(range(TASKS))
    for n, result in results.items():
        assert result.warnings == [], (n, result.warnings)
        assert [target_of(s) for s in document(result)["statements"]] == [f"spark_catalog.soak.mine_{n % TASK_THREADS}"]


def test_another_tenants_jobs_with_no_key_never_failed(soak):
    assert not soak["errors"]
    assert len(soak["ran"]) >= 2 and soak["ran"] == sorted(soak["ran"])  # each insert landed, none failed


def test_a_server_that_dies_after_the_last_write_costs_the_task_its_timeout_not_more(soak, soak_server):
    """Killed after the write: the barrier's wait ends at the task's timeout (the Connect client alone would
    retry for ten minutes), and a capture begun on the dead server gives up as soon, saying why."""
    jvm, url, base, _ = soak_server
    spark = session(url)
    key = f"soak/dies/run/1-{os.urandom(4).hex()}"
    secret = spark_connect.start(spark, key)
    spark.sql("INSERT INTO soak.sink VALUES (-1)")
    jvm.kill()
    jvm.wait(60)
    result = spark_connect.finish(spark, str(base), key, secret=secret, timeout=8)
    assert result.records == []
    assert result.warnings == ["no plan lineage: the Spark Connect server did not answer the lineage barrier within "
                               "8 s (is it still running and reachable?)"]
    capture, why = session_capture.begin(spark, "soak/later/run/1-x", timeout=8)
    assert capture is None
    assert why == ("the Spark Connect server did not answer the lineage settings' read within 8 s (is it still "
                   "running and reachable?)")
