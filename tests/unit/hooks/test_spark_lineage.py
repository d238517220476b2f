"""SparkLineageHook without a JVM: which Spark it submits to (embedded local Spark, or the
connection's master), its checks for cluster deploy mode, and the driver's modules it ships."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest

from airflow_lineage_provider.hooks import local_spark
from airflow_lineage_provider.hooks.spark_lineage import SparkJobError, SparkLineageHook, job_package_zip
from airflow_lineage_provider.lineage.plan.lean import LEAN
from tests.helpers import PLANS


def test_no_connection_means_the_embedded_local_spark(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    hook = SparkLineageHook(conn_id=None)
    assert hook.embedded
    cmd = hook._build_spark_submit_command(local_spark.DRIVER)
    assert cmd[0] == local_spark.spark_submit()
    assert cmd[cmd.index("--master") + 1] == "local[*]"
    assert "spark.ui.enabled=false" in cmd
    assert f"spark.sql.warehouse.dir={tmp_path / 'warehouse'}" in cmd
    assert hook._env["SPARK_HOME"] == local_spark.spark_home()
    assert hook._env["SPARK_LOCAL_IP"] == "127.0.0.1"


def test_a_spark_connection_with_a_host_is_used_as_is(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_MY_SPARK", json.dumps({"conn_type": "spark", "host": "spark://10.0.0.5", "port": 7077}))
    hook = SparkLineageHook(conn_id="my_spark", conf={"spark.executor.memory": "2g"})
    assert not hook.embedded
    cmd = hook._build_spark_submit_command(local_spark.DRIVER)
    assert cmd[cmd.index("--master") + 1] == "spark://10.0.0.5:7077"
    assert "spark.executor.memory=2g" in cmd
    assert not any(c.startswith("spark.sql.warehouse.dir=") for c in cmd), "no embedded settings on a cluster"


def test_a_connection_without_host_falls_back_to_the_embedded_spark(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    monkeypatch.setenv("AIRFLOW_CONN_EMPTY_SPARK", json.dumps({"conn_type": "spark"}))
    hook = SparkLineageHook(conn_id="empty_spark")
    assert hook.embedded
    cmd = hook._build_spark_submit_command(local_spark.DRIVER)
    assert cmd[cmd.index("--master") + 1] == "local[*]"


def test_user_conf_overrides_the_embedded_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path))
    hook = SparkLineageHook(conn_id=None, conf={"spark.sql.shuffle.partitions": "32"})
    cmd = hook._build_spark_submit_command(local_spark.DRIVER)
    assert "spark.sql.shuffle.partitions=32" in cmd and "spark.sql.shuffle.partitions=4" not in cmd


def _hook(monkeypatch, conn: dict, **kwargs) -> SparkLineageHook:
    monkeypatch.setenv("AIRFLOW_CONN_TEST_CLUSTER", json.dumps({"conn_type": "spark", **conn}))
    return SparkLineageHook(conn_id="test_cluster", **kwargs)


def test_standalone_cluster_deploy_mode_is_refused_with_the_reason(monkeypatch):
    hook = _hook(monkeypatch, {"host": "spark://10.0.0.5", "port": 7077}, deploy_mode="cluster",
                 dump_uri="file:///shared/lineage")
    with pytest.raises(SparkJobError, match="standalone master .* cannot run Python applications in cluster"):
        hook.run_sql("SELECT 1")


def test_cluster_deploy_mode_needs_a_dump_uri(monkeypatch):
    hook = _hook(monkeypatch, {"host": "yarn", "extra": {"deploy-mode": "cluster"}})
    assert hook.cluster_mode
    with pytest.raises(SparkJobError, match="set dump_uri"):
        hook.run_sql("SELECT 1")


def test_dump_uri_defaults_to_the_connection_extra(monkeypatch):
    hook = _hook(monkeypatch, {"host": "yarn", "extra": {"deploy-mode": "cluster", "dump_uri": "hdfs://nn/lin"}})
    assert hook._dump_uri == "hdfs://nn/lin"
    hook.check_deploy_mode()  # YARN cluster mode with a shared location: accepted


def test_cluster_mode_command_ships_the_driver_modules(monkeypatch, tmp_path):
    hook = _hook(monkeypatch, {"host": "yarn", "extra": {"deploy-mode": "cluster"}},
                 py_files="deps.zip", dump_uri=f"file://{tmp_path}")
    monkeypatch.setattr(hook, "submit", lambda app: (_ for _ in ()).throw(RuntimeError("stop here")))
    with pytest.raises(RuntimeError, match="stop here"):
        hook.run_sql("SELECT 1")
    py_files = hook._py_files.split(",")
    assert py_files[0] == "deps.zip" and py_files[1].endswith(".zip")
    cmd = hook._build_spark_submit_command("driver.py")
    assert cmd[cmd.index("--deploy-mode") + 1] == "cluster"
    dump = hook._application_args[hook._application_args.index("--dump") + 1]
    assert dump.startswith(f"file://{tmp_path}/run-")


def test_the_shipped_modules_import_without_the_installed_package(tmp_path):
    archive = job_package_zip(str(tmp_path))
    names = set(zipfile.ZipFile(archive).namelist())
    assert "airflow_lineage_provider/job/driver.py" in names and "airflow_lineage_provider/lineage/naming.py" in names
    # -S: no site-packages, so neither this editable install nor Airflow can be found.
    code = ("import sys, json; sys.path.insert(0, sys.argv[1]); import airflow_lineage_provider.job.driver as d, "
            "airflow_lineage_provider.job.app; print(d.__file__)\n"
            "from airflow_lineage_provider.job.capture import digested\n"
            "warnings = []; lean = digested(json.load(open(sys.argv[2])), warnings)\n"
            "print(lean.get('format'), warnings)")
    plan = PLANS / "seed_join.json"
    out = subprocess.run([sys.executable, "-S", "-c", code, archive, str(plan)], capture_output=True, text=True,
                         check=True)
    module, digest_line = out.stdout.strip().splitlines()
    assert module.startswith(archive)
    assert digest_line == f"{LEAN} []"  # the driver digests its plans from the shipped zip too


def test_the_logged_submit_command_hides_access_keys_and_the_log_hides_credentials(monkeypatch):
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook

    hook = SparkLineageHook(conf={"spark.hadoop.fs.s3a.access.key": "AKIAEXAMPLEKEY", "spark.sql.x": "keep"})
    shown = hook._mask_cmd(["spark-submit", "--conf", "spark.hadoop.fs.s3a.access.key=AKIAEXAMPLEKEY",
                            "--conf", "spark.sql.x=keep", "app.py"])
    assert "AKIAEXAMPLEKEY" not in shown and "spark.hadoop.fs.s3a.access.key=******" in shown
    assert "spark.sql.x=keep" in shown
    logged: list[str] = []
    monkeypatch.setattr(hook.log, "info", lambda msg, *args: logged.append(msg % args if args else msg))
    hook._process_spark_submit_log(iter(["[airflow-lineage] statement 1/1 (line 1): SELECT "
                                         "'jdbc:postgresql://h/db?user=u&password=Hunter2xyz'\n"]))
    text = "\n".join(logged)
    assert "Hunter2xyz" not in text and "password=***" in text


def test_every_spelling_reaches_the_log_masker_and_the_log(monkeypatch):
    """The script's credentials, in every spelling the rule knows, are given to Airflow's masker (it then
    hides them in lines the rule never reads), and Spark's lines quoting them are scrubbed."""
    import airflow.sdk.log

    from airflow_lineage_provider.hooks.spark_lineage import mask_task_secrets

    masked: list[str] = []
    monkeypatch.setattr(airflow.sdk.log, "mask_secret", masked.append)
    sql = ("SET spark.hadoop.fs.s3a.secret.key=Planted1xyz;\n-- password=Planted2xyz\n"
           "CREATE TEMPORARY VIEW v USING parquet OPTIONS (path '/p', 'sfPassword' = 'ab''Planted3xyz',\n"
           "  `fs.azure.account.key.a.dfs.core.windows.net` \"Planted4xyz\", user 'etl_loader');\n"
           "/* token:\n   Planted5xyz */ SELECT 1")
    mask_task_secrets(sql=sql)
    for planted in ("Planted1xyz", "Planted2xyz", "ab'Planted3xyz", "Planted4xyz", "Planted5xyz"):
        assert planted in masked, (planted, masked)
    assert "etl_loader" not in masked
    hook = SparkLineageHook(conf={"spark.hadoop.fs.azure.account.key.a.dfs.core.windows.net": "Planted6xyz"})
    assert "Planted6xyz" in masked
    lines = list(hook.log_lines(line + "\n" for line in sql.splitlines()))
    assert not any(p in line for line in lines for p in ("Planted1", "Planted2", "Planted3", "Planted4"))


