"""A real Spark standalone cluster on 127.0.0.1: one master and one worker started from pyspark's
own ``bin/spark-class``, ready when the master's JSON page lists the worker ALIVE, stopped by pid."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from airflow_lineage_provider.hooks import local_spark


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class StandaloneCluster:
    workdir: Path
    port: int = field(default_factory=free_port)
    webui_port: int = field(default_factory=free_port)
    # The master's REST server: what the Spark provider polls a cluster-mode driver's status through.
    rest_port: int = field(default_factory=free_port)
    processes: list[subprocess.Popen] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        return {**os.environ, "SPARK_HOME": local_spark.spark_home(), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_NO_DAEMONIZE": "1", "PYSPARK_PYTHON": sys.executable,
                "SPARK_MASTER_OPTS": f"-Dspark.master.rest.enabled=true -Dspark.master.rest.port={self.rest_port}",
                "SPARK_LOG_DIR": str(self.workdir), "SPARK_WORKER_DIR": str(self.workdir / "work")}

    def _start(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.workdir / f"{name}.log", "w")
        cmd = [str(Path(local_spark.spark_home()) / "bin" / "spark-class"), *args]
        proc = subprocess.Popen(cmd, env=self._env(), stdout=log, stderr=subprocess.STDOUT,
                                cwd=self.workdir, start_new_session=True)
        self.processes.append(proc)
        return proc

    def start(self, timeout: float = 180) -> StandaloneCluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.webui_port))
        self._wait(lambda state: state.get("status") == "ALIVE", "master", timeout)
        self._start("worker", "org.apache.spark.deploy.worker.Worker", self.master_url, "--host", "127.0.0.1",
                    # Two cores: a driver in cluster deploy mode takes one of the worker's, its executor the other.
                    "--cores", "2", "--memory", "1g", "--webui-port", str(free_port()),
                    "--work-dir", str(self.workdir / "work"))
        self._wait(lambda state: any(w.get("state") == "ALIVE" for w in state.get("workers", [])), "worker", timeout)
        return self

    def _wait(self, ready, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc in self.processes:
                if proc.poll() is not None:
                    raise RuntimeError(f"the Spark {what} exited early: {self.logs()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=5) as r:
                    if ready(json.load(r)):
                        return
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"the Spark {what} was not ready after {timeout:.0f}s: {self.logs()}")

    def state(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=10) as r:
            return json.load(r)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(self.workdir.glob("*.log")))

    def stop(self) -> None:
        """Stop the worker, then the master, by their process ids."""
        for proc in reversed(self.processes):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        self.processes.clear()
