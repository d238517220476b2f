"""One in-process SparkSession for the whole test run (Hive catalog in the session's temp home), and the runs
of the corpus and TPC-DS in it that several modules read: each made once per test session."""

from __future__ import annotations

import os

import pytest

from airflow_lineage_provider.hooks import local_spark
from tests.helpers import DATA, analyzed_record
from tests.rowlevel import rowlevel_conf


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    for key, value in local_spark.local_env().items():
        os.environ.setdefault(key, value)
    state = os.path.join(os.environ["AIRFLOW_HOME"], "spark_inprocess")
    builder = SparkSession.builder.master("local[2]").appName("airflow-lineage-tests")
    # The row-level test catalog ``rowcat`` (tests/rowlevel.py): MERGE, UPDATE and DELETE really run.
    for key, value in {**local_spark.local_conf(state), **rowlevel_conf()}.items():
        builder = builder.config(key, value)
    session = builder.enableHiveSupport().getOrCreate()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def analyze(spark):
    """Lineage of one statement, analyzed (never executed) in the shared session."""
    from airflow_lineage_provider.lineage.plan import resolve

    def run(sql: str, index: int = 0, write: int = 0):
        return resolve.extract(analyzed_record(spark, sql, index, write))

    run.spark = spark  # a case's setup runs in the same session
    return run


def load_corpus_schema(spark) -> None:
    """The corpus schema (tests/data/corpus_schema.sql) and its Python UDF, made current in ``spark``."""
    spark.udf.register("py_upper", lambda s: s.upper() if s else s)
    for stmt in (DATA / "corpus_schema.sql").read_text().split(";\n"):
        if stmt.strip():
            spark.sql(stmt)


@pytest.fixture(scope="module")
def corpus(spark):
    """The corpus schema in the shared session, made current again for each module that uses it (other
    modules switch the session's database)."""
    load_corpus_schema(spark)
    return spark


@pytest.fixture(scope="session")
def corpus_plans(spark):
    """Every corpus case analyzed (never executed) once per test session, in the corpus's order, each after
    its setup: the plan records that ``test_corpus``, ``test_agreement`` and ``test_coverage`` each read."""
    from tests.integration.case import Analyzed, prepare
    from tests.integration.corpus import CASES

    load_corpus_schema(spark)
    records: dict = {}
    for case in CASES:
        try:
            prepare(spark, case)
            records[case.name] = analyzed_record(spark, case.sql, write=case.write)
        except Exception as error:  # noqa: BLE001 - kept for the case's own test to raise
            records[case.name] = error
    return Analyzed(records)


@pytest.fixture(scope="session")
def rowlevel_plans(spark):
    """Every row-level write of the corpus (MERGE, UPDATE, DELETE of ``acct``) run for real on the tests' row-level
    catalog in each of its modes, once per test session, its table made anew each time: the plan records, by
    (case name, mode), that ``test_rowlevel`` and ``test_coverage`` read."""
    from airflow_lineage_provider.job.capture import PlanCapture
    from tests.integration.case import Analyzed, prepare
    from tests.integration.corpus import CASES
    from tests.integration.test_rowlevel import MODES, on_rowcat, reset

    load_corpus_schema(spark)
    capture = PlanCapture(spark)
    records: dict = {}
    for case in (c for c in CASES if c.target == "acct"):
        for mode in MODES:
            try:
                prepare(spark, case)
                reset(spark, mode)
                record = capture.describe(spark.sql(on_rowcat(case.sql, mode))._jdf.queryExecution().analyzed())
                record.update(index=0, sql=case.sql)
                records[case.name, mode] = record
            except Exception as error:  # noqa: BLE001 - kept for the case's own test to raise
                records[case.name, mode] = error
    return Analyzed(records)


@pytest.fixture(scope="session")
def demo_file_run(airflow_db, tmp_path_factory):
    """The example DAG run once per worker, with OpenLineage's file transport and no schema cache yet: (the run,
    its events). ``test_example_dag`` reads its XCom and asset events, ``test_openlineage`` its events, ``test_ui``
    and ``test_trace_ui`` find it as the DAG's latest run (one group in ``tests/workers.py``)."""
    from tests.integration.test_openlineage import forget_demo_schemas, run_with_file_transport

    forget_demo_schemas()
    return run_with_file_transport("spark_column_lineage_demo.py", tmp_path_factory.mktemp("openlineage"))


@pytest.fixture(scope="session")
def tpcds_records(spark):
    """(name, mode, record) of the 103 TPC-DS queries, analyzed once per test session (``test_tpcds`` and
    ``test_agreement`` read them)."""
    from tests.helpers import capture_tpcds, create_tpcds_schema

    create_tpcds_schema(spark)
    try:
        return capture_tpcds(spark)
    finally:
        spark.sql("USE default")


@pytest.fixture(scope="module")
def pg():
    """A real PostgreSQL on 127.0.0.1 (``tests/integration/postgres.py``), or the test skips saying why."""
    from tests.integration import postgres

    why = postgres.ensure_installed()
    if why:
        pytest.skip(why)
    with postgres.shop_server() as server:
        yield server


@pytest.fixture(scope="session")
def jvm_corpus(tmp_path_factory):
    """Each corpus case's verdict through the JVM listener beside the py4j capture (``jvm_corpus.py``)."""
    from tests.integration import jvm_corpus

    return jvm_corpus.run(tmp_path_factory.mktemp("jvm_corpus"))