def test_the_submit_command_is_scrubbed_before_any_other_masker_sees_it(monkeypatch):
    """Issue 42: the Spark provider's masker took a value holding "SECRET" for a key and hid the flag after it,
    so the password after that flag went out. Ours reads the arguments as given: each value after a secret-named
    flag is hidden, the flags stay, and the values go to Airflow's masker."""
    import airflow.sdk.log

    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook

    masked: list[str] = []
    monkeypatch.setattr(airflow.sdk.log, "mask_secret", masked.append)
    hook = SparkLineageHook()
    cmd = ["spark-submit", "--conf", "spark.hadoop.fs.s3a.secret.key=CONFPW1", "--conf", "spark.app.name=x", "app.py",
           "/out", "JARARGSECRET9", "--db-password", "ARGPW11", "--password=ARGPW12", "--token", "ARGPW13", "-p",
           "ARGPW14"]
    shown = hook._mask_cmd(cmd)
    assert "ARGPW" not in shown and "CONFPW" not in shown, shown
    assert ("app.py /out JARARGSECRET9 --db-password *** --password=*** --token *** -p ***" in shown
            and "spark.hadoop.fs.s3a.secret.key=******" in shown and "spark.app.name=x" in shown), shown
    assert {"CONFPW1", "ARGPW11", "ARGPW12", "ARGPW13", "ARGPW14"} <= set(masked)
    failed = hook._mask_cmd(["ERROR Main: --db-password ARGPW15 rejected"])  # a line of spark-submit's output
    assert "ARGPW15" not in failed and "--db-password ***" in failed


