"""The corpus's writes run through both captures at once: the Python driver's py4j capture, and the JVM
listener (``job/listener``) added to the same job. Run once per test session; ``test_jvm_listener.py``
holds the documents equal, and ``test_coverage.py`` shows per case what was checked.
"""

from __future__ import annotations

from pathlib import Path

from airflow_lineage_provider.hooks import jvm_listener, local_spark
from airflow_lineage_provider.job.dump import read_dump
from airflow_lineage_provider.lineage.extract import from_records
from airflow_lineage_provider.lineage.statements import split_statements
from tests.helpers import DATA
from tests.integration.corpus import CASES
from tests.integration.test_rowlevel import MODES, on_rowcat, reset_statements
from tests.rowlevel import rowlevel_conf

LISTENER_JAR = str(jvm_listener.JAR)
SAME = "same"
NO_WRITE = "no write"  # a bare query: the listener captures writes only


def listener_conf(dump: str) -> dict[str, str]:
    """What the hook adds to a JVM application's spark-submit: the listeners and where they dump."""
    return jvm_listener.listener_conf(None, dump)


def _edges(statement: dict) -> tuple:
    return statement["target"], statement["columns"], statement.get("indirect"), statement.get("warnings")


def run(base: Path) -> dict[str, str]:
    """Each corpus case's verdict: ``same``, ``differs: ...``, ``not run: <Spark's error>`` or ``no write``;
    ``base``: an empty directory for the run's catalog and both dumps."""
    statements: list[str] = [s.sql for s in split_statements((DATA / "corpus_schema.sql").read_text())]
    case_at: dict[int, str] = {}
    for case in CASES:
        if case.target:
            statements += [s.sql for s in split_statements(case.setup)]
            case_at[len(statements)] = case.name
            statements.append(case.sql)
        if case.target == "acct":  # a row-level write: also as it runs on the tests' row-level catalog
            for mode in MODES:
                statements += reset_statements(mode)
                case_at[len(statements)] = case.name
                statements.append(on_rowcat(case.sql, mode))
    (base / "dump").mkdir()
    (base / "dump" / "script.sql").write_text("".join(s.rstrip().rstrip(";") + ";\n" for s in statements))
    conf = {**local_spark.local_conf(str(base / "state")), **rowlevel_conf(), **listener_conf(str(base / "jvm"))}
    conf["spark.jars"] += "," + LISTENER_JAR
    # ~250 small writes: compiling each one's whole-stage Java costs more than it saves (10% of the job's CPU);
    # the lineage comes from the analyzed plans, which codegen never touches.
    conf["spark.sql.codegen.wholeStage"] = "false"
    # keep_going: Spark refuses some cases the corpus only analyzes (MERGE into parquet); neither
    # capture sees a refused statement.
    local_spark.run_driver(str(base / "dump"), conf=conf, keep_going=True, quiet=True)
    python, jvm = read_dump(str(base / "dump")), read_dump(str(base / "jvm"))
    if python.warnings or jvm.warnings:
        raise AssertionError(f"a capture did not finish: {python.warnings + jvm.warnings}")
    verdicts = {case.name: NO_WRITE for case in CASES}
    # A case may run more than once (a row-level write: on parquet, then in each row-level mode): one that
    # ran anywhere is judged by its runs; the refusals of the others are no verdict.
    for status in python.statements:
        if status["status"] == "failed" and status["index"] in case_at:
            message = status["error"]["message"]
            verdicts[case_at[status["index"]]] = "not run: " + message[message.find("["):message.find("]") + 1]
    theirs = [s for s in from_records(python.records).to_dict()["statements"] if s.get("target")]
    mine = from_records(jvm.records).to_dict()["statements"]
    if [s["target"] for s in mine] != [s["target"] for s in theirs]:
        raise AssertionError("the two captures reported different writes: "
                             f"{[s['target'] for s in mine]} != {[s['target'] for s in theirs]}")
    for a, b in zip(mine, theirs):
        name = case_at.get(b["index"])
        if name is None or verdicts[name].startswith("differs"):
            continue
        verdicts[name] = SAME if _edges(a) == _edges(b) else f"differs: {b['sql'][:60]}"
    return verdicts
