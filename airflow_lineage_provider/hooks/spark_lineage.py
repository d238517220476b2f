"""SparkLineageHook: ``SparkSubmitHook`` that runs our driver and reads its plan dump back."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from airflow_lineage_provider.hooks import dump_location, jvm_listener, local_spark
from airflow_lineage_provider.hooks.spark_provider import SubmitHookAdapter
from airflow_lineage_provider.job import command
from airflow_lineage_provider.job.dump import RESULT, SCRIPT, JobResult, read_dump
from airflow_lineage_provider.lineage.naming import is_uri
from airflow_lineage_provider.lineage.redact import (
    is_secret_conf,
    scrub,
    scrub_command,
    secrets_in,
    secrets_in_command,
)

try:
    from airflow.sdk.exceptions import AirflowException
except ImportError:  # pragma: no cover - older task SDKs
    from airflow.exceptions import AirflowException


class SparkJobError(AirflowException):
    """The Spark job failed; the message is Spark's own, with the failing statement."""


class SparkLineageHook(SubmitHookAdapter):
    """Run a Spark SQL script with ``spark-submit`` and capture every write's plan.

    With no connection (``conn_id=None``), or one with no host, the job runs on an
    embedded local Spark (``local[*]``) from the installed pyspark, with a catalog
    and warehouse that persist between tasks. With a ``spark`` connection it runs
    on that master, exactly as ``SparkSubmitHook`` does.

    :param conn_id: Spark connection; ``None`` for the embedded local Spark.
    :param dump_dir: a local directory under which each run writes its plan dump, in a fresh
        sub-directory of its own (``run-<16 hex>``, logged, and kept after the run); default a fresh
        temporary directory, removed after reading. A fresh sub-directory rather than the directory
        itself because the driver appends to ``plans.jsonl``: a second run in the same directory would
        read the first run's writes as its own. Refusing a non-empty directory instead would fail the
        second call of one hook, or every run after a crashed one, for lineage's sake; a sub-directory
        per run also keeps each run's dump for inspection, as ``dump_uri`` runs do.
    :param dump_uri: a directory both this worker and the Spark driver reach, on any
        Hadoop-compatible file system (``file:///shared/lineage``, ``hdfs://nn/lineage``,
        ``s3a://bucket/lineage``); each run writes under its own sub-directory. Needed in
        cluster deploy mode, where the driver runs away from this worker. Default: the
        connection's extra ``dump_uri``.
    :param keep_dump: keep the dump directory after reading it (for debugging).
    Other keyword arguments are ``SparkSubmitHook``'s.
    """

    hook_name = "Spark (column lineage)"

    def __init__(self, *, conn_id: str | None = None, dump_dir: str | None = None, dump_uri: str | None = None,
                 keep_dump: bool = False, master: str | None = None, **kwargs: Any) -> None:
        self._embedded_requested = conn_id is None and master is None
        self._master_override = master
        self._stock = False
        self._dump_dir = dump_dir
        self._dump_uri = dump_uri
        self._keep_dump = keep_dump
        super().__init__(conn_id=conn_id or "spark_default", **kwargs)
        self._init_lineage()

    @classmethod
    def adopting(cls, hook: Any) -> SparkLineageHook:
        """The job a stock ``SparkSubmitHook`` would submit, run under the capture instead.

        Every setting the stock hook resolved (connection, master, deploy mode, queue, conf, files,
        arguments, environment, binary) is taken as it is, never resolved again; only what the
        capture needs is added (the driver, its dump, the worker's interpreter in client mode).
        """
        adopted = cls.__new__(cls)
        adopted.adopt_state(hook)
        adopted._embedded_requested = False
        adopted._master_override = None
        adopted._stock = True
        adopted._dump_dir = None
        adopted._dump_uri = None
        adopted._keep_dump = False
        adopted._init_lineage()
        return adopted

    def _init_lineage(self) -> None:
        # Airflow's own log lines (the submit command the Spark provider logs) hide these values too.
        _mask(value for key, value in self.submit_conf.items() if is_secret_conf(str(key)))
        if self.embedded:
            self.submit_conf = {**local_spark.local_conf(), **self.submit_conf}
        elif self._dump_uri is None:
            try:
                self._dump_uri = self.get_connection(self.connection_id).extra_dejson.get("dump_uri") or None
            except AirflowException:
                pass

    # -- connection -------------------------------------------------------------------

    @property
    def embedded(self) -> bool:
        return self.connection_info.get("embedded", False)

    def connection_settings(self, resolve: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        if self._master_override is not None:
            # A master chosen outside the connection (SparkSqlOperator's ``master``, or what its hook
            # resolved): the connection gives the rest; client mode, as the spark-sql CLI runs.
            return {**resolve(), "master": self._master_override, "deploy_mode": None}
        if not self._embedded_requested:
            conn = resolve()
            try:
                host = self.get_connection(self.connection_id).host
            except AirflowException:
                host = None
            if host:
                return conn
            self.log.info("Spark connection %s has no host: using the embedded local Spark", self.connection_id)
        return {
            "master": local_spark.LOCAL_MASTER,
            "queue": None,
            "deploy_mode": None,
            "spark_binary": local_spark.spark_submit(),
            "namespace": None,
            "principal": self.kerberos[0],
            "keytab": self.kerberos[1],
            "rest_scheme": "http",
            "rest_port": 6066,
            "rest_endpoint": None,
            "embedded": True,
        }

    def spark_binary_path(self, path: list[str]) -> list[str]:
        if self.embedded or (shutil.which(path[0]) is None and not self._stock):
            # The Spark provider expects spark-submit on PATH; pyspark ships one.
            return [local_spark.spark_submit()]
        return path

    def submit(self, application: str = "", **kwargs: Any) -> Any:
        """spark-submit, without what a Spark Connect client made earlier in this process left in its
        environment (an ``@task.pyspark`` task before this one under ``airflow dags test``): inherited, it
        would make our classic driver a Connect client that fails at once. The stock ``submit()`` builds the
        child's environment from ``os.environ`` itself, so the names are out of it for the submit only."""
        left = {name: os.environ.pop(name) for name in CONNECT_CLIENT_ENV if name in os.environ}
        try:
            return super().submit(application, **kwargs)
        finally:
            os.environ.update(left)

    def submit_command(self, cmd: list[str]) -> list[str]:
        mismatch = local_spark.pair_mismatch()
        if mismatch:  # the embedded Spark and the Connect client run from that module: say so in the task log
            self.log.warning("%s", mismatch)
        if cmd and cmd[0] == local_spark.spark_submit():
            # pyspark's own spark-submit needs SPARK_HOME and a local bind address.
            self.submit_env = {**local_spark.local_env(), **self.submit_env}
        elif not self.cluster_mode and local_spark.DRIVER in cmd and not os.environ.get("PYSPARK_DRIVER_PYTHON"):
            # Client mode: our driver runs here and imports this package: use this interpreter (a jar needs none).
            self.submit_env = {"PYSPARK_DRIVER_PYTHON": sys.executable, **self.submit_env}
        return cmd

    def masked_command(self, command: list[str], mask: Callable[[list[str]], str]) -> str:
        """The submit command as logged, by our rule alone (``redact.scrub_command``): the value after a
        secret-named flag (``--db-password X``), secret conf values (``spark.hadoop.fs.s3a.access.key``) and
        URL credentials are hidden, the flags stay. The provider's masker is not run after it: it hides
        the argument after any word holding "secret" (a flag too) and would let the value after it through.
        The values hidden are given to Airflow's masker for the lines the rule never reads."""
        _mask(secrets_in_command(command))
        return _SECRET_CONF_ARG.sub(lambda m: f"{m.group(1)}=******" if is_secret_conf(m.group(1)) else m.group(0),
                                    scrub_command(command))

    def log_lines(self, lines: Any) -> Any:
        """Every line the job prints reaches the task log with its credentials hidden: Spark quotes
        failing statements in its own errors and logs. A line saying Spark refused our listener class is kept
        for the error (``_refused_listener``)."""
        for line in lines:
            if isinstance(line, str):
                if _REFUSED_LISTENER.search(line):
                    self._refused_line = scrub(line.strip()) or ""
                line = scrub(line)
            yield line

    def add_conf(self, conf: dict[str, Any]) -> None:
        """Spark properties to submit with, over those given (OpenLineage's parent job information)."""
        self.submit_conf = {**self.submit_conf, **conf}

    # -- running ----------------------------------------------------------------------

    @property
    def cluster_mode(self) -> bool:
        return self.connection_info.get("deploy_mode") == "cluster"

    def run_sql(self, sql: str, *, dry_run: bool = False, keep_going: bool = False) -> JobResult:
        """Run ``sql`` (many statements) and return what the job dumped.

        Raises ``SparkJobError`` with Spark's message when a statement fails.
        """
        mask_task_secrets(sql=sql)
        def prepare(dump: str) -> Launch:
            dump_location.write_file(dump, SCRIPT, sql)
            return Launch(command.arguments(dump, dry_run=dry_run, keep_going=keep_going))

        return self._run(prepare)

    def run_application(self, application: str, application_args: list[Any] | None = None) -> JobResult:
        """Run an application, unchanged, under the capture; return what the job dumped.

        A PySpark script (``.py``) runs under our driver; a JVM application (a jar, with the hook's
        ``java_class`` or its manifest's main class) is submitted itself, with the JVM listener added
        (``run_jvm_application``). Raises ``SparkJobError`` with the application's own error
        (Python's or Spark's message) when it fails.
        """
        if jvm_listener.is_jvm_application(application, self.main_class):
            return self.run_jvm_application(application, application_args)
        args = [str(a) for a in (application_args or [])]

        def prepare(dump: str) -> Launch:
            app = application
            if self.cluster_mode and not is_uri(app):
                if not os.path.isfile(app):
                    raise SparkJobError(f"The application {app} does not exist on this Airflow worker")
                # The driver runs on the cluster: it fetches the script from the shared dump location.
                app = dump_location.copy_file(dump, app)
            elif not is_uri(app) and not os.path.isfile(app):
                raise SparkJobError(f"The application {app} does not exist (or is not a file)")
            elif not is_uri(app):
                app = os.path.abspath(app)
            return Launch(command.arguments(dump, app=app, app_args=args))

        return self._run(prepare)

    def run_jvm_application(self, application: str, application_args: list[Any] | None = None) -> JobResult:
        """Submit a JVM application (``application``: its jar; the main class is the hook's ``java_class``)
        as it is, with the provider's listener added: ``--jars`` gains a checked copy of the listener
        jar, the conf registers the listener (after any the user set) and names the dump, which is
        then read as a ``.py`` application's. A listener jar that fails its check, or a job whose own jars
        hold another copy of the listener's classes (``jvm_listener.shadowing``), gets no listener: the
        application runs without it, and one warning says why there is no plan lineage."""
        args = [str(a) for a in (application_args or [])]
        given_jars, given_conf = self.submit_jars, dict(self.submit_conf)
        self._unseen_jars: list[str] = []
        self._refused_line = ""
        staging = tempfile.mkdtemp(prefix="airflow-lineage-listener-")
        try:
            listener, why = jvm_listener.checked_copy(staging)
            if listener is not None:
                why, self._unseen_jars = jvm_listener.shadowing(listener, application, given_jars, given_conf,
                                                                self._spark_defaults(), self.driver_class_path)
                if why:  # the driver would load the user's copy of our classes, and Spark fail the session
                    listener, why = None, scrub(why) or why
                elif self._unseen_jars:
                    self.log.info("The JVM listener is added; %s could not be looked into for another copy of "
                                  "its classes (not files on this worker)", scrub(", ".join(self._unseen_jars)))

            def prepare(dump: str) -> Launch:
                # From what the user gave each time: a second call (a local dump instead) adds nothing twice.
                self.submit_jars, self.submit_conf = given_jars, dict(given_conf)
                if listener is None:
                    return Launch(args, application, uncaptured=f"{why}: the application runs without the listener")
                if self.cluster_mode:
                    # The driver runs on the cluster: it fetches the jar from the shared dump location. The
                    # application needs nothing from there: where it cannot be written, it runs without us.
                    try:
                        shipped = dump_location.copy_file(dump, listener)
                    except (OSError, dump_location.DumpLocationError) as e:
                        return Launch(args, application, uncaptured=(
                            f"dump_uri {self._dump_uri} cannot be written ({getattr(e, 'strerror', None) or e}): "
                            "the application runs without the listener; give a dump_uri this worker can write "
                            "and the driver can read"))
                else:
                    shipped = listener
                    dump_location.make_dir(dump)  # the listener's directory; where it cannot be, a local dump instead
                defaults = self._spark_defaults()
                self.submit_jars = jvm_listener.jars_with(given_jars, given_conf, defaults, shipped)
                self.submit_conf = {**given_conf, **jvm_listener.listener_conf(given_conf, dump, defaults)}
                return Launch(args, application, listener=True)

            return self._run(prepare, python=False)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _spark_defaults(self) -> dict[str, str]:
        """The properties the job's spark-submit loads from its files (best effort)."""
        env = {**os.environ, **{str(k): str(v) for k, v in {**self.job_env, **self.submit_env}.items()}}
        binary = self.connection_info.get("spark_binary")
        return jvm_listener.spark_defaults(env, spark_home=local_spark.spark_home() if self.embedded else None,
                                           spark_binary=str(binary) if binary else None,
                                           properties_file=self.properties_file)

    def _run(self, prepare: Callable[[str], Launch], *, python: bool = True) -> JobResult:
        """Run a job: ``prepare(dump)`` says what to submit for a dump location; then the dump is read
        back. ``python``: the job is our Python driver (False: a JVM application under the listener)."""
        self.check_deploy_mode(python=python)
        if self._dump_uri:
            dump = dump_location.run_location(self._dump_uri)
            remove_after = not self._keep_dump
        elif self._dump_dir:
            dump = dump_location.run_location(self._dump_dir)  # this run's alone (see dump_dir above)
            os.makedirs(dump)
            remove_after = False
        else:
            dump = tempfile.mkdtemp(prefix="airflow-lineage-")
            remove_after = not self._keep_dump
        try:
            try:
                launch = prepare(dump)
            except (OSError, dump_location.DumpLocationError) as e:
                if not self._dump_uri:
                    raise
                dump, launch, remove_after = self._local_dump_instead(dump, prepare, e)
            if launch.uncaptured:
                self.log.warning("No plan column lineage: %s", launch.uncaptured)
            self.set_application_args(launch.args)
            if self.cluster_mode and python:
                self.submit_py_files = ",".join(p for p in (self.submit_py_files, job_package_zip()) if p)
            submit_error: AirflowException | None = None
            try:
                with local_spark.catalog_lock(self.submit_conf, lambda line: self.log.warning("%s", line)):
                    self.submit(launch.application)
                    self.follow_driver()
            except AirflowException as e:
                submit_error = e
            except local_spark.CatalogBusyError as e:
                raise SparkJobError(str(e)) from e
            if launch.uncaptured:
                result = JobResult(warnings=[f"no plan lineage: {launch.uncaptured}"])
            else:
                result = self._read(dump, launch, failed=submit_error is not None)
        finally:
            if remove_after:
                dump_location.remove(dump)
        if not remove_after:
            self.log.info("Plan dump kept at %s", dump)
        if getattr(self, "_dump_warning", None):
            result.warnings.append(self._dump_warning)
        if result.error:
            raise SparkJobError(result.error.get("message") or str(result.error))
        if submit_error is not None:
            refused = self._refused_listener(launch)
            failed = f"{str(submit_error).rstrip('.')}{refused}" if refused else str(submit_error)
            raise SparkJobError(f"The Spark job failed: {failed}")
        return result

    def _refused_listener(self, launch: Launch) -> str:
        """What to add to a failed job's error when Spark refused our listener class: a copy of it in a jar
        ``shadowing`` could not look into was loaded instead. The job is not run again without the listener (a
        class is refused when first needed, maybe after the application wrote): the error says what to change."""
        refused = getattr(self, "_refused_line", "")
        if not launch.listener or not refused:
            return ""
        unseen = scrub(", ".join(getattr(self, "_unseen_jars", [])))
        where = unseen or "a jar the cluster adds to the driver's class path"
        return (f". Spark refused the lineage listener ({refused}): another copy of its classes was loaded from "
                f"{where}, which this worker could not look into. Remove that copy, or give the jar as a file on this "
                "worker: the job then runs without the listener")

    def _read(self, dump: str, launch: Launch, *, failed: bool) -> JobResult:
        """What the job dumped; a dump that cannot be reached or read is a warning."""
        try:
            with dump_location.fetched(dump) as local:
                result = read_dump(local, _json_loads())
                finished = os.path.exists(os.path.join(local, RESULT))
        except dump_location.DumpLocationError as e:
            return JobResult(warnings=[str(e)])
        if launch.listener and not finished and not failed:
            # The application ended well, so the listener never wrote its result: it could not write the
            # dump, or Spark did not run it. read_dump's warnings (no result file: "killed or crashed", no
            # plans file) would send the reader astray, so this one line replaces them.
            line = (f"the JVM listener left no result in {dump} (it could not write there, or did not run: its "
                    "warning is in the Spark driver's log)")
            self.log.warning("No plan column lineage: %s", line)
            return JobResult(records=result.records, warnings=[f"no plan lineage: {line}"])
        return result

    def _local_dump_instead(self, dump: str, prepare: Callable[[str], Launch], error: BaseException
                            ) -> tuple[str, Launch, bool]:
        """``dump_uri`` cannot be written. The dump is lineage's, the job is the user's: where the driver
        runs on this worker (client mode, embedded Spark) the job goes on with a local dump, and the
        lineage says what to fix; in cluster mode the script cannot reach the driver at all, and the
        task fails saying so."""
        why = getattr(error, "strerror", None) or str(error)
        if self.cluster_mode:
            raise SparkJobError(
                f"dump_uri {self._dump_uri} cannot be written ({why}): in cluster deploy mode the job's files reach "
                "the Spark driver only through it. Give a dump_uri this worker can write and the driver can read "
                "(hdfs://, s3a://, a shared file system)") from error
        local = tempfile.mkdtemp(prefix="airflow-lineage-")
        self._dump_warning = (f"dump_uri {self._dump_uri} cannot be written ({why}): the job ran with a local "
                              "plan dump instead; fix dump_uri (a directory this worker can write) for cluster mode")
        self.log.warning("%s", self._dump_warning)
        return local, prepare(local), not self._keep_dump

    def check_deploy_mode(self, *, python: bool = True) -> None:
        """Cluster deploy mode needs a shared dump location, and a manager that runs the driver: our
        Python driver (``python``) does not run on Spark's standalone master in cluster mode, a JVM
        application does."""
        if not self.cluster_mode:
            return
        master = self.connection_info.get("master") or ""
        if master.startswith("spark://") and python:
            raise SparkJobError(
                f"Spark's standalone master ({master}) cannot run Python applications in cluster deploy "
                "mode, and our driver is a Python application. Use client deploy mode (the driver runs "
                "on this worker, executors on the cluster), or a YARN or Kubernetes master for cluster mode."
            )
        if self.embedded or master.startswith("local"):
            raise SparkJobError("cluster deploy mode needs a cluster master (YARN or Kubernetes), not a local one")
        if not self._dump_uri:
            raise SparkJobError(
                "In cluster deploy mode the Spark driver runs away from this Airflow worker: set dump_uri "
                "(on the operator or as the connection's extra 'dump_uri') to a directory both can reach, "
                "e.g. hdfs://namenode:8020/tmp/airflow-lineage, s3a://bucket/airflow-lineage or "
                "file:///mnt/shared/airflow-lineage."
            )


@dataclass(frozen=True)
class Launch:
    """What one run submits: ``application`` (our driver, or the user's jar) with ``args``.
    ``listener``: the JVM listener is added; ``uncaptured``: why the job runs without any capture
    (its dump is then not read)."""

    args: list[str]
    application: str = local_spark.DRIVER
    listener: bool = False
    uncaptured: str = ""


def job_modules() -> list[str]:
    """What the Spark driver imports, as paths inside the package: ``job/`` and ``lineage/`` (the
    ground floor it stands on) without ``lineage/sql/``, which only the Airflow side runs.
    A rule, not a list: a module added to those rooms ships with them (a test holds the rule)."""
    package = Path(__file__).resolve().parents[1]
    shipped = ["__init__.py"]
    for room in ("job", "lineage"):
        for path in sorted((package / room).rglob("*")):
            relative = path.relative_to(package)
            if relative.parts[:2] == ("lineage", "sql") or path.suffix not in (".py", ".json"):
                continue
            shipped.append(relative.as_posix())
    return shipped


def job_package_zip(directory: str | None = None) -> str:
    """A zip of the driver's own modules (pyspark and the standard library aside), built once
    per process: in cluster deploy mode the driver runs where this package is not installed."""
    package = Path(__file__).resolve().parents[1]
    modules = job_modules()
    target = Path(directory or tempfile.gettempdir()) / f"airflow_lineage_job-{os.getpid()}.zip"
    if not target.exists() or target.stat().st_mtime < max((package / m).stat().st_mtime for m in modules):
        tmp = target.with_suffix(".tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for module in modules:
                zf.write(package / module, f"airflow_lineage_provider/{module}")
        os.replace(tmp, target)
    return str(target)


def _json_loads() -> Callable[[str], Any]:
    """orjson's parser where it is installed (a dependency of the provider), else the json module's."""
    try:
        import orjson
    except ImportError:  # a worker that installed the provider without its dependencies
        return json.loads
    return orjson.loads


# ``--conf key=value`` in a logged command line.
# What pyspark's Connect client sets in os.environ when it makes a session (and a user may set for one).
CONNECT_CLIENT_ENV = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
_SECRET_CONF_ARG = re.compile(r"(?<=--conf )([\w.\-]+)=(\S+)")
# Spark's words when the listener class it loaded is not ours: another copy was on the driver's class path first.
_REFUSED_LISTENER = re.compile(
    r"airflow_lineage\.listener\.\w+ is not a subclass of|(ClassCastException|NoClassDefFoundError|LinkageError|"
    r"ClassFormatError|NoSuchMethodError|NoSuchFieldError|IncompatibleClassChangeError|AbstractMethodError|"
    r"UnsupportedClassVersionError)\b.*airflow_lineage[./]listener[./]")


def _mask(values: Any) -> None:
    """Register credential values with Airflow's secrets masker (best effort: never fails a task)."""
    try:
        from airflow.sdk.log import mask_secret
    except ImportError:  # pragma: no cover - older task SDKs
        return
    for value in values:
        if isinstance(value, str) and len(value) >= 3:
            mask_secret(value)


def mask_task_secrets(*, sql: str | None = None, conf: dict[str, Any] | None = None, command: Any = ()) -> None:
    """The credentials a task's fields hold (its SQL, its Spark conf, a command line's arguments), for Airflow's
    masker: its logs, and the rendered fields it keeps (the UI's Rendered Template). Best effort: never raises."""
    try:
        if isinstance(sql, str):
            _mask(secrets_in(sql))
        confs = [a for k, v in (conf or {}).items() for a in ("--conf", f"{k}={v}")]
        _mask(secrets_in_command([*confs, *(str(a) for a in command or ())]))
    except Exception as e:  # noqa: BLE001 - lineage never changes the task's outcome
        logging.getLogger(__name__).warning("Column lineage could not read the task's fields for credentials: %s",
                                            type(e).__name__)
