"""PySpark applications and cluster deploy mode, without a JVM: write nesting, the hook's checks,
the driver's modules shipped to the cluster, the operator's surface."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from airflow_lineage_provider.hooks.spark_lineage import SparkJobError, SparkLineageHook, job_package_zip
from airflow_lineage_provider.job.app import nest_writes
from airflow_lineage_provider.job.capture import WRITE_RANK


def _rank(name: str) -> int:
    return WRITE_RANK.get(name, 5)


def test_save_as_table_reports_one_write():
    # Measured on Spark 4.2: SaveAsV1TableCommand (id 3) runs a CTAS (5), which runs an insert (6);
    # the listener reports the innermost first.
    events = [(6, "InsertIntoHadoopFsRelationCommand"), (5, "CreateDataSourceTableAsSelectCommand"),
              (3, "SaveAsV1TableCommand")]
    assert nest_writes(events, _rank) == ["CreateDataSourceTableAsSelectCommand"]


def test_separate_writes_of_one_table_stay_separate():
    events = [(20, "InsertIntoHadoopFsRelationCommand"), (24, "InsertIntoHadoopFsRelationCommand"),
              (31, "InsertIntoHadoopFsRelationCommand"), (30, "CreateDataSourceTableAsSelectCommand"),
              (40, "InsertIntoHadoopFsRelationCommand")]
    assert nest_writes(events, _rank) == ["InsertIntoHadoopFsRelationCommand", "InsertIntoHadoopFsRelationCommand",
                                          "CreateDataSourceTableAsSelectCommand", "InsertIntoHadoopFsRelationCommand"]


def test_save_as_table_into_an_existing_table_keeps_the_insert():
    events = [(12, "InsertIntoHadoopFsRelationCommand"), (8, "SaveAsV1TableCommand")]
    assert nest_writes(events, _rank) == ["InsertIntoHadoopFsRelationCommand"]


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
    hook._check_deploy_mode()  # YARN cluster mode with a shared location: accepted


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
    from airflow_lineage_provider.lineage.digest import LEAN

    plan = Path(__file__).resolve().parents[1] / "data" / "plans" / "seed_join.json"
    out = subprocess.run([sys.executable, "-S", "-c", code, archive, str(plan)], capture_output=True, text=True,
                         check=True)
    module, digest_line = out.stdout.strip().splitlines()
    assert module.startswith(archive)
    assert digest_line == f"{LEAN} []"  # the driver digests its plans from the shipped zip too


def test_application_operator_surface():
    from airflow_lineage_provider.operators.spark_lineage import SparkSubmitLineageOperator

    op = SparkSubmitLineageOperator(task_id="t", application="/apps/job.py", application_args=["{{ ds }}"],
                                    conn_id="spark_default", py_files="deps.zip", dump_uri="s3a://b/lineage")
    assert {"application", "application_args", "conf", "py_files", "dump_uri"} <= set(op.template_fields)
    assert op.template_ext == ()
    assert op.get_openlineage_facets_on_start().job_facets == {}
    with pytest.raises(TypeError, match="takes no 'sql'"):
        SparkSubmitLineageOperator(task_id="u", application="a.py", sql="SELECT 1")
    with pytest.raises(TypeError):
        SparkSubmitLineageOperator(task_id="v", application="a.py", conf={}, some_unknown=1)
