"""The project's driver on the Spark releases clusters run: every construct family of the corpus once, in one
``spark-submit`` per release, with THAT release's ``spark-submit`` (``SPARK_HOME`` pointed at its distribution,
as a user points the connection's ``spark-binary`` / ``SPARK_HOME`` at their cluster's Spark).

The releases live in second virtual environments, ``<CACHE>/spark-venvs-py<3.N>/<X>`` (only ``pyspark==X``), made by
``scripts/spark_versions.sh`` and kept across runs and clones. The worker's own release (the project's ``.venv``) is the
reference: each release's documents are compared with its documents, statement by statement.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow_lineage_provider.hooks import jvm_listener, local_spark
from airflow_lineage_provider.job import command
from airflow_lineage_provider.job.dump import JobResult, read_dump
from airflow_lineage_provider.lineage.extract import from_records
from airflow_lineage_provider.lineage.statements import split_statements
from tests import jvm
from tests.helpers import CACHE, DATA, ROOT
from tests.integration.case import Case
from tests.integration.corpus import CASES

# One set per Python of the worker (scripts/spark_versions.sh names its default alike).
VENVS = Path(os.environ.get("AIRFLOW_LINEAGE_SPARK_VENVS") or CACHE / f"spark-venvs-py{sys.version_info[0]}.{sys.version_info[1]}")
# The cluster releases tested besides the worker's own: the Spark 3.5 line (Scala 2.12) and the newest 4.x.
RELEASES = tuple(os.environ.get("AIRFLOW_LINEAGE_SPARK_VERSIONS", "3.5.9 4.3.0").split())
SAME = "same"

# Where a release's documents differ from the worker release's, and Spark's reason (docs/coverage.md lists
# them): {(release line, case): reason}. A difference not listed here fails the test; one listed that is gone
# fails it too, so the list stays true.
_NO_RECURSION_35 = "`WITH RECURSIVE` is new in Spark 4.1: Spark 3.5 fails to parse it (PARSE_SYNTAX_ERROR), nothing runs"
_NO_RECURSION_40 = ("`WITH RECURSIVE` is new in Spark 4.1: Spark 4.0 parses it but fails the statement in analysis "
                    "('transpose requires all collections have the same size'), nothing runs")
DIFFERENCES: dict[tuple[str, str], str] = {
    ("3.5", "recursive_cte"): _NO_RECURSION_35,
    ("3.5", "st_recursive_cte_insert"): _NO_RECURSION_35,
    ("3.5", "st_pipe_select_table"): "SQL pipe syntax (`|>`) is new in Spark 4.0: Spark 3.5 fails to parse it",
    ("3.5", "st_struct_star_except"): "`* EXCEPT (...)` is new in Spark 4.0: Spark 3.5 fails to parse it",
    ("3.5", "sql_table_function"): "SQL functions (`CREATE FUNCTION ... RETURNS TABLE ... RETURN`) are new in Spark "
                                   "4.0: Spark 3.5 fails to parse the function, then to resolve the call "
                                   "(UNRESOLVABLE_TABLE_VALUED_FUNCTION)",
    ("3.5", "st_identifier_var_ctas"): "session variables (`DECLARE VARIABLE`) are new in Spark 4.0: Spark 3.5 fails "
                                       "to parse the declaration, then to resolve the variable (UNRESOLVED_COLUMN)",
    ("4.0", "recursive_cte"): _NO_RECURSION_40,
    ("4.0", "st_recursive_cte_insert"): _NO_RECURSION_40,
    # Found in the whole corpus by hand (AIRFLOW_LINEAGE_SPARK_CORPUS=all): Spark 3.5 names or words a column
    # otherwise; its sources and subtypes are the same.
    ("3.5", "st_name_predicates"): "Spark 3.5's parser rewrites `age BETWEEN 1 AND 3` to `((age >= 1) AND (age <= 3))` "
                                   "and names the column so; Spark 4 keeps `between(age, 1, 3)`: same sources",
    ("3.5", "st_name_interval_view"): "Spark 3.5 calls timestamp + interval `timeadd`, Spark 4 "
                                      "`timestampaddinterval`: the expression's text differs, its sources do not",
    # Spark 3.5's Hive metastore refuses a column name with a comma after the CTAS has written its files: the
    # statement fails (no lineage from the driver), and the JVM listener reports the insert that ran, into the path.
    **{("3.5", case): "Spark 3.5's Hive metastore refuses a column name with a comma (`Cannot create a table having a "
                      "column whose name contains commas`); Spark 4 accepts it: the statement fails, no lineage"
       for case in ("st_empty_ctas_concat_ws", "st_pivot_struct_values_ctas", "st_named_args_cms_ctas")},
}
# The whole corpus (595 cases) run by hand on 2026-11-27 (AIRFLOW_LINEAGE_SPARK_CORPUS=all), for docs/coverage.md.
WHOLE_CORPUS = (
    "The whole corpus, by hand (`AIRFLOW_LINEAGE_SPARK_CORPUS=all`, 595 cases, 2026-11-27): on **4.3.0** every case's "
    "documents equal 4.2.0's, and the JVM listener's equal the py4j capture's on all 156 writes. On **3.5.9** 455 "
    "cases are the same; 138 do not run because Spark 3.5 lacks the syntax or feature (113 fail to parse: 91 pipe "
    "syntax, 4 `WITH RECURSIVE`, 18 others such as `* EXCEPT`, `DECLARE VARIABLE`, `EXECUTE IMMEDIATE`; 9 call SQL "
    "table functions, 1 a SQL function; 7 read a session variable through `IDENTIFIER`; 3 use `IN (*)` or "
    "`struct(s.*)` in a condition; 1 orders GROUPING SETS by a name Spark 3.5 does not give; 1 is a correlated scalar "
    "subquery Spark 3.5 wants aggregated; 3 CTAS are refused by 3.5's Hive metastore, listed below); 2 have the same "
    "sources under a name or text Spark 3.5 words otherwise (listed below). None is a plan node or field the digest "
    "reads differently. 4.0.5 and 4.1.4 were run on the families above only."
)


def line(version: str) -> str:
    """``3.5.9`` -> ``3.5``: a release line, as the differences are keyed."""
    return ".".join(version.split(".")[:2])


def venv(version: str) -> Path | None:
    """The release's virtual environment, made by ``scripts/spark_versions.sh`` if missing; ``None`` when it
    cannot be made (offline): the caller skips, saying so."""
    where = VENVS / version
    if not (where / ".installed").exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "spark_versions.sh"), version], check=False,
                       env={**os.environ, "AIRFLOW_LINEAGE_SPARK_VENVS": str(VENVS)})
    return where if (where / ".installed").exists() else None


def spark_home(env: Path) -> Path:
    """The Spark distribution a pip-installed pyspark is: its ``bin/spark-submit`` and ``jars``."""
    [home] = env.glob("lib/python3*/site-packages/pyspark")
    return home


def representative() -> list[Case]:
    """Every construct family of the corpus once: the first case of each ``# -- section --`` of the corpus
    modules (the sections ``docs/coverage.md`` is drawn in). ``AIRFLOW_LINEAGE_SPARK_CORPUS=all``: every case
    (one ``spark-submit`` of ~600 statements per release; by hand, not in CI)."""
    from tests.integration.test_coverage import sections

    if os.environ.get("AIRFLOW_LINEAGE_SPARK_CORPUS") == "all":
        return list(CASES)
    seen: set[str] = set()
    out: list[Case] = []
    by_case = sections()
    for case in CASES:
        title = by_case.get(case.name, "other")
        if title not in seen:
            seen.add(title)
            out.append(case)
    return out


def script(cases: list[Case]) -> tuple[str, dict[int, str]]:
    """One script: the corpus schema, then each case's setup and statement; the statement index of each case."""
    statements = [s.sql for s in split_statements((DATA / "corpus_schema.sql").read_text())]
    case_at: dict[int, str] = {}
    for case in cases:
        statements += [s.sql for s in split_statements(case.setup)]
        case_at[len(statements)] = case.name
        statements.append(case.sql)
    return "".join(s.rstrip().rstrip(";") + ";\n" for s in statements), case_at


