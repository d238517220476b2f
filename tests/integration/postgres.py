"""A real PostgreSQL on 127.0.0.1 for the JDBC tests, from Debian's packages.

Needs ``postgresql`` (the server) and ``libpostgresql-jdbc-java`` (the JDBC jar). When they are
missing and we run as root with apt-get, they are installed quietly; otherwise the tests skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.integration.spark_cluster import free_port

JAR = "/usr/share/java/postgresql.jar"
# The JDBC tests' login: never to be seen in a document, an event or a log.
USER, PASSWORD = "etl_robot", "pg_Secr3t_pw"


def _bin_dir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


def ensure_installed() -> str | None:
    """Why PostgreSQL cannot be had here, or None when server and jar are present."""
    if _bin_dir() and os.path.exists(JAR):
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "postgresql and libpostgresql-jdbc-java are not installed (and we cannot apt-get install them)"
    proc = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql",
                           "libpostgresql-jdbc-java"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    if proc.returncode or not (_bin_dir() and os.path.exists(JAR)):
        return f"apt-get install postgresql libpostgresql-jdbc-java failed: {proc.stderr[-500:]}"
    return None


@dataclass
class Postgres:
    directory: Path
    port: int

    def _as_postgres(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run(prefix + list(cmd), capture_output=True, text=True, check=check, timeout=120)

    def psql(self, sql: str, *, user: str = "postgres", database: str = "postgres") -> str:
        return subprocess.run([os.path.join(_bin_dir(), "psql"), "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                               "-p", str(self.port), "-U", user, "-d", database, "-c", sql],
                              capture_output=True, text=True, check=True, timeout=60).stdout

    @classmethod
    def start(cls, directory: Path) -> Postgres:
        directory.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(directory, "postgres")
        pg = cls(directory, free_port())
        bindir = _bin_dir()
        pg._as_postgres(os.path.join(bindir, "initdb"), "-D", str(directory / "data"), "-A", "trust",
                        "-U", "postgres", "--no-sync")
        pg._as_postgres(os.path.join(bindir, "pg_ctl"), "-D", str(directory / "data"), "-l",
                        str(directory / "server.log"), "-w", "-t", "60", "-o",
                        f"-h 127.0.0.1 -p {pg.port} -k {directory} -F", "start")
        for _ in range(60):
            if subprocess.run([os.path.join(bindir, "pg_isready"), "-h", "127.0.0.1", "-p", str(pg.port)],
                              capture_output=True).returncode == 0:
                return pg
            time.sleep(1)
        raise RuntimeError(f"PostgreSQL did not start: {(directory / 'server.log').read_text()[-2000:]}")

    def stop(self) -> None:
        self._as_postgres(os.path.join(_bin_dir(), "pg_ctl"), "-D", str(self.directory / "data"), "-m", "fast",
                          "-w", "stop", check=False)


@contextlib.contextmanager
def shop_server() -> Iterator[Postgres]:
    """A running server with database ``shop`` owned by ``USER``, holding ``customers`` and ``orders``."""
    # Not under pytest's temporary directory: PostgreSQL runs as the postgres user, who cannot enter it.
    directory = Path(tempfile.mkdtemp(prefix="airflow-lineage-pg-"))
    server = Postgres.start(directory)
    try:
        server.psql(f"CREATE USER {USER} PASSWORD '{PASSWORD}'")
        server.psql(f"CREATE DATABASE shop OWNER {USER}")
        server.psql("CREATE TABLE customers (id INT, name TEXT, city TEXT);"
                    "INSERT INTO customers VALUES (1, 'Ann', 'Oslo'), (2, 'Bob', 'Rome');"
                    "CREATE TABLE orders (order_id INT, customer_id INT, amount NUMERIC(10, 2));"
                    "INSERT INTO orders VALUES (1, 1, 5.00), (2, 1, 7.50), (3, 2, 1.25);", user=USER, database="shop")
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
