"""The embedded local Spark: where its binaries, catalog and warehouse live.

No Airflow import: the hook and the CLI both launch Spark with it. The embedded Spark keeps
a Hive catalog (Derby) and a warehouse in one state directory, so tables created by one
task are there for the next, as they would be on a cluster.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

from airflow_lineage_provider.job import command
from airflow_lineage_provider.lineage.naming import warehouse_location
from airflow_lineage_provider.lineage.redact import scrub

LOCAL_MASTER = "local[*]"
STATE_ENV = "AIRFLOW_LINEAGE_LOCAL_DIR"
DRIVER = str(Path(__file__).resolve().parents[1] / "job" / "driver.py")


def spark_home() -> str:
    """The installed pyspark's own Spark distribution (it ships ``bin/spark-submit``)."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise RuntimeError("pyspark is not installed: pip install airflow-lineage-provider")
    return str(Path(spec.origin).parent)


def pair_mismatch() -> str | None:
    """Why this worker's ``pyspark`` module is not one release, or ``None``: ``pyspark`` and ``pyspark-client``
    (the Spark provider's) install the same module, and two releases of them leave its files mixed (a bare
    ``pip install`` picks pyspark 4.3.0 beside pyspark-client 4.2.0 while PyPI has no pyspark-client 4.3.0)."""
    import importlib.metadata as md

    try:
        full, client = md.version("pyspark"), md.version("pyspark-client")
    except md.PackageNotFoundError:
        return None
    if full == client:
        return None
    return (f"pyspark {full} and pyspark-client {client} are installed together: both write the one pyspark "
            f"module, so its files are a mixture of two releases; install one release of both "
            f"(pip install \"pyspark=={client}\" \"pyspark-client=={client}\")")


def spark_submit() -> str:
    return str(Path(spark_home()) / "bin" / "spark-submit")


def state_dir() -> str:
    """Where the embedded catalog and warehouse live: $AIRFLOW_LINEAGE_LOCAL_DIR or $AIRFLOW_HOME/spark_local."""
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return os.path.abspath(explicit)
    airflow_home = os.environ.get("AIRFLOW_HOME") or os.path.expanduser("~/airflow")
    return os.path.join(os.path.abspath(airflow_home), "spark_local")


def warehouse(directory: str | None = None) -> str:
    """The embedded Spark's warehouse: where it keeps its managed tables."""
    return os.path.join(directory or state_dir(), "warehouse")


def managed_location(table: str, directory: str | None = None) -> str:
    """Where the embedded Spark keeps a managed table: ``warehouse/t``, or ``warehouse/db.db/t``."""
    return warehouse_location(table, warehouse(directory))


def local_env() -> dict[str, str]:
    """Environment for spark-submit on the embedded Spark."""
    return {
        "SPARK_HOME": spark_home(),
        "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }


def local_conf(directory: str | None = None) -> dict[str, str]:
    """Spark settings of the embedded Spark: persistent catalog, no UI (Airflow owns port 8080)."""
    base = directory or state_dir()
    os.makedirs(base, exist_ok=True)
    return {
        "spark.ui.enabled": "false",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": warehouse(base),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={os.path.join(base, 'metastore_db')};create=true"
        ),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={base}",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        "spark.log.level": "WARN",
    }


def submit_command(master: str, conf: dict[str, str], application: str, args: list[str],
                   main_class: str | None = None) -> list[str]:
    cmd = [spark_submit(), "--master", master]
    if main_class:
        cmd += ["--class", main_class]
    for key, value in conf.items():
        cmd += ["--conf", f"{key}={value}"]
    return cmd + [application, *args]


def run_driver(dump_dir: str, *, master: str = LOCAL_MASTER, conf: dict[str, str] | None = None,
               dry_run: bool = False, keep_going: bool = False, quiet: bool = False,
               app: str | None = None, app_args: list[str] | tuple[str, ...] = ()) -> tuple[int, str]:
    """Run the driver with spark-submit outside Airflow (the CLI): (exit code, stderr tail if quiet).

    With ``app`` the driver runs that PySpark script (with ``app_args``) instead of the SQL script.
    """
    merged = _merged_conf(master, conf)
    args = command.arguments(dump_dir, dry_run=dry_run, keep_going=keep_going,
                             app=os.path.abspath(app) if app else None, app_args=app_args)
    return _submit(submit_command(master, merged, DRIVER, args), merged, quiet)


