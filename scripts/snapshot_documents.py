"""Snapshot every lineage document of the corpus, TPC-DS, the wide queries and the plan fixtures.

For refactors and new handlers: the documents before and after a change are compared one by
one. Both extractors are run (plan and static), and the lean digest's names, target, schemas
and warnings are kept too.

    python scripts/snapshot_documents.py capture OUT_DIR        # analyze on local Spark, then extract
    python scripts/snapshot_documents.py extract OUT_DIR RECORDS # extract again from captured records
    python scripts/snapshot_documents.py compare A/docs.json B/docs.json

``capture`` writes ``OUT_DIR/records.json`` (the captured records) and ``OUT_DIR/docs.json``;
``extract`` re-extracts from the records of an earlier capture, so that a change to the
extractors alone is compared on the very same plans. ``compare`` prints the documents that
differ (the warehouse's temporary path is ignored) and exits 1 if any does.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from plan_extract import wide_query  # noqa: E402 - bench/ is put on the path above

from airflow_lineage_provider.lineage.plan import digest, resolve  # noqa: E402
from airflow_lineage_provider.lineage.sql import SqlExtractor  # noqa: E402
from tests.helpers import DATA, PLANS, TPCDS, analyzed_record, capture_tpcds, create_tpcds_schema  # noqa: E402
from tests.integration.case import prepare  # noqa: E402
from tests.integration.corpus import CASES  # noqa: E402

WIDTHS = (250, 500, 1000)


def capture() -> dict[str, dict[str, Any]]:
    """Records of every corpus case, TPC-DS query and wide query, analyzed on a local Spark."""
    from pyspark.sql import SparkSession

    from airflow_lineage_provider.hooks import local_spark
    from airflow_lineage_provider.job.capture import PlanCapture

    for key, value in local_spark.local_env().items():
        os.environ.setdefault(key, value)
    builder = SparkSession.builder.master("local[2]").appName("snapshot-documents")
    for key, value in local_spark.local_conf(tempfile.mkdtemp(prefix="snapshot-")).items():
        builder = builder.config(key, value)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.udf.register("py_upper", lambda s: s.upper() if s else s)
    for stmt in (DATA / "corpus_schema.sql").read_text().split(";\n"):
        if stmt.strip():
            spark.sql(stmt)
    spark.sql("USE corpus")
    records = {}
    for case in CASES:
        prepare(spark, case)  # the tables and views the case reads
        records[f"corpus/{case.name}"] = analyzed_record(spark, case.sql)
    create_tpcds_schema(spark)
    records.update({f"tpcds/{name}": record for name, _, record in capture_tpcds(spark)})
    spark.sql("USE tpcds")
    capture = PlanCapture(spark)
    for width in WIDTHS:
        ddl, sql = wide_query(width)
        spark.sql(ddl)
        record = capture.describe(spark.sql(sql)._jdf.queryExecution().analyzed())
        record.update(index=0, sql=sql)
        records[f"wide/{width}"] = record
    spark.stop()
    return records


def documents(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per record: the plan document, the static documents, and the lean digest's summary."""
    records = {**records, **{f"fixture/{p.stem}": json.loads(p.read_text()) for p in sorted(PLANS.glob("*.json"))}}
    corpus = SqlExtractor()
    corpus.run((DATA / "corpus_schema.sql").read_text())
    tpcds = SqlExtractor(database="tpcds")
    tpcds.run((TPCDS / "schema.sql").read_text())

    setups = {f"corpus/{case.name}": case.setup for case in CASES}

    def static(base: SqlExtractor, sql: str, setup: str = "") -> list[dict[str, Any]]:
        extractor = SqlExtractor(catalog=base.catalog.copy())
        if setup:
            extractor.run(setup)
        return [s.to_dict() for s in extractor.statement(sql, 0)]

    docs = {}
    for key, record in records.items():
        lean = digest.digest(record)
        doc = {"plan": resolve.extract(record).to_dict(), "lean_names": lean["names"], "lean_target": lean["target"],
               "lean_schemas": lean["schemas"], "lean_warnings": lean["warnings"], "lean_nodes": len(lean["nodes"])}
        if key.startswith("corpus/"):
            doc["static"] = static(corpus, record["sql"], setups.get(key, ""))
        elif key.startswith("tpcds/"):
            doc["static"] = static(tpcds, record["sql"])
        elif key.startswith("wide/"):
            ddl, sql = wide_query(int(key.split("/")[1]))
            wide = SqlExtractor(database="tpcds")
            wide.run(ddl)
            doc["static"] = [s.to_dict() for s in wide.statement(sql, 0)]
        docs[key] = doc
    return docs


def compare(a: Path, b: Path) -> int:
    def load(path: Path) -> dict[str, Any]:
        return json.loads(re.sub(r"/tmp/snap(shot)?-[A-Za-z0-9_]+", "/SNAPSHOT", path.read_text()))

    left, right = load(a), load(b)
    differ = sorted(k for k in left.keys() | right.keys() if left.get(k) != right.get(k))
    for key in differ:
        parts = sorted(p for p in (left.get(key) or {}).keys() | (right.get(key) or {}).keys()
                       if (left.get(key) or {}).get(p) != (right.get(key) or {}).get(p))
        print(f"differs: {key} ({', '.join(parts) or 'missing'})")
    print(f"{len(left)} and {len(right)} documents; {len(differ)} differ")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    if len(argv) in (2, 3) and argv[0] in ("capture", "extract"):
        out = Path(argv[1])
        out.mkdir(parents=True, exist_ok=True)
        if argv[0] == "capture":
            records = capture()
            (out / "records.json").write_text(json.dumps(records))
        else:
            records = json.loads(Path(argv[2]).read_text())
        docs = documents(records)
        (out / "docs.json").write_text(json.dumps(docs, indent=0, sort_keys=True))
        print(f"{len(docs)} documents in {out / 'docs.json'}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