@dataclass(frozen=True)
class Run:
    """One release's run: the driver's dump, each case's verdict, and the JVM listener's documents of the
    same writes (``None`` in a dry run: the listener sees only writes that run)."""

    result: JobResult
    verdicts: dict[str, Any]
    documents: list[dict[str, Any]]  # every statement's document of the py4j capture, setups' writes included
    listener: list[dict[str, Any]] | None


def installed_copy(base: Path) -> Path:
    """The driver as a user's ``pip install`` leaves it: the package in a site-packages that also holds the
    worker's own pyspark (this checkout is an editable install, whose directory holds none)."""
    import pyspark

    site = base / "site-packages"
    shutil.copytree(ROOT / "airflow_lineage_provider", site / "airflow_lineage_provider",
                    ignore=shutil.ignore_patterns("__pycache__", "plugins"))
    (site / "pyspark").symlink_to(Path(pyspark.__file__).parent)
    return site / Path(local_spark.DRIVER).relative_to(ROOT)


def run(home: Path | None, cases: list[Case], base: Path, dry_run: bool = False) -> Run:
    """Run ``cases`` through the project's driver with the ``spark-submit`` of ``home`` (``None``: the worker's
    own pyspark), as the hook runs it in client mode: the worker's Python, the driver installed beside the
    worker's pyspark, the JVM listener jar added as the hook adds it to a JVM application. ``dry_run``: writes
    analyzed, never run (the row-level writes Spark refuses to run on parquet)."""
    text, case_at = script(cases)
    dump = base / "dump"
    dump.mkdir(parents=True)
    (dump / "script.sql").write_text(text)
    conf = local_spark.local_conf(str(base / "state"))
    if not dry_run:
        conf.update({**jvm_listener.listener_conf(None, str(base / "jvm")), jvm_listener.JARS_CONF: str(jvm_listener.JAR)})
    spark_home_dir = str(home) if home else local_spark.spark_home()
    env = {**os.environ, **local_spark.local_env(), "SPARK_HOME": spark_home_dir}
    # The hook's command line, with the release's own spark-submit in place of the worker's.
    cmd = local_spark.submit_command("local[2]", conf, str(installed_copy(base)),
                                     command.arguments(str(dump), keep_going=True, dry_run=dry_run))
    cmd[0] = str(Path(spark_home_dir) / "bin" / "spark-submit")
    with jvm.options_for(spark_home_dir) as options:  # the release's own class-data archive
        proc = subprocess.run(cmd, env={**env, "SPARK_SUBMIT_OPTS": options}, capture_output=True, text=True,
                              timeout=900)
    result = read_dump(str(dump))
    if result.spark_version is None:
        raise AssertionError(f"the driver left no result (exit {proc.returncode}): {proc.stderr[-3000:]}")
    listener = None
    if not dry_run:
        listened = read_dump(str(base / "jvm"))
        if listened.warnings or listened.spark_version is None:
            raise AssertionError(f"the JVM listener did not finish: {listened.warnings}: {proc.stderr[-3000:]}")
        listener = [_normal(doc, str(base)) for doc in from_records(listened.records).to_dict()["statements"]]
    documents = [_normal(doc, str(base)) for doc in from_records(result.records).to_dict()["statements"]]
    return Run(result, verdicts(result, case_at, str(base)), documents, listener)


