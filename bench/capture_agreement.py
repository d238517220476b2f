"""Do the two captures give the same lineage? The 103 TPC-DS queries, each written as a CTAS, run by
the Python driver (its py4j capture) with the JVM listener (``job/listener``) added to the same job.

Prints how many writes each capture reported, on how many their documents are equal edge for edge,
and the statements that differ. (The corpus is held to the same in the test suite,
``tests/integration/test_jvm_listener.py``.) Empty tables: the plans are TPC-DS's, the data is not.

    python bench/capture_agreement.py
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from common import ROOT  # noqa: F401  (puts the project on sys.path)

from airflow_lineage_provider.hooks import jvm_listener, local_spark
from airflow_lineage_provider.job.dump import read_dump
from airflow_lineage_provider.lineage.extract import from_records
from tests.helpers import TPCDS, tpcds_queries


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-agreement-"))
    schema = (TPCDS / "schema.sql").read_text()
    statements = ["CREATE DATABASE IF NOT EXISTS tpcds", "CREATE DATABASE IF NOT EXISTS tpcds_out", "USE tpcds",
                  *(s for s in schema.split(";") if s.strip())]
    statements += [f"CREATE TABLE tpcds_out.{name} USING parquet AS {sql}" for name, sql in tpcds_queries()]
    (base / "dump").mkdir()
    (base / "dump" / "script.sql").write_text("".join(s.strip() + ";\n" for s in statements))
    conf = {**local_spark.local_conf(str(base / "state")), **jvm_listener.listener_conf(None, str(base / "jvm")),
            "spark.jars": str(jvm_listener.JAR)}
    start = time.perf_counter()
    local_spark.run_driver(str(base / "dump"), conf=conf, keep_going=True, quiet=True)
    print(f"ran {len(statements)} statements in {time.perf_counter() - start:.0f} s")
    python, jvm = read_dump(str(base / "dump")), read_dump(str(base / "jvm"))
    refused = [s for s in python.statements if s["status"] == "failed"]
    print(f"Spark refused {len(refused)} (a CTAS of a query with two columns of one name)")
    theirs = [s for s in from_records(python.records).to_dict()["statements"] if s.get("target")]
    mine = from_records(jvm.records).to_dict()["statements"]
    print(f"writes: py4j capture {len(theirs)}, JVM listener {len(mine)}; warnings {python.warnings + jvm.warnings}")
    edges = sum(len(i) for s in theirs for i in s["columns"].values()) + sum(len(s.get("indirect", [])) for s in theirs)
    same = 0
    for a, b in zip(mine, theirs):
        if json.dumps([a[k] for k in ("target", "columns")] + [a.get("indirect"), a.get("warnings")], sort_keys=True) \
                == json.dumps([b[k] for k in ("target", "columns")] + [b.get("indirect"), b.get("warnings")],
                              sort_keys=True):
            same += 1
        else:
            print(f"  differs: {b['sql'][:100]}")
    print(f"the same on {same} of {len(theirs)} writes ({edges} edges in the py4j capture's documents)")


if __name__ == "__main__":
    main()
