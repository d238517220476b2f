"""The shipped driver, its py4j capture, the lean plan digest and the JVM listener on the Spark releases
clusters run (``spark_versions.py``): every construct family of the corpus through THAT release's
``spark-submit``, compared with the worker release's documents. One ``spark-submit`` per release for the
corpus (the JVM listener in the same job), one more for the row-level writes (analyzed: Spark refuses to run
them on parquet). The releases' environments are downloaded once (300-500 MB each) and kept in
the tests' cache outside the checkout (``spark_versions.VENVS``); offline, a release that is not there is skipped, saying so.
"""

from __future__ import annotations

import json
import os

import pytest

from tests import jvm
from tests.integration import spark_versions as sv

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def row_level(cases):
    """The corpus's row-level writes (MERGE, UPDATE, DELETE): analyzed, never run, in a dry run."""
    return [c for c in cases if c.target == "acct"]


@pytest.fixture(scope="module")
def cases():
    return sv.representative()


@pytest.fixture(scope="module")
def reference(cases, tmp_path_factory):
    """The worker's own release (the project's ``.venv``): the documents every release is compared with."""
    base = tmp_path_factory.mktemp("spark-reference")
    ran = sv.run(None, [c for c in cases if c not in row_level(cases)], base / "run")
    dry = sv.run(None, row_level(cases), base / "dry", dry_run=True)
    return ran, dry


@pytest.fixture(scope="module", params=sv.RELEASES)
def release(request, cases, tmp_path_factory):
    """(release, its run of the corpus, its dry run of the row-level writes), with that release's spark-submit."""
    version = request.param
    env = sv.venv(version)
    if env is None:
        pytest.skip(f"pyspark=={version} is not installed in {sv.VENVS / version} and could not be installed "
                    "(offline?): run `bash scripts/spark_versions.sh` where PyPI is reachable")
    base = tmp_path_factory.mktemp(f"spark-{version}")
    home = sv.spark_home(env)
    ran = sv.run(home, [c for c in cases if c not in row_level(cases)], base / "run")
    dry = sv.run(home, row_level(cases), base / "dry", dry_run=True)
    return version, ran, dry


def test_every_construct_family_is_run(cases):
    from tests.integration.test_coverage import sections

    assert {sections().get(c.name, "other") for c in cases} == set(sections().values())
    assert row_level(cases), "the row-level writes are among them"


def test_the_driver_runs_on_that_releases_spark(release):
    version, ran, dry = release
    assert ran.result.spark_version == dry.result.spark_version == version
    assert ran.result.warnings == dry.result.warnings == [], "a tested release reads without a warning"
    assert ran.result.records and dry.result.records


def test_lineage_is_the_worker_releases_or_a_listed_difference(reference, release):
    """Every case's documents equal the worker release's, or the difference is listed with Spark's reason in
    ``spark_versions.DIFFERENCES`` (``docs/coverage.md``): a new difference fails, and so does a listed one gone."""
    version, ran, dry = release
    found = {**sv.compare(reference[0].verdicts, ran.verdicts), **sv.compare(reference[1].verdicts, dry.verdicts)}
    names = {c.name for c in sv.representative()}
    listed = {case: why for (line, case), why in sv.DIFFERENCES.items() if line == sv.line(version) and case in names}
    assert {case: found[case] for case in found.keys() - listed.keys()} == {}, "differences not listed"
    assert sorted(listed.keys() - found.keys()) == [], "listed differences that are gone"


def test_the_reference_lineage_is_complete(reference):
    """The comparison means something: the worker release ran every case but a few Spark refuses, and the dry
    run has each row-level write's documents."""
    ran, dry = reference
    assert sum(isinstance(v, list) for v in ran.verdicts.values()) >= 60
    assert all(isinstance(v, list) and v[0]["target"] for v in dry.verdicts.values()), dry.verdicts


def test_the_jvm_listener_loads_and_captures_on_that_release(release):
    """One listener jar for Scala 2.12 (Spark 3.5) and 2.13 (Spark 4): it gives the py4j capture's lineage
    edge for edge, on every write of the run."""
    version, ran, _ = release
    assert sv.listener_differences(ran) == []


@pytest.mark.parametrize("version", sv.RELEASES)
def test_the_hook_runs_on_the_spark_a_connection_finds_on_path(version, airflow_db, monkeypatch, tmp_path):
    """As a user points a Spark connection at their cluster's release: a connection with a host, whose
    ``spark-submit`` is found on PATH in that release's ``bin`` (its SPARK_HOME), the hook's own client-mode
    driver Python (the worker's), and the lineage a 4.2 worker reads from that release's dump."""
    from airflow_lineage_provider.hooks import local_spark
    from airflow_lineage_provider.hooks.spark_lineage import SparkLineageHook
    from airflow_lineage_provider.lineage.extract import from_records

    env = sv.venv(version)
    if env is None:
        pytest.skip(f"pyspark=={version} is not installed in {sv.VENVS / version} (offline?)")
    home = sv.spark_home(env)
    monkeypatch.setenv("PATH", f"{home / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("SPARK_HOME", str(home))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_RELEASE", json.dumps({"conn_type": "spark", "host": "local[2]"}))
    hook = SparkLineageHook(conn_id="spark_release", conf=local_spark.local_conf(str(tmp_path / "state")))
    with jvm.options_for(home) as options:  # the release's own class-data archive
        monkeypatch.setenv("SPARK_SUBMIT_OPTS", options)
        result = hook.run_sql("CREATE TABLE src (a INT, b STRING) USING parquet;\n"
                              "CREATE TABLE out USING parquet AS SELECT a, upper(b) AS ub FROM src WHERE a > 0;\n")
    assert result.error is None and result.spark_version == version and result.warnings == []
    [st] = from_records(result.records, result.warnings).statements
    assert st.target.table == "spark_catalog.default.out" and st.confidence == 1.0 and st.warnings == ()
    assert {c: {(i.field, i.subtype) for i in inputs} for c, inputs in st.columns} == {
        "a": {("a", "IDENTITY")}, "ub": {("b", "TRANSFORMATION")}}
