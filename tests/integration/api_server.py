"""A real ``airflow api-server`` on 127.0.0.1 for the UI tests and ``bench/ui_scale.py``: started on a free
port with SimpleAuthManager users of the caller's choosing, waited for until healthy, stopped with its
process group."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.integration.spark_cluster import free_port


@contextmanager
def api_server(users: str, passwords: Path, log: Path, *, timeout: float = 240,
               env: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """``{"base": url, "passwords": {user: password}}`` while the server runs. ``users`` as Airflow's
    ``simple_auth_manager_users`` (``admin:admin,norole:``); the generated passwords go to ``passwords``.
    ``env``: more of the server's environment (another auth manager, say)."""
    port = free_port()
    env = {**os.environ, "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": users,
           "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords), **(env or {})}
    airflow = str(Path(sys.executable).parent / "airflow")
    with log.open("w") as out:
        proc = subprocess.Popen([airflow, "api-server", "-H", "127.0.0.1", "-p", str(port), "-w", "1"],
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout  # a busy 2-core machine: generous, and only a ceiling
            while True:
                assert proc.poll() is None, f"api-server exited with {proc.returncode}; log: {log}"
                try:
                    with urllib.request.urlopen(base + "/api/v2/monitor/health", timeout=10) as r:
                        if r.status == 200 and passwords.exists():
                            break
                except OSError:
                    pass
                assert time.monotonic() < deadline, f"api-server did not come up; log: {log}"
                time.sleep(1)
            yield {"base": base, "passwords": json.loads(passwords.read_text())}
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
