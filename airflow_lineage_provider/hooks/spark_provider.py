"""Every name of apache-airflow-providers-apache-spark outside its public API, in one module.

The Spark provider's hook offers no public way to add a driver, an environment or a dump to
the command it builds, and its operators keep their settings in private attributes. So this
module overrides five private methods of ``SparkSubmitHook`` and reads a few private
attributes, and nothing else in the package does (``tests/unit/test_layout.py`` holds that).
``RELIED_ON`` lists each name; ``tests/unit/hooks/test_spark_provider.py`` fails naming the one
a provider release removed, where lineage would otherwise be lost silently.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.common.compat.sdk import AirflowException  # what the provider's hook raises

# What we rely on, by class: methods we override or call, and attributes set by the class's __init__.
RELIED_ON: dict[str, tuple[str, ...]] = {
    "SparkSubmitHook": ("_resolve_connection", "_get_spark_binary_path", "_build_spark_submit_command",
                        "_mask_cmd", "_process_spark_submit_log", "_conf", "_py_files", "_env",
                        "_application_args", "_connection", "_conn_id", "_principal", "_keytab", "_submit_sp",
                        "_should_track_driver_status", "_should_track_driver_via_k8s_api", "_is_yarn_cluster_mode",
                        "_yarn_track_via_rm_api", "_jars", "_driver_class_path", "_java_class", "_properties_file",
                        "_env_vars",
                        "_start_driver_status_tracking", "_driver_status", "_driver_id"),
    "SparkSqlHook": ("_master", "_name", "_total_executor_cores", "_executor_cores", "_executor_memory", "_keytab",
                     "_principal", "_num_executors", "_verbose", "_yarn_queue"),
    "SparkSubmitOperator": ("_get_hook", "_java_class", "_openlineage_inject_parent_job_info",
                            "_openlineage_inject_transport_info"),
    "SparkSqlOperator": ("_get_hook", "_conn_id", "_name", "_conf"),
}


class SubmitHookAdapter(SparkSubmitHook):
    """``SparkSubmitHook`` with the private parts the lineage hook changes under public names.

    Each override hands the provider's own result to a method a subclass may replace, so the
    subclass never names a private method or attribute of the provider.
    """

    # -- the provider's private methods, each routed to a public one -------------------------

    def _resolve_connection(self) -> dict[str, Any]:
        return self.connection_settings(super()._resolve_connection)

    def _get_spark_binary_path(self) -> list[str]:
        return self.spark_binary_path(super()._get_spark_binary_path())

    def _build_spark_submit_command(self, application: str) -> list[str]:
        return self.submit_command(super()._build_spark_submit_command(application))

    def _mask_cmd(self, connection_cmd: str | list[str]) -> str:
        command = [connection_cmd] if isinstance(connection_cmd, str) else list(connection_cmd)
        return self.masked_command(command, super()._mask_cmd)

    def _process_spark_submit_log(self, itr: Any) -> None:
        super()._process_spark_submit_log(self.log_lines(itr))

    def connection_settings(self, resolve: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The resolved connection (master, deploy mode, binary, ...); ``resolve()``: the provider's."""
        return resolve()

    def spark_binary_path(self, path: list[str]) -> list[str]:
        """The ``spark-submit`` command's first words; ``path``: the provider's (the connection's binary)."""
        return path

    def submit_command(self, command: list[str]) -> list[str]:
        return command

    def masked_command(self, command: list[str], mask: Callable[[list[str]], str]) -> str:
        """The command (or a line of spark-submit's output) as logged; ``mask``: the provider's masking,
        given the arguments as they are (not text another masking has changed already)."""
        return mask(command)

    def log_lines(self, lines: Any) -> Iterator[Any]:
        return lines

    # -- the provider's private attributes -------------------------------------------------

    @property
    def connection_info(self) -> dict[str, Any]:
        """What ``connection_settings`` resolved."""
        return self._connection

    @property
    def connection_id(self) -> str:
        return self._conn_id

    @property
    def submit_conf(self) -> dict[str, Any]:
        return self._conf or {}

    @submit_conf.setter
    def submit_conf(self, conf: dict[str, Any]) -> None:
        self._conf = conf

    @property
    def submit_py_files(self) -> str | None:
        return self._py_files

    @submit_py_files.setter
    def submit_py_files(self, py_files: str | None) -> None:
        self._py_files = py_files

    @property
    def submit_env(self) -> dict[str, Any]:
        return self._env or {}

    @submit_env.setter
    def submit_env(self, env: dict[str, Any]) -> None:
        self._env = env

    def set_application_args(self, args: list[str]) -> None:
        self._application_args = args

    @property
    def submit_jars(self) -> str | None:
        """``--jars``: the comma-separated jars given to the hook."""
        return self._jars

    @submit_jars.setter
    def submit_jars(self, jars: str | None) -> None:
        self._jars = jars

    @property
    def driver_class_path(self) -> str | None:
        """``--driver-class-path``: the driver's extra class path given to the hook."""
        return self._driver_class_path

    @property
    def main_class(self) -> str | None:
        """``--class``: a JVM application's main class."""
        return self._java_class

    @property
    def properties_file(self) -> str | None:
        """``--properties-file``: loaded by spark-submit instead of ``spark-defaults.conf``."""
        return self._properties_file

    @property
    def job_env(self) -> dict[str, Any]:
        """The environment variables given for the job (``env_vars``): spark-submit's own in client mode."""
        return self._env_vars or {}

    def follow_driver(self) -> None:
        """In standalone cluster deploy mode spark-submit returns once the master accepted the driver:
        wait for the driver to end, polling its status as the provider does, and raise unless it
        finished cleanly. Other modes: spark-submit itself waits, nothing to do."""
        if not self._should_track_driver_status:
            return
        self._start_driver_status_tracking()
        if self._driver_status != "FINISHED":
            raise AirflowException(f"The Spark driver {self._driver_id} ended with status {self._driver_status}")

    @property
    def kerberos(self) -> tuple[str | None, str | None]:
        """(principal, keytab)."""
        return self._principal, self._keytab

    @property
    def submitted(self) -> bool:
        """Whether ``spark-submit`` was started: after that, the job's outcome is the task's."""
        return getattr(self, "_submit_sp", None) is not None

    def adopt_state(self, stock: SparkSubmitHook) -> None:
        """Take every setting another ``SparkSubmitHook`` resolved, as it resolved it."""
        self.__dict__.update(stock.__dict__)


