"""pyspark (full, with spark-submit) and pyspark-client (pulled by the Spark provider) coexist."""

from __future__ import annotations

import importlib.metadata as md
import os
import subprocess
import sys

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from airflow_lineage_provider.hooks import local_spark


def test_pip_check_is_clean():
    proc = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pyspark_and_pyspark_client_are_the_same_release():
    assert md.version("pyspark") == md.version("pyspark-client")
    import pyspark

    assert pyspark.__version__ == md.version("pyspark")


def spark_ranges() -> dict[str, SpecifierSet]:
    """The provider's declared range of each of the two distributions that install the ``pyspark`` module."""
    out = {}
    for requirement in map(Requirement, md.requires("airflow-lineage-provider") or []):
        if requirement.name in ("pyspark", "pyspark-client") and requirement.marker is None:
            out[requirement.name] = requirement.specifier
    return out


def test_pyspark_and_pyspark_client_share_one_range_and_the_installed_pair_is_in_it():
    """A range, not a pin: the same one for both (pip cannot say "equal"; setup installs a pair, the test above
    checks it), at least Spark 4.0 to 4.3, so an image whose pyspark-client is 4.3 needs no downgrade."""
    ranges = spark_ranges()
    assert ranges.keys() == {"pyspark", "pyspark-client"} and ranges["pyspark"] == ranges["pyspark-client"]
    allowed = ranges["pyspark"]
    assert all(v in allowed for v in ("4.0.0", "4.1.4", "4.2.0", "4.3.0", "4.3.1")), allowed
    assert not any(v in allowed for v in ("3.5.9", "4.4.0")), allowed
    assert md.version("pyspark") in allowed and md.version("pyspark-client") in allowed


def test_spark_connect_client_imports():
    proc = subprocess.run([sys.executable, "-c", "import pyspark.sql.connect.session, pyspark.sql.connect.functions"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.spark
def test_bundled_spark_submit_runs_the_matching_spark():
    env = {**os.environ, **local_spark.local_env()}
    proc = subprocess.run([local_spark.spark_submit(), "--version"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0
    assert f"version {md.version('pyspark')}" in proc.stdout + proc.stderr


def test_static_extractor_runs_on_the_compiled_sqlglot():
    """sqlglot[c] installs sqlglotc of the same release; the extractor must not subclass its compiled classes."""
    import sqlglot.parser

    from airflow_lineage_provider.lineage.sql import SqlExtractor

    assert md.version("sqlglotc") == md.version("sqlglot")
    assert sqlglot.parser.__file__.endswith((".so", ".pyd")), sqlglot.parser.__file__
    x = SqlExtractor()
    x.run("CREATE TABLE t (a INT, b INT) USING parquet")
    [st] = x.statement("CREATE TABLE u AS SELECT a + b * 2 AS s FROM t", 0)
    assert st.warnings == () and st.method == "sql"
    assert {(i.field, i.subtype, i.expression) for i in st.column_map["s"]} == {
        ("a", "TRANSFORMATION", "(t.a + (t.b * 2))"), ("b", "TRANSFORMATION", "(t.a + (t.b * 2))")}


def test_the_wheel_ships_the_listener_jar_and_its_java_sources(tmp_path):
    """Built from this tree as pip builds it (its own build environment, as a user's pip), the wheel holds the JVM
    listener's committed jar, byte for byte, and its Java sources: the hook adds the jar to JVM applications."""
    import shutil
    import zipfile

    from airflow_lineage_provider.hooks import jvm_listener
    from tests.helpers import ROOT

    tree = tmp_path / "tree"  # a copy: a build writes build/ and *.egg-info beside the sources
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(".venv", ".git", ".airflow", "node_modules", "build",
                                                              "dist", "*.egg-info", "__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(tmp_path / "dist"), str(tree)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [wheel] = (tmp_path / "dist").glob("airflow_lineage_provider-*.whl")
    package = jvm_listener.JAR.parents[2]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        jar = jvm_listener.JAR.relative_to(package.parent).as_posix()
        assert archive.read(jar) == jvm_listener.JAR.read_bytes()
    sources = {p.relative_to(package.parent).as_posix() for p in jvm_listener.JAVA_SOURCES.rglob("*.java")}
    assert sources and sources <= names, sorted(sources - names)
    for entry in jvm_listener.CLASS_ENTRIES:
        assert f"airflow_lineage_provider/job/listener/java/{entry[:-len('.class')]}.java" in names
