"""What plan capture costs a real job: the same multi-statement Spark SQL job with and without it.

Runs the job with spark-submit on local Spark, alternating capture on and off,
each run in a fresh warehouse, and prints the wall-time ratio (whole spark-submit,
and the driver's own statement time, which leaves out the equal JVM start).

    python bench/capture_overhead.py [--rounds 3] [--rows 20000000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from common import ROOT  # noqa: F401  (puts the project on sys.path)

from airflow_lineage_provider.hooks import local_spark
from airflow_lineage_provider.job import command

JOB = """
CREATE TABLE src USING parquet AS
  SELECT id, id % 1000 AS k, rand(7) * 1000 AS v, concat('name-', id % 50000) AS name,
         date_add(DATE '2024-01-01', CAST(id % 365 AS INT)) AS day
  FROM range(0, {rows});
CREATE TABLE dim USING parquet AS SELECT id AS k, concat('dept-', id) AS dname, id % 7 AS region FROM range(0, 1000);
CREATE TABLE daily USING parquet AS
  SELECT s.day, d.region, sum(s.v) AS total, count(*) AS n, count(DISTINCT s.name) AS names
  FROM src s JOIN dim d ON s.k = d.k GROUP BY s.day, d.region;
CREATE TABLE ranked USING parquet AS
  SELECT k, name, v, rank() OVER (PARTITION BY k ORDER BY v DESC) AS r FROM src WHERE id % 4 = 0;
CREATE TABLE daily_adjusted USING parquet AS
  SELECT day, region, total * 1.1 AS total, n, names FROM daily WHERE n > 0;
CREATE TABLE top USING parquet AS
  SELECT r.k, d.dname, max(r.v) AS best, upper(min(r.name)) AS first_name
  FROM ranked r JOIN dim d ON r.k = d.k WHERE r.r <= 3 GROUP BY r.k, d.dname;
INSERT INTO top SELECT k, dname, best, lower(first_name) FROM top;
SELECT count(*) FROM top
"""


def run(rows: int, capture: bool) -> tuple[float, float]:
    """(wall seconds of spark-submit, driver's statement seconds)."""
    dump = tempfile.mkdtemp(prefix="bench-capture-")
    state = tempfile.mkdtemp(prefix="bench-state-")
    try:
        with open(os.path.join(dump, "script.sql"), "w") as f:
            f.write(JOB.format(rows=rows))
        args = command.arguments(dump, no_capture=not capture)
        cmd = local_spark.submit_command("local[2]", local_spark.local_conf(state), local_spark.DRIVER, args)
        start = time.perf_counter()
        subprocess.run(cmd, env={**os.environ, **local_spark.local_env()}, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        with open(os.path.join(dump, "result.json")) as f:
            result = json.load(f)
        if capture:
            with open(os.path.join(dump, "plans.jsonl")) as f:
                assert sum(1 for _ in f) >= 7, "every write captured"
        return wall, float(result["elapsed_s"])
    finally:
        shutil.rmtree(dump, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=5_000_000)
    args = ap.parse_args()
    on: list[tuple[float, float]] = []
    off: list[tuple[float, float]] = []
    for i in range(args.rounds):
        for capture in ((True, False) if i % 2 == 0 else (False, True)):
            wall, stmts = run(args.rows, capture)
            (on if capture else off).append((wall, stmts))
            print(f"round {i + 1} capture={'on ' if capture else 'off'} wall {wall:6.1f} s  statements {stmts:6.1f} s",
                  flush=True)
    wall_on, wall_off = (statistics.median(w for w, _ in xs) for xs in (on, off))
    st_on, st_off = (statistics.median(s for _, s in xs) for xs in (on, off))
    print(f"\nmedian wall: capture on {wall_on:.1f} s, off {wall_off:.1f} s, ratio {wall_on / wall_off:.3f} "
          f"({(wall_on / wall_off - 1) * 100:+.1f}%)")
    print(f"median statement time: on {st_on:.1f} s, off {st_off:.1f} s, ratio {st_on / st_off:.3f} "
          f"({(st_on / st_off - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