def verdicts(result: JobResult, case_at: dict[int, str], base: str) -> dict[str, Any]:
    """Per case: its statements' documents (the run's directory written as ``BASE``), or ``not run: <Spark's
    error class>``."""
    out: dict[str, Any] = {}
    for status in result.statements:
        name = case_at.get(status["index"])
        if name and status["status"] == "failed":
            message = status["error"].get("spark_message") or status["error"]["message"]
            out[name] = "not run: " + (message[:message.find("]") + 1] if message.startswith("[") else message[:80])
    for doc in from_records(result.records).to_dict()["statements"]:
        name = case_at.get(doc["index"])
        if name and not isinstance(out.get(name), str):  # a failed case's records are not its lineage
            doc["warnings"] = [_REFUSAL.sub(r"\1", w) for w in doc.get("warnings", [])]
            out.setdefault(name, []).append(_normal(doc, base))
    return out


# A dry run's refusal quotes Spark's message, which each release words its own way: the warning is compared.
_REFUSAL = re.compile(r"^(dry run only: a real run of this statement would be refused by Spark) \(.*\)$", re.S)


def _normal(doc: Any, base: str) -> Any:
    """A document with the run's own directory written as ``BASE`` (each run has its own warehouse)."""
    if isinstance(doc, dict):
        return {k: _normal(v, base) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_normal(v, base) for v in doc]
    return doc.replace(base, "BASE") if isinstance(doc, str) else doc


def compare(reference: dict[str, Any], theirs: dict[str, Any]) -> dict[str, str]:
    """Each case whose verdict differs from the reference's: what differs, in a line."""
    out: dict[str, str] = {}
    for name in reference.keys() | theirs.keys():
        a, b = reference.get(name, "no document"), theirs.get(name, "no document")
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            keys = sorted({k for x, y in zip(a, b) for k in x.keys() | y.keys() if x.get(k) != y.get(k)})
            out[name] = f"documents differ in {keys}" if len(a) == len(b) else f"{len(b)} documents, not {len(a)}"
        else:
            out[name] = f"{b if isinstance(b, str) else 'documents'} (reference: {a if isinstance(a, str) else 'documents'})"
    return out


def listener_differences(ran: Run) -> list[str]:
    """The writes where the JVM listener's documents differ from the py4j capture's (target, columns, indirect
    inputs, warnings); ``["no write captured"]`` when it captured none."""
    if not ran.listener:
        return ["no write captured by the JVM listener"]
    theirs = [d for d in ran.documents if d.get("target")]
    if [d["target"] for d in ran.listener] != [d["target"] for d in theirs]:
        return [f"other writes: {[d['target'] for d in ran.listener]} != {[d['target'] for d in theirs]}"]
    keys = ("target", "columns", "indirect", "warnings")
    return [f"{b['sql'][:60]}: {[k for k in keys if a.get(k) != b.get(k)]}"
            for a, b in zip(ran.listener, theirs) if any(a.get(k) != b.get(k) for k in keys)]