def test_an_unwritable_dump_uri_in_cluster_mode_fails_saying_what_to_fix(monkeypatch):
    from airflow_lineage_provider.hooks.spark_lineage import SparkJobError, SparkLineageHook

    hook = SparkLineageHook(dump_uri="file:///proc/forbidden")
    monkeypatch.setattr(SparkLineageHook, "cluster_mode", property(lambda self: True))
    with pytest.raises(SparkJobError) as raised:
        hook._local_dump_instead("file:///proc/forbidden/run-1", lambda d: [], FileNotFoundError(2, "No such file"))
    assert str(raised.value).startswith("dump_uri file:///proc/forbidden cannot be written (No such file): in cluster "
                                        "deploy mode the job's files reach the Spark driver only through it.")


def test_each_run_with_one_dump_dir_reads_its_own_dump_alone(monkeypatch, tmp_path):
    """The driver appends to plans.jsonl: two runs in one directory would mix. Each run of a hook given a
    ``dump_dir`` writes in a fresh sub-directory of it, and returns its own writes only."""
    from airflow_lineage_provider.job.dump import DumpWriter, JobResult

    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path / "local"))
    hook = SparkLineageHook(conn_id=None, dump_dir=str(tmp_path / "dumps"))
    runs = iter(["first", "second"])

    def fake_driver(application: str) -> None:  # what the driver does: one record, then the result
        args = hook._application_args
        writer = DumpWriter(args[args.index("--dump") + 1])
        writer.record({"index": 0, "sql": next(runs)})
        writer.finish(JobResult(statements=[{"index": 0, "status": "ok"}]))

    monkeypatch.setattr(hook, "submit", fake_driver)
    first = hook.run_sql("INSERT INTO t SELECT 1")
    second = hook.run_sql("INSERT INTO t SELECT 2")
    assert [r["sql"] for r in first.records] == ["first"]
    assert [r["sql"] for r in second.records] == ["second"]
    kept = sorted(p.name for p in (tmp_path / "dumps").iterdir())
    assert len(kept) == 2 and all(name.startswith("run-") for name in kept)  # each run's dump kept, apart


