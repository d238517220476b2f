"""SparkLineageHook: ``SparkSubmitHook`` that runs our driver and reads its plan dump back."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

from airflow_lineage_provider import local_spark
from airflow_lineage_provider.job.dump import SCRIPT, JobResult, read_dump

try:
    from airflow.sdk.exceptions import AirflowException
except ImportError:  # pragma: no cover - older task SDKs
    from airflow.exceptions import AirflowException


class SparkJobError(AirflowException):
    """The Spark job failed; the message is Spark's own, with the failing statement."""


class SparkLineageHook(SparkSubmitHook):
    """Run a Spark SQL script with ``spark-submit`` and capture every write's plan.

    With no connection (``conn_id=None``), or one with no host, the job runs on an
    embedded local Spark (``local[*]``) from the installed pyspark, with a catalog
    and warehouse that persist between tasks. With a ``spark`` connection it runs
    on that master, exactly as ``SparkSubmitHook`` does.

    :param conn_id: Spark connection; ``None`` for the embedded local Spark.
    :param dump_dir: where the job writes its plan dump; default a fresh temporary directory.
    :param keep_dump: keep the dump directory after reading it (for debugging).
    Other keyword arguments are ``SparkSubmitHook``'s.
    """

    hook_name = "Spark (column lineage)"

    def __init__(self, *, conn_id: str | None = None, dump_dir: str | None = None,
                 keep_dump: bool = False, **kwargs: Any) -> None:
        self._embedded_requested = conn_id is None
        self._dump_dir = dump_dir
        self._keep_dump = keep_dump
        super().__init__(conn_id=conn_id or "spark_default", **kwargs)
        if self.embedded:
            self._conf = {**local_spark.local_conf(), **self._conf}

    # -- connection -------------------------------------------------------------------

    @property
    def embedded(self) -> bool:
        return self._connection.get("embedded", False)

    def _resolve_connection(self) -> dict[str, Any]:
        if not self._embedded_requested:
            conn = super()._resolve_connection()
            try:
                host = self.get_connection(self._conn_id).host
            except AirflowException:
                host = None
            if host:
                return conn
            self.log.info("Spark connection %s has no host: using the embedded local Spark", self._conn_id)
        return {
            "master": local_spark.LOCAL_MASTER,
            "queue": None,
            "deploy_mode": None,
            "spark_binary": local_spark.spark_submit(),
            "namespace": None,
            "principal": self._principal,
            "keytab": self._keytab,
            "rest_scheme": "http",
            "rest_port": 6066,
            "rest_endpoint": None,
            "embedded": True,
        }

    def _get_spark_binary_path(self) -> list[str]:
        binary = self._connection["spark_binary"]
        if self.embedded or shutil.which(binary) is None:
            # The Spark provider expects spark-submit on PATH; pyspark ships one.
            return [local_spark.spark_submit()]
        return [binary]

    def _build_spark_submit_command(self, application: str) -> list[str]:
        cmd = super()._build_spark_submit_command(application)
        if cmd and cmd[0] == local_spark.spark_submit():
            # pyspark's own spark-submit needs SPARK_HOME and a local bind address.
            self._env = {**local_spark.local_env(), **(self._env or {})}
        return cmd

    # -- running ----------------------------------------------------------------------

    def run_sql(self, sql: str, *, dry_run: bool = False, keep_going: bool = False) -> JobResult:
        """Run ``sql`` (many statements) and return what the job dumped.

        Raises ``SparkJobError`` with Spark's message when a statement fails.
        """
        dump = self._dump_dir or tempfile.mkdtemp(prefix="airflow-lineage-")
        os.makedirs(dump, exist_ok=True)
        with open(os.path.join(dump, SCRIPT), "w", encoding="utf-8") as f:
            f.write(sql)
        self._application_args = ["--dump", dump]
        if dry_run:
            self._application_args.append("--dry-run")
        if keep_going:
            self._application_args.append("--keep-going")
        submit_error: AirflowException | None = None
        try:
            self.submit(local_spark.DRIVER)
        except AirflowException as e:
            submit_error = e
        result = read_dump(dump)
        if not self._keep_dump and self._dump_dir is None:
            shutil.rmtree(dump, ignore_errors=True)
        if result.error:
            raise SparkJobError(result.error.get("message") or str(result.error))
        if submit_error is not None:
            raise SparkJobError(f"The Spark job failed: {submit_error}")
        return result
