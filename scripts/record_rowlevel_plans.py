"""Record the row-level plan fixtures ``tests/data/plans/rowlevel_*.json`` (run by hand, not by the tests).

Each statement is recorded in the plan shapes Spark gives it: ``analyzed``, analyzed on the corpus's
parquet table ``acct`` (the ``MergeIntoTable`` / ``UpdateTable`` / ``DeleteFromTable`` of a dry run),
and ``cow`` / ``mor``, run for real on the tests' row-level catalog (``tests/rowlevel.py``) in
copy-on-write and merge-on-read mode, where the analyzer rewrites it into ``ReplaceData`` or
``WriteDelta`` (``InsertOnlyMerge`` for a MERGE with INSERT clauses only). The statements are corpus
cases (``tests/integration/corpus_spark4.py``, ``CASES`` below), so the lineage the integration tests
hold them to is the truth the unit tests (``tests/unit/lineage/plan/test_rowlevel.py``) read the
fixtures against, with no JVM; ``EXTRA`` adds one that is not.

Re-record (needs a JDK to compile the row-level catalog, as ``tests/integration/test_rowlevel.py`` does):

    .venv/bin/python scripts/record_rowlevel_plans.py

A record is the capture's (``PlanCapture.describe``) with ``index`` and ``sql``, as the other fixtures
are; ``sql`` is the statement that ran (the row-level catalog's tables for ``cow`` / ``mor``). The
session's temporary directory is written as ``/wh``, so that no path of the recording machine is kept.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from tests.helpers import DATA, PLANS, analyzed_record  # noqa: E402 - the repository is put on the path above
from tests.integration.corpus_spark4 import SPARK4_CASES  # noqa: E402
from tests.integration.test_rowlevel import MODES, on_rowcat, reset  # noqa: E402

# The corpus cases recorded: UPDATE and INSERT clauses; a conditional DELETE beside an UPDATE; INSERT
# clauses only, which leave columns out; an UPDATE's WHERE; a DELETE's WHERE with a subquery. (The plain
# ``delete_where`` is left out: its analyzed plan is too small for test_digest.py's "lean is a third" check.)
CASES = ("merge_update_insert", "merge_conditional_delete_then_update", "merge_insert_only",
         "update_set_where", "delete_exists")
# Not a corpus case: a DELETE beside an INSERT that leaves columns out. Its rewritten shapes (a MergeRows,
# not an InsertOnlyMerge) give the left-out columns as NULL, and the plan extractor lists them as target
# columns with no source where the analyzed shape leaves them out (a known difference, test_rowlevel.py).
EXTRA = {
    "merge_delete_insert_some_columns": "MERGE INTO acct t USING acct_upd u ON t.id = u.id "
                                        "WHEN MATCHED AND u.op = 'D' THEN DELETE "
                                        "WHEN NOT MATCHED THEN INSERT (id, name) VALUES (u.id, upper(u.name))",
}


def statements() -> dict[str, str]:
    """Fixture stem -> SQL on the corpus's tables."""
    return {**{c.name: c.sql for c in SPARK4_CASES if c.name in CASES}, **EXTRA}


def session(directory: str):
    from pyspark.sql import SparkSession

    from airflow_lineage_provider.hooks import local_spark
    from tests.rowlevel import rowlevel_conf

    for key, value in local_spark.local_env().items():
        os.environ.setdefault(key, value)
    builder = SparkSession.builder.master("local[2]").appName("record-rowlevel-plans")
    for key, value in {**local_spark.local_conf(directory), **rowlevel_conf()}.items():
        builder = builder.config(key, value)
    return builder.enableHiveSupport().getOrCreate()


def record(directory: str) -> dict[str, dict]:
    """Every fixture's record, by file name."""
    from airflow_lineage_provider.job.capture import PlanCapture

    spark = session(directory)
    try:
        for stmt in (DATA / "corpus_schema.sql").read_text().split(";\n"):
            if stmt.strip():
                spark.sql(stmt)
        spark.sql("USE corpus")
        capture = PlanCapture(spark)
        out: dict[str, dict] = {}
        for stem, sql in statements().items():
            out[f"rowlevel_{stem}_analyzed"] = analyzed_record(spark, sql)
            for mode in MODES:
                reset(spark, mode)
                ran = on_rowcat(sql, mode)
                found = capture.describe(spark.sql(ran)._jdf.queryExecution().analyzed())
                found.update(index=0, sql=ran)
                out[f"rowlevel_{stem}_{mode}"] = found
        return out
    finally:
        spark.stop()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="rowlevel-plans-", ignore_cleanup_errors=True) as directory:
        for name, found in record(directory).items():
            text = json.dumps(found).replace(directory, "/wh")
            (PLANS / f"{name}.json").write_text(text + "\n")
            print(f"{name}: {found['plan'][0]['class'].rsplit('.', 1)[-1]}, {len(text)} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
