"""The embedded local Spark: where its binaries, catalog and warehouse live.

No Airflow import: the hook and the CLI both use it. The embedded Spark keeps a
Hive catalog (Derby) and a warehouse in one state directory, so tables created
by one task are there for the next, as they would be on a cluster.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from airflow_lineage_provider.lineage.naming import warehouse_location

LOCAL_MASTER = "local[*]"
STATE_ENV = "AIRFLOW_LINEAGE_LOCAL_DIR"
DRIVER = str(Path(__file__).with_name("job") / "driver.py")


def spark_home() -> str:
    """The installed pyspark's own Spark distribution (it ships ``bin/spark-submit``)."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise RuntimeError("pyspark is not installed: pip install airflow-lineage-provider")
    return str(Path(spec.origin).parent)


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


def submit_command(master: str, conf: dict[str, str], application: str, args: list[str]) -> list[str]:
    cmd = [spark_submit(), "--master", master]
    for key, value in conf.items():
        cmd += ["--conf", f"{key}={value}"]
    return cmd + [application, *args]


def run_driver(dump_dir: str, *, master: str = LOCAL_MASTER, conf: dict[str, str] | None = None,
               dry_run: bool = False, keep_going: bool = False, quiet: bool = False,
               app: str | None = None, app_args: list[str] | tuple[str, ...] = ()) -> tuple[int, str]:
    """Run the driver with spark-submit outside Airflow (the CLI): (exit code, stderr tail if quiet).

    With ``app`` the driver runs that PySpark script (with ``app_args``) instead of the SQL script.
    """
    # The embedded catalog and warehouse are for local masters; a cluster brings its own.
    merged = {**local_conf(), **(conf or {})} if master.startswith("local") else dict(conf or {})
    args = ["--dump", dump_dir] + (["--dry-run"] if dry_run else []) + (["--keep-going"] if keep_going else [])
    if app:
        args += ["--app", os.path.abspath(app), "--", *app_args]
    env = {**os.environ, **local_env()}
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.run(submit_command(master, merged, DRIVER, args), env=env, stdout=out,
                          stderr=subprocess.PIPE if quiet else None, text=True)
    return proc.returncode, (proc.stderr or "")[-4000:]
