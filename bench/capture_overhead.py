"""What plan capture costs a real job: the same multi-statement Spark SQL job with and without it.

Runs the job with spark-submit on local Spark three ways, in turns: no capture, the Python driver's
py4j capture, and the JVM listener (``job/listener``, the driver's own capture off), each run in a
fresh warehouse, and prints each capture's wall-time ratio against no capture (whole spark-submit,
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

from airflow_lineage_provider.hooks import jvm_listener, local_spark
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


MODES = ("off", "py4j", "jvm")


def run(rows: int, mode: str) -> tuple[float, float]:
    """(wall seconds of spark-submit, driver's statement seconds) with capture ``mode``."""
    dump = tempfile.mkdtemp(prefix="bench-capture-")
    state = tempfile.mkdtemp(prefix="bench-state-")
    jvm_dump = os.path.join(dump, "jvm")
    try:
        with open(os.path.join(dump, "script.sql"), "w") as f:
            f.write(JOB.format(rows=rows))
        args = command.arguments(dump, no_capture=mode != "py4j")
        conf = local_spark.local_conf(state)
        if mode == "jvm":
            conf.update({"spark.jars": str(jvm_listener.JAR), **jvm_listener.listener_conf(None, jvm_dump)})
        cmd = local_spark.submit_command("local[2]", conf, local_spark.DRIVER, args)
        start = time.perf_counter()
        subprocess.run(cmd, env={**os.environ, **local_spark.local_env()}, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        with open(os.path.join(dump, "result.json")) as f:
            result = json.load(f)
        if mode != "off":
            with open(os.path.join(jvm_dump if mode == "jvm" else dump, "plans.jsonl")) as f:
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
    times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    for i in range(args.rounds):
        order = MODES[i % len(MODES):] + MODES[:i % len(MODES)]  # each mode goes first in turn
        for mode in order:
            wall, stmts = run(args.rows, mode)
            times[mode].append((wall, stmts))
            print(f"round {i + 1} capture={mode:4} wall {wall:6.1f} s  statements {stmts:6.1f} s", flush=True)
    wall = {m: statistics.median(w for w, _ in xs) for m, xs in times.items()}
    stmts = {m: statistics.median(s for _, s in xs) for m, xs in times.items()}
    print(f"\nmedian wall: off {wall['off']:.1f} s, py4j {wall['py4j']:.1f} s, jvm {wall['jvm']:.1f} s")
    for mode in ("py4j", "jvm"):
        ratio = wall[mode] / wall["off"]
        print(f"  {mode:4} capture: wall ratio {ratio:.3f} ({(ratio - 1) * 100:+.1f}%), "
              f"statement-time ratio {stmts[mode] / stmts['off']:.3f} ({(stmts[mode] / stmts['off'] - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
