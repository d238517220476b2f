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

    from airflow_lineage_provider.hooks.spark_lineage import mask_sql_secrets

    masked: list[str] = []
    monkeypatch.setattr(airflow.sdk.log, "mask_secret", masked.append)
    sql = ("SET spark.hadoop.fs.s3a.secret.key=Planted1xyz;\n-- password=Planted2xyz\n"
           "CREATE TEMPORARY VIEW v USING parquet OPTIONS (path '/p', 'sfPassword' = 'ab''Planted3xyz',\n"
           "  `fs.azure.account.key.a.dfs.core.windows.net` \"Planted4xyz\", user 'etl_loader');\n"
           "/* token:\n   Planted5xyz */ SELECT 1")
    mask_sql_secrets(sql)
    for planted in ("Planted1xyz", "Planted2xyz", "ab'Planted3xyz", "Planted4xyz", "Planted5xyz"):
        assert planted in masked, (planted, masked)
    assert "etl_loader" not in masked
    hook = SparkLineageHook(conf={"spark.hadoop.fs.azure.account.key.a.dfs.core.windows.net": "Planted6xyz"})
    assert "Planted6xyz" in masked
    lines = list(hook.log_lines(line + "\n" for line in sql.splitlines()))
    assert not any(p in line for line in lines for p in ("Planted1", "Planted2", "Planted3", "Planted4"))


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
