"""What column lineage costs a Spark Connect task: the same job through one Connect server, captured or not.

Starts a Spark Connect server from the pyspark wheel with the line ``airflow-lineage connect-server-conf``
prints, then runs the job as a client in turns: ``off`` (the session names no key: the listener ignores it)
and ``keyed`` (the session's key set, the job, the barrier and the read of the key's records, as an
``@task.pyspark`` task does), each round in its own database. Prints the wall time of each, the ratio
keyed/off, and the barrier's own wait (from ``SET`` to the records read). No peer captures Spark Connect,
so the ratio is against the same job uncaptured.

    python bench/connect_overhead.py [--rounds 5] [--rows 2000000]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from common import ROOT  # noqa: F401  (puts the project on sys.path)

from airflow_lineage_provider.hooks import local_spark, spark_connect
from airflow_lineage_provider.lineage.extract import from_records

JOB = [
    "CREATE TABLE {db}.src USING parquet AS SELECT id, id % 1000 AS k, rand(7) * 1000 AS v, "
    "concat('name-', id % 50000) AS name FROM range(0, {rows})",
    "CREATE TABLE {db}.dim USING parquet AS SELECT id AS k, concat('dept-', id) AS dname, id % 7 AS region "
    "FROM range(0, 1000)",
    "CREATE TABLE {db}.daily USING parquet AS SELECT d.region, sum(s.v) AS total, count(*) AS n "
    "FROM {db}.src s JOIN {db}.dim d ON s.k = d.k GROUP BY d.region",
    "CREATE TABLE {db}.ranked USING parquet AS SELECT k, name, v, rank() OVER (PARTITION BY k ORDER BY v DESC) AS r "
    "FROM {db}.src WHERE id % 4 = 0",
    "INSERT INTO {db}.daily SELECT region, total * 1.1, n FROM {db}.daily WHERE n > 0",
]


def start_server(tmp: str) -> tuple[subprocess.Popen, str, str]:
    from pyspark.sql import SparkSession

    base = os.path.join(tmp, "base")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    printed = subprocess.run([os.path.join(os.path.dirname(sys.executable), "airflow-lineage"), "connect-server-conf",
                              "--dump", base, "--port", str(port)], capture_output=True, text=True, check=True).stdout
    cmd = shlex.split(printed)
    cmd[0] = local_spark.spark_submit()
    for key, value in local_spark.local_conf(os.path.join(tmp, "state")).items():
        cmd[1:1] = ["--conf", f"{key}={value}"]
    cmd[1:1] = ["--master", "local[2]"]
    log = open(os.path.join(tmp, "server.log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **local_spark.local_env()})
    url = f"sc://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            probe = SparkSession.builder.remote(url).create()
            probe.sql("SELECT 1").collect()
            probe.stop()
            return proc, url, base
        except Exception:  # noqa: BLE001 - not listening yet
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the Connect server did not start; see {tmp}/server.log") from None
            time.sleep(1)


def run(url: str, base: str, rows: int, keyed: bool) -> tuple[float, float, int]:
    """(the job's wall seconds incl. the barrier and read, the barrier's own seconds, statements captured)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(url).create()
    db = f"b{uuid.uuid4().hex[:8]}"
    try:
        spark.sql(f"CREATE DATABASE {db}")
        key = f"bench/{db}/1-x"
        start = time.perf_counter()
        if keyed:
            secret = spark_connect.start(spark, key)
        for statement in JOB:
            spark.sql(statement.format(db=db, rows=rows))
        barrier, captured = 0.0, 0
        if keyed:
            before = time.perf_counter()
            result = spark_connect.finish(spark, base, key, secret=secret)
            barrier = time.perf_counter() - before
            assert not result.warnings, result.warnings
            captured = len(from_records(result.records).statements)
        wall = time.perf_counter() - start
        spark.sql(f"DROP DATABASE {db} CASCADE")
        return wall, barrier, captured
    finally:
        spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=2_000_000)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-connect-")
    proc, url, base = start_server(tmp)
    try:
        run(url, base, args.rows, keyed=True)  # warm-up: the JVM's first queries are slower
        times: dict[str, list[float]] = {"off": [], "keyed": []}
        barriers: list[float] = []
        for i in range(args.rounds):
            for mode in ("off", "keyed") if i % 2 == 0 else ("keyed", "off"):  # in turns, each first half the time
                wall, barrier, captured = run(url, base, args.rows, keyed=mode == "keyed")
                times[mode].append(wall)
                if mode == "keyed":
                    barriers.append(barrier)
                    assert captured == len(JOB), captured
        off, keyed = statistics.median(times["off"]), statistics.median(times["keyed"])
        print(f"job: {len(JOB)} writes over {args.rows:,} rows, {args.rounds} rounds each, one Connect server")
        print(f"off    median {off:.3f} s  (min {min(times['off']):.3f}, max {max(times['off']):.3f})")
        print(f"keyed  median {keyed:.3f} s  (min {min(times['keyed']):.3f}, max {max(times['keyed']):.3f})")
        wait = statistics.median(barriers) * 1000
        print(f"keyed/off: {keyed / off:.3f}x; the barrier and read: median {wait:.0f} ms "
              f"(max {max(barriers) * 1000:.0f} ms)")
    finally:
        proc.terminate()
        proc.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
