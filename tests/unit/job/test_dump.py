"""job/dump.py: the job's dump, written and read through one type."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_provider.job import dump
from airflow_lineage_provider.job.dump import DumpWriter, JobResult, read_dump

DS = "org.apache.spark.sql.execution.datasources."

RECORD_A = {"index": 0, "sql": "INSERT INTO t SELECT 1", "line": 1, "kind": "write",
            "plan": [{"class": DS + "InsertIntoHadoopFsRelationCommand", "num-children": 0}],
            "extras": {"write": {"path": "file:/wh/t", "mode": "append"}}}
RECORD_B = {"index": 2, "sql": "SELECT 'ünïcode; ok'", "line": 4, "kind": "query",
            "plan": [{"class": "org.apache.spark.sql.catalyst.plans.logical.OneRowRelation$", "num-children": 0}],
            "extras": {}}
RESULT = {"statements": [{"index": 0, "status": "ok"}, {"index": 1, "status": "ok"}, {"index": 2, "status": "ok"}],
          "error": None, "warnings": ["a warning from the job"], "spark_version": "4.2.0"}


def test_round_trip(tmp_path):
    writer = DumpWriter(str(tmp_path / "out"))
    writer.record(RECORD_A)
    writer.record(RECORD_B)
    writer.finish(JobResult(**RESULT))

    result = read_dump(str(tmp_path / "out"))
    assert result == JobResult(records=[RECORD_A, RECORD_B], statements=RESULT["statements"], error=None,
                               warnings=["a warning from the job"], spark_version="4.2.0")
    assert not result.failed
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [dump.PLANS, dump.RESULT]


def test_one_json_line_per_record(tmp_path):
    writer = DumpWriter(str(tmp_path))
    writer.record(RECORD_A)
    writer.record(RECORD_B)
    writer.finish(JobResult(**RESULT))
    lines = (tmp_path / dump.PLANS).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [RECORD_A, RECORD_B]


def test_records_survive_a_crash_before_finish(tmp_path):
    writer = DumpWriter(str(tmp_path))
    writer.record(RECORD_A)  # no finish(): the driver died
    result = read_dump(str(tmp_path))
    assert result.records == [RECORD_A]
    assert result.statements == []
    assert result.warnings == ["the job left no result file (it was killed or crashed before the end)"]


def test_writer_appends_to_an_existing_dump(tmp_path):
    first = DumpWriter(str(tmp_path))
    first.record(RECORD_A)
    first.finish(JobResult())
    second = DumpWriter(str(tmp_path))
    second.record(RECORD_B)
    second.finish(JobResult(**RESULT))
    assert read_dump(str(tmp_path)).records == [RECORD_A, RECORD_B]


def test_empty_directory_gives_warnings(tmp_path):
    result = read_dump(str(tmp_path))
    assert result.records == []
    assert result.statements == []
    assert result.error is None
    assert result.spark_version is None
    assert result.warnings == [
        f"no plan dump at {tmp_path / dump.PLANS}",
        "the job left no result file (it was killed or crashed before the end)",
    ]
    assert not result.failed


def test_missing_directory_gives_warnings(tmp_path):
    result = read_dump(str(tmp_path / "never-created"))
    assert result.records == []
    assert len(result.warnings) == 2


def test_torn_line_is_a_warning(tmp_path):
    good = json.dumps(RECORD_A)
    torn = json.dumps(RECORD_B)[:25]
    (tmp_path / dump.PLANS).write_text(f"{good}\n{torn}\n\n{json.dumps(RECORD_B)}\n", encoding="utf-8")
    (tmp_path / dump.RESULT).write_text(json.dumps(RESULT), encoding="utf-8")

    result = read_dump(str(tmp_path))
    assert result.records == [RECORD_A, RECORD_B]
    assert len(result.warnings) == 2
    assert result.warnings[0].startswith("plan dump line 2 unreadable: ")
    assert result.warnings[1] == "a warning from the job"


def test_torn_last_line(tmp_path):
    (tmp_path / dump.PLANS).write_text(json.dumps(RECORD_A) + "\n" + '{"index": 1, "pl', encoding="utf-8")
    result = read_dump(str(tmp_path))
    assert result.records == [RECORD_A]
    assert result.warnings[0].startswith("plan dump line 2 unreadable: ")


def test_unreadable_result_file(tmp_path):
    (tmp_path / dump.PLANS).write_text(json.dumps(RECORD_A) + "\n", encoding="utf-8")
    (tmp_path / dump.RESULT).write_text('{"statements": [', encoding="utf-8")
    result = read_dump(str(tmp_path))
    assert result.records == [RECORD_A]
    assert result.statements == []
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith("job result unreadable: ")


@pytest.mark.parametrize(
    ("statements", "error", "failed"),
    [
        ([{"index": 0, "status": "ok"}], None, False),
        ([{"index": 0, "status": "ok"}, {"index": 1, "status": "failed"}], None, True),
        ([], {"message": "AnalysisException"}, True),
        ([], None, False),
    ],
)
def test_failed(statements, error, failed):
    assert JobResult(statements=statements, error=error).failed is failed


def test_failed_job_read_back(tmp_path):
    writer = DumpWriter(str(tmp_path))
    writer.finish(JobResult(statements=[{"index": 0, "status": "failed"}],
                            error={"index": 0, "message": "Table not found"}))
    result = read_dump(str(tmp_path))
    assert result.failed
    assert result.error == {"index": 0, "message": "Table not found"}
    assert result.records == []
    assert result.warnings == []


@pytest.mark.parametrize("version", ["3.5.9", "4.0.5", "4.1.4", "4.2.0", "4.3.0"])
def test_a_tested_release_reads_without_a_warning(tmp_path, version):
    writer = DumpWriter(str(tmp_path))
    writer.record(RECORD_A)
    writer.finish(JobResult(spark_version=version))
    assert read_dump(str(tmp_path)).warnings == []


@pytest.mark.parametrize("version", ["3.4.4", "4.4.0", "5.0.0-preview1"])
def test_a_release_the_readers_never_saw_warns_naming_it(tmp_path, version):
    """Its plans may name a node or field otherwise: what the digest cannot read would be lost without a word."""
    from airflow_lineage_provider.lineage.extract import from_records

    writer = DumpWriter(str(tmp_path))
    writer.record(RECORD_A)
    writer.finish(JobResult(spark_version=version))
    result = read_dump(str(tmp_path))
    [warning] = result.warnings
    assert f"Spark {version} " in warning and "not tested" in warning and "4.3" in warning
    assert from_records(result.records, result.warnings).warnings == (warning,)


def test_a_job_that_captured_nothing_needs_no_release_warning(tmp_path):
    writer = DumpWriter(str(tmp_path))
    writer.finish(JobResult(spark_version="9.9.9"))
    assert read_dump(str(tmp_path)).warnings == []