def tracks_driver_through_cluster_api(hook: SparkSubmitHook) -> bool:
    """Whether the stock hook follows its driver through the cluster's API (cluster deploy mode),
    which a job under our driver cannot be."""
    return bool(getattr(hook, "_should_track_driver_status", False) or hook._should_track_driver_via_k8s_api()
                or (getattr(hook, "_is_yarn_cluster_mode", False) and getattr(hook, "_yarn_track_via_rm_api", False)))


@dataclass(frozen=True)
class SubmitTask:
    """What a stock ``SparkSubmitOperator`` task holds in private attributes."""

    java_class: str | None
    inject_parent_job_info: bool
    inject_transport_info: bool
    hook: Callable[[], SparkSubmitHook]  # the hook its execute() would build (settings resolved)


def submit_task(op: Any) -> SubmitTask:
    return SubmitTask(java_class=op._java_class,
                      inject_parent_job_info=bool(op._openlineage_inject_parent_job_info),
                      inject_transport_info=bool(op._openlineage_inject_transport_info),
                      hook=op._get_hook)


@dataclass(frozen=True)
class SqlTask:
    """What a stock ``SparkSqlOperator`` task holds in private attributes."""

    conn_id: str
    name: str | None
    conf: dict[str, Any] | str | None
    hook: Callable[[], Any]  # its SparkSqlHook: the master and queue as spark-sql gets them


def sql_task(op: Any) -> SqlTask:
    return SqlTask(conn_id=op._conn_id, name=op._name, conf=op._conf, hook=op._get_hook)


def sql_hook_settings(hook: Any) -> dict[str, Any]:
    """A ``SparkSqlHook``'s resolved settings as ``SparkSubmitHook`` keyword arguments (and ``master``)."""
    return {"master": hook._master, "name": hook._name, "total_executor_cores": hook._total_executor_cores,
            "executor_cores": hook._executor_cores, "executor_memory": hook._executor_memory,
            "keytab": hook._keytab, "principal": hook._principal, "num_executors": hook._num_executors,
            "verbose": hook._verbose, "yarn_queue": hook._yarn_queue}
