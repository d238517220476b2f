"""The tests' JVM settings: short JVMs on two cores, starting from a class-data archive of Spark's own classes.

Every JVM of the suite (the in-process session, each ``spark-submit`` of a driver or an application, a Spark Connect
server, a standalone master and worker) is short, and most of its CPU goes to loading and compiling Spark's classes.
``tests/conftest.py`` puts ``jvm_options()`` in ``SPARK_SUBMIT_OPTS`` and ``SPARK_DAEMON_JAVA_OPTS`` before any
starts:

- ``-XX:TieredStopAtLevel=1 -XX:+UseSerialGC``: on two cores C1 alone and the serial GC finish a short JVM sooner
  than C2's compiler threads and the parallel GC repay;
- ``-XX:SharedArchiveFile``: a dynamic class-data-sharing archive (JDK 13+) of the classes one representative job
  loads (Hive catalog, DDL, a join, an aggregate, parquet reads and writes, the driver's capture), made once per
  Spark install and JDK and kept in ``CACHE``; a JVM whose class path is another (an extra class path) starts without
  it, and ``-Xlog:cds*=off`` keeps the JVM from saying so. The other Spark installs of the tests (the releases of
  ``test_spark_versions``, the pair of ``test_pyspark_range``) take ``options_for(their home)``: their first job
  leaves the archive of what it loaded when its JVM ends, and the next runs start from it.

docs/testing.md has the figures; none of this is set for users' jobs.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import CACHE

BASE_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
KEEP = 6  # archives kept (about 200 MB each; one per Spark install path and JDK), the last used
# Statements whose classes most test jobs load: the embedded Hive catalog, DDL, writes, a join, an aggregate.
_WORKLOAD = (
    "CREATE TABLE a (id BIGINT, name STRING) USING parquet;\n"
    "CREATE TABLE b (id BIGINT, v DOUBLE) USING parquet;\n"
    "INSERT INTO a VALUES (1, 'x'), (2, 'y');\n"
    "INSERT INTO b SELECT id, id * 1.5 FROM a WHERE name <> 'z';\n"
    "CREATE TABLE c USING parquet AS SELECT a.id, upper(a.name) AS n, sum(b.v) AS s FROM a JOIN b ON a.id = b.id "
    "GROUP BY a.id, a.name;\n"
    "SELECT n, s FROM c ORDER BY s;\n"
)


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return Path(found).resolve() if found else None


def archive(spark_home: str | Path | None = None) -> Path | None:
    """Where the archive of a Spark install (default: the worker's pyspark) and the JDK lives (made or not);
    ``None`` without a JDK."""
    from airflow_lineage_provider.hooks import local_spark

    java = _java()
    if java is None:
        return None
    jars = sorted((Path(spark_home or local_spark.spark_home()) / "jars").glob("*.jar"))
    # The JVM checks each class-path jar's path, size and time against the archive: a reinstall or another clone
    # makes a new one. (It takes the same file at another path only while the recorded path exists; an archive
    # recorded on a hard-linked copy of the install kept beside it hung the in-process session's Hive metastore,
    # 2026-12-07, so each clone makes its own.)
    key = "\n".join([str(java), str(java.stat().st_mtime_ns)]
                    + [f"{j} {j.stat().st_size} {j.stat().st_mtime_ns}" for j in jars])
    return CACHE / "spark-cds" / f"{hashlib.sha1(key.encode()).hexdigest()[:16]}.jsa"


def _make(path: Path) -> None:
    """Run the workload through the project's driver with ``-XX:ArchiveClassesAtExit``; the archive is written when
    the JVM ends, then moved into place (a failure leaves none, and the tests run without one)."""
    from airflow_lineage_provider.hooks import local_spark

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="spark-cds-") as work:
        partial = Path(work) / "archive.jsa"
        (Path(work) / "dump").mkdir()
        (Path(work) / "dump" / "script.sql").write_text(_WORKLOAD)
        env = {**os.environ, **local_spark.local_env(),
               "SPARK_SUBMIT_OPTS": f"{BASE_OPTIONS} -XX:ArchiveClassesAtExit={partial} -Xlog:cds*=off"}
        from airflow_lineage_provider.job import command

        cmd = local_spark.submit_command("local[2]", local_spark.local_conf(str(Path(work) / "state")),
                                         local_spark.DRIVER, command.arguments(str(Path(work) / "dump")))
        subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600,
                       check=False)
        if partial.exists() and partial.stat().st_size:
            os.replace(partial, path)


def _keep(path: Path) -> None:
    """``path`` is used: among the kept; the archives used longest ago beyond ``KEEP`` go."""
    os.utime(path)
    for old in sorted(path.parent.glob("*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]:
        old.unlink(missing_ok=True)
        old.with_suffix(".lock").unlink(missing_ok=True)


def _with(path: Path) -> str:
    return f"{BASE_OPTIONS} -XX:SharedArchiveFile={path} -Xlog:cds*=off"


def jvm_options() -> str:
    """The options for the tests' JVMs, the archive made first if this install has none yet."""
    path = archive()
    if path is None:
        return BASE_OPTIONS
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "w") as lock:  # parallel workers: one makes it, the others wait
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not path.exists():
                _make(path)
    if not path.exists():
        return BASE_OPTIONS
    _keep(path)
    return _with(path)


@contextmanager
def options_for(spark_home: str | Path) -> Iterator[str]:
    """``SPARK_SUBMIT_OPTS`` for the jobs run inside, on another Spark install: from its archive, or, when it has none
    yet, options that make the one JVM started inside leave it when it ends (no job of its own: the first test's)."""
    path = archive(spark_home)
    if path is None:
        yield BASE_OPTIONS
        return
    if path.exists():
        _keep(path)
        yield _with(path)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    try:
        yield f"{BASE_OPTIONS} -XX:ArchiveClassesAtExit={partial} -Xlog:cds*=off"
        if partial.exists() and partial.stat().st_size:
            os.replace(partial, path)
            _keep(path)
    finally:
        partial.unlink(missing_ok=True)