# -- a JVM application under the listener ---------------------------------------------------------------


def _submitted(monkeypatch, hook: SparkLineageHook) -> list[list[str]]:
    """Each spark-submit command the hook runs, built by the provider's own code; nothing is started."""
    commands: list[list[str]] = []
    monkeypatch.setattr(hook, "submit", lambda application: commands.append(
        hook._build_spark_submit_command(application)))
    return commands


def _conf(cmd: list[str]) -> dict[str, str]:
    return dict(cmd[i + 1].split("=", 1) for i, word in enumerate(cmd) if word == "--conf")


def test_a_jar_is_submitted_itself_with_the_checked_listener_after_the_users_jars_and_listeners(monkeypatch,
                                                                                                tmp_path):
    from airflow_lineage_provider.hooks import jvm_listener

    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path / "local"))
    hook = SparkLineageHook(conn_id=None, java_class="com.example.Etl", jars="/jobs/dep.jar",
                            conf={"spark.sql.queryExecutionListeners": "com.example.Audit"})
    commands = _submitted(monkeypatch, hook)
    result = hook.run_application("/jobs/etl.jar", ["--day", "2026-01-01"])
    [cmd] = commands
    assert cmd[-3:] == ["/jobs/etl.jar", "--day", "2026-01-01"]
    assert cmd[cmd.index("--class") + 1] == "com.example.Etl"
    assert local_spark.DRIVER not in cmd  # the user's jar, not our Python driver
    dep, listener = cmd[cmd.index("--jars") + 1].split(",")
    assert dep == "/jobs/dep.jar" and listener.endswith("/airflow-lineage-listener.jar")
    conf = _conf(cmd)
    assert conf["spark.sql.queryExecutionListeners"] == f"com.example.Audit,{jvm_listener.LISTENER_CLASS}"
    assert conf["spark.sql.streaming.streamingQueryListeners"] == jvm_listener.STREAM_LISTENER_CLASS
    assert conf[jvm_listener.DUMP_CONF].startswith("/")
    # Nothing ran here, so the listener left no result: said as such, not as a crash.
    assert any(w.startswith("no plan lineage: the JVM listener left no result in") for w in result.warnings)


