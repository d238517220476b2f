"""What one short test JVM costs with the settings ``tests/jvm.py`` gives the suite's JVMs (issue 41).

An ``airflow-lineage extract`` job of a 3-statement script on a fresh embedded catalog, under the default JVM,
under C1 and the serial GC, and under those with the class-data archive, taking turns; wall and CPU seconds
(the job's processes, from ``getrusage``), each setting's best and the ratios to the default. Then the Python half
of every driver job: the modules the driver imports, with pyspark from ``python/lib/pyspark.zip`` (where
spark-submit puts it first, compiled again by each process) and from the pip-installed package (compiled once;
what ``job/driver.py`` imports on a pip-installed Spark). Results in docs/benchmarks.md. Run from the checkout:
``python bench/suite_jvms.py [--turns 2]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers import SRC_DST  # noqa: E402
from tests.jvm import BASE_OPTIONS, jvm_options  # noqa: E402


def one(options: str, script: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one extract job with ``options`` in SPARK_SUBMIT_OPTS."""
    with tempfile.TemporaryDirectory() as state:
        env = {**os.environ, "SPARK_SUBMIT_OPTS": options, "AIRFLOW_LINEAGE_LOCAL_DIR": state}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([str(Path(sys.executable).parent / "airflow-lineage"), "extract", "--sql", str(script),
                        "--format", "json"], env=env, check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


DRIVER_IMPORTS = ("import pyspark.sql, pyspark.sql.functions; "
                  "from airflow_lineage_provider.job import app, script, dump, command")


def imports(pythonpath: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of a Python process importing what the driver imports, with ``pythonpath`` first."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(pythonpath)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", DRIVER_IMPORTS], env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2)
    args = parser.parse_args()
    settings = {"default JVM": "", "C1, serial GC": BASE_OPTIONS, "and the archive": jvm_options()}
    best: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as work:
        script = Path(work) / "script.sql"
        script.write_text(SRC_DST + ";\n")
        for _ in range(args.turns):
            for name, options in settings.items():
                wall, cpu = one(options, script)
                old = best.get(name, (wall, cpu))
                best[name] = (min(old[0], wall), min(old[1], cpu))
    base = best["default JVM"]
    for name, (wall, cpu) in best.items():
        print(f"{name:18s} {wall:6.1f} s wall {cpu:6.1f} CPU-s   {base[0] / wall:4.2f}x  {base[1] / cpu:4.2f}x")

    from airflow_lineage_provider.hooks import local_spark

    home, root = Path(local_spark.spark_home()), str(Path(__file__).resolve().parents[1])
    py4j = [str(p) for p in (home / "python" / "lib").glob("py4j-*.zip")]
    ways = {"pyspark.zip": [str(home / "python" / "lib" / "pyspark.zip"), *py4j, root],
            "pyspark package": [*py4j, root]}
    fastest: dict[str, tuple[float, float]] = {}
    for _ in range(args.turns * 2):
        for name, path in ways.items():
            wall, cpu = imports(path)
            old = fastest.get(name, (wall, cpu))
            fastest[name] = (min(old[0], wall), min(old[1], cpu))
    zipped = fastest["pyspark.zip"]
    print("the driver's Python imports:")
    for name, (wall, cpu) in fastest.items():
        print(f"{name:18s} {wall:6.2f} s wall {cpu:6.2f} CPU-s   {zipped[0] / wall:4.2f}x  {zipped[1] / cpu:4.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