def run_jvm_application(dump_dir: str, jar: str, *, java_class: str | None = None, master: str = LOCAL_MASTER,
                        conf: dict[str, str] | None = None, quiet: bool = False,
                        app_args: list[str] | tuple[str, ...] = ()) -> tuple[int, str, str]:
    """Run a JVM application (a jar) under the JVM listener outside Airflow (the CLI), as the hook runs one:
    (exit code, stderr tail if quiet, why there is no listener or ""). A listener jar that fails its check
    is not added (Spark would fail the session), nor where the job's jars hold another copy of its classes: the
    application runs without it."""
    from airflow_lineage_provider.hooks import jvm_listener

    merged = _merged_conf(master, conf)
    listener, why = jvm_listener.checked_copy(dump_dir)
    if listener is not None:
        why, _ = jvm_listener.shadowing(listener, os.path.abspath(jar), None, merged, {})
        listener = None if why else listener
    if listener is not None:
        merged = {**merged, **jvm_listener.listener_conf(merged, dump_dir),
                  jvm_listener.JARS_CONF: jvm_listener.jars_with(None, merged, {}, listener)}
    cmd = submit_command(master, merged, os.path.abspath(jar), [str(a) for a in app_args], java_class)
    code, tail = _submit(cmd, merged, quiet)
    return code, tail, why


def _merged_conf(master: str, conf: dict[str, str] | None) -> dict[str, str]:
    """The embedded catalog and warehouse are for local masters; a cluster brings its own."""
    return {**local_conf(), **(conf or {})} if master.startswith("local") else dict(conf or {})


def _submit(cmd: list[str], conf: dict[str, str], quiet: bool) -> tuple[int, str]:
    env = {**os.environ, **local_env()}
    out = subprocess.DEVNULL if quiet else None
    with catalog_lock(conf, lambda line: print(f"airflow-lineage: {line}", file=sys.stderr, flush=True)):
        proc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.PIPE if quiet else None, text=True)
    # What the CLI shows of Spark's own stderr: Spark quotes failing statements, credentials and all.
    return proc.returncode, scrub((proc.stderr or "")[-4000:]) or ""


# How long a job waits for the embedded catalog another job holds before it gives up (seconds).
CATALOG_WAIT_S = float(os.environ.get("AIRFLOW_LINEAGE_CATALOG_WAIT", "1800"))
_DERBY_DB = re.compile(r"databaseName=([^;]+)")


def catalog_lock_path(conf: dict[str, str]) -> str | None:
    """The lock file of the embedded Derby catalog a job's settings point at; ``None`` for another
    catalog (a cluster's metastore), which needs no lock of ours."""
    url = str(conf.get("spark.hadoop.javax.jdo.option.ConnectionURL") or "")
    found = _DERBY_DB.search(url) if url.startswith("jdbc:derby:") else None
    return found.group(1) + ".lock" if found else None


@contextlib.contextmanager
def catalog_lock(conf: dict[str, str], say: Callable[[str], None], timeout: float | None = None) -> Iterator[None]:
    """Hold the embedded catalog for one job at a time.

    Derby, the embedded Hive catalog, lets one JVM open it at a time: a second job started meanwhile
    retries in a loop and fills its log with thousands of ``XSDB6`` stack traces before it gets in. So
    jobs take turns: a waiting job says so in one line, and gives up after ``timeout`` seconds with an
    error that says what holds the catalog.
    """
    path = catalog_lock_path(conf)
    if path is None:
        yield
        return
    import fcntl

    wait = CATALOG_WAIT_S if timeout is None else timeout
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for the embedded Spark catalog ({os.path.dirname(path)}): another job is using it "
                f"(Derby lets one job in at a time); waiting up to {wait:g} s")
            deadline = time.monotonic() + wait
            while True:
                time.sleep(0.5)
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise CatalogBusyError(
                            f"the embedded Spark catalog ({os.path.dirname(path)}) was still in use by another job "
                            f"after {wait:g} s: run embedded tasks one at a time (a pool of one slot), give them a "
                            "Spark connection with a metastore of its own, or raise AIRFLOW_LINEAGE_CATALOG_WAIT"
                        ) from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class CatalogBusyError(RuntimeError):
    """Another job held the embedded catalog for longer than a job waits for it."""