def test_the_listener_set_in_spark_defaults_is_kept(monkeypatch, tmp_path):
    from airflow_lineage_provider.hooks import jvm_listener

    (tmp_path / "spark-defaults.conf").write_text("spark.sql.queryExecutionListeners com.site.Audit\n"
                                                  "spark.jars /site/audit.jar\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path / "local"))
    hook = SparkLineageHook(conn_id=None, java_class="com.example.Etl")
    commands = _submitted(monkeypatch, hook)
    hook.run_application("/jobs/etl.jar")
    [cmd] = commands
    assert _conf(cmd)["spark.sql.queryExecutionListeners"] == f"com.site.Audit,{jvm_listener.LISTENER_CLASS}"
    assert cmd[cmd.index("--jars") + 1].split(",")[0] == "/site/audit.jar"


def _run_warned(monkeypatch, hook: SparkLineageHook, application: str) -> tuple[list[str], object, list[str]]:
    """The one command ``hook`` submits for ``application``, its result, and the warnings it logged."""
    commands = _submitted(monkeypatch, hook)
    warned: list[str] = []
    monkeypatch.setattr(hook.log, "warning", lambda msg, *args: warned.append(msg % args if args else msg))
    result = hook.run_application(application)
    [cmd] = commands
    return cmd, result, warned


def test_a_jar_whose_check_fails_runs_without_the_listener_saying_why_once(monkeypatch, tmp_path):
    from airflow_lineage_provider.hooks import jvm_listener

    broken = tmp_path / "airflow-lineage-listener.jar"
    broken.write_bytes(b"not a zip")
    monkeypatch.setattr(jvm_listener, "JAR", broken)
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path / "local"))
    hook = SparkLineageHook(conn_id=None, java_class="com.example.Etl", jars="/jobs/dep.jar")
    cmd, result, warned = _run_warned(monkeypatch, hook, "/jobs/etl.jar")
    assert cmd[cmd.index("--jars") + 1] == "/jobs/dep.jar"
    assert not any(k.startswith(("spark.sql.queryExecutionListeners", "spark.sql.streaming.streamingQueryListeners",
                                 "spark.airflow.")) for k in _conf(cmd))
    [warning] = result.warnings
    assert warning.startswith(f"no plan lineage: the listener jar {broken} is not a jar (")
    assert warning.endswith("): the application runs without the listener")
    assert [w for w in warned if "listener" in w] == ["No plan column lineage: " + warning[len("no plan lineage: "):]]


def test_a_job_whose_class_path_holds_an_old_listener_copy_runs_without_it_saying_which_once(monkeypatch, tmp_path):
    """issue 42: the driver would load the user's copy before ours, and Spark fail the session."""
    from airflow_lineage_provider.hooks import jvm_listener

    old = tmp_path / "libs" / "old-lineage.jar"
    old.parent.mkdir()
    with zipfile.ZipFile(old, "w") as archive:
        archive.writestr(jvm_listener.CLASS_ENTRIES[0], b"\xca\xfe\xba\xbe an older copy")
    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path / "local"))
    hook = SparkLineageHook(conn_id=None, java_class="com.example.Etl", jars="/jobs/dep.jar",
                            driver_class_path=f"{tmp_path}/libs/*")
    cmd, result, warned = _run_warned(monkeypatch, hook, "/jobs/etl.jar")
    assert cmd[cmd.index("--jars") + 1] == "/jobs/dep.jar"
    assert cmd[cmd.index("--driver-class-path") + 1] == f"{tmp_path}/libs/*"
    assert "airflow_lineage" not in " ".join(cmd)
    why = (f"{old} holds another copy of the listener's class {jvm_listener.LISTENER_CLASS}: an older copy of the "
           "listener would be loaded and fail the run: the application runs without the listener")
    assert result.warnings == [f"no plan lineage: {why}"]
    assert [w for w in warned if "listener" in w] == [f"No plan column lineage: {why}"]


def test_a_remote_jar_runs_with_the_listener_and_a_refusal_by_spark_is_explained_not_retried(monkeypatch, tmp_path):
    """A jar on HDFS cannot be looked into: the listener is added; should Spark then load another copy of it from
    there, the job fails as Spark says (it is not run again), and the error names the jar and the way out."""
    from airflow.providers.common.compat.sdk import AirflowException

    monkeypatch.setenv("AIRFLOW_LINEAGE_LOCAL_DIR", str(tmp_path / "local"))
    hook = SparkLineageHook(conn_id=None, java_class="com.example.Etl",
                            jars="hdfs://nn/libs/dep.jar,https://ci:s3cr3t-t0ken@repo.example/libs/util.jar")
    logged: list[str] = []
    monkeypatch.setattr(hook.log, "info", lambda msg, *args: logged.append(msg % args if args else msg))
    commands: list[list[str]] = []
    refused = ("Caused by: java.lang.IllegalArgumentException: requirement failed: "
               "airflow_lineage.listener.LineageListener is not a subclass of "
               "org.apache.spark.sql.util.QueryExecutionListener.")

    def submit(application):
        commands.append(hook._build_spark_submit_command(application))
        list(hook.log_lines(iter(["INFO SparkContext: Running Spark", refused])))
        raise AirflowException("Cannot execute: spark-submit. Error code is: 1.")

    monkeypatch.setattr(hook, "submit", submit)
    with pytest.raises(SparkJobError) as raised:
        hook.run_application("/jobs/etl.jar")
    [cmd] = commands  # once: with the listener
    assert cmd[cmd.index("--jars") + 1].startswith("hdfs://nn/libs/dep.jar,https://ci:s3cr3t-t0ken@repo.example/")
    unseen = "hdfs://nn/libs/dep.jar, https://repo.example/libs/util.jar"  # the credential never said
    assert str(raised.value) == (
        "The Spark job failed: Cannot execute: spark-submit. Error code is: 1. Spark refused the lineage listener "
        f"({refused}): another copy of its classes was loaded from {unseen}, which this worker could not look into. "
        "Remove that copy, or give the jar as a file on this worker: the job then runs without the listener")
    assert [line for line in logged if "looked into" in line] == [
        f"The JVM listener is added; {unseen} could not be looked into for another copy of its classes (not files "
        "on this worker)"]


def test_standalone_cluster_mode_runs_a_jar_but_not_our_python_driver(monkeypatch, tmp_path):
    hook = _hook(monkeypatch, {"host": "spark://10.0.0.5", "port": 7077}, deploy_mode="cluster",
                 dump_uri=f"file://{tmp_path}", java_class="com.example.Etl")
    hook.check_deploy_mode(python=False)
    with pytest.raises(SparkJobError, match="cannot run Python applications in cluster"):
        hook.check_deploy_mode()


def test_in_cluster_mode_the_listener_jar_ships_through_the_dump_uri(monkeypatch, tmp_path):
    hook = _hook(monkeypatch, {"host": "yarn", "extra": {"deploy-mode": "cluster"}}, java_class="com.example.Etl",
                 dump_uri=f"file://{tmp_path}", keep_dump=True)
    commands = _submitted(monkeypatch, hook)
    hook.run_application("hdfs://nn/jobs/etl.jar")
    [cmd] = commands
    shipped = cmd[cmd.index("--jars") + 1]
    dump = _conf(cmd)["spark.airflow.lineage.dump"]
    assert dump.startswith(f"file://{tmp_path}/run-") and shipped == f"{dump}/airflow-lineage-listener.jar"
    from airflow_lineage_provider.hooks import jvm_listener

    assert (tmp_path / dump.rsplit("/", 1)[1] / "airflow-lineage-listener.jar").read_bytes() == \
        jvm_listener.JAR.read_bytes()
    assert cmd[-1] == "hdfs://nn/jobs/etl.jar" and "--py-files" not in cmd


def test_in_cluster_mode_an_unwritable_dump_uri_leaves_a_jar_running_without_the_listener(monkeypatch):
    hook = _hook(monkeypatch, {"host": "yarn", "extra": {"deploy-mode": "cluster"}}, java_class="com.example.Etl",
                 dump_uri="file:///proc/forbidden")
    commands = _submitted(monkeypatch, hook)
    result = hook.run_application("hdfs://nn/jobs/etl.jar")
    [cmd] = commands
    assert "--jars" not in cmd and "spark.sql.queryExecutionListeners" not in " ".join(cmd)
    assert result.warnings == ["no plan lineage: dump_uri file:///proc/forbidden cannot be written (No such file or "
                               "directory): the application runs without the listener; give a dump_uri this worker "
                               "can write and the driver can read"]


def test_only_our_python_driver_is_given_this_interpreter_in_client_mode(monkeypatch, tmp_path):
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    script = tmp_path / "app.py"
    script.write_text("print(1)\n")
    for application, expected in (("/jobs/etl.jar", False), (str(script), True)):
        hook = _hook(monkeypatch, {"host": "local[*]"}, java_class="com.example.Etl")
        _submitted(monkeypatch, hook)
        hook.run_application(application)
        assert ("PYSPARK_DRIVER_PYTHON" in (hook._env or {})) is expected, application
