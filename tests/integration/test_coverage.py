"""The coverage matrix, ``docs/coverage.md``: generated from the corpus, compared on every run.

One row per corpus case (a construct as a user writes it): the plan nodes Spark makes of it, and
for each extractor whether its lineage is exact (the case's expectation, no warning), partial (with
the warning a user sees, or the edges it gets wrong) or not supported (and why). A construct not in
the corpus is not in the matrix. To regenerate after a change:
``AIRFLOW_LINEAGE_WRITE_COVERAGE=1 bash scripts/test.sh tests/integration/test_coverage.py``.
"""

from __future__ import annotations

import os
import re

import pytest

from airflow_lineage_provider.lineage.model import StatementLineage
from airflow_lineage_provider.lineage.plan import resolve
from tests.helpers import ROOT
from tests.integration.case import Analyzed, Case
from tests.integration.corpus import CASES
from tests.integration.test_agreement import corpus_extractor, static_of
from tests.integration.test_corpus import direct, indirect
from tests.integration.test_rowlevel import MODES

pytestmark = pytest.mark.spark

COVERAGE = ROOT / "docs" / "coverage.md"
CORPUS_MODULES = [ROOT / "tests" / "integration" / f"{name}.py" for name in ("corpus", "corpus_spark4", "corpus_static")]
_SECTION = re.compile(r"^\s*# -- (.+?) -+\s*$")
_CASE = re.compile(r'^\s*C\("([^"]+)"')


def sections() -> dict[str, str]:
    """Each case's section: the ``# -- title --`` comment above it in its corpus module."""
    out: dict[str, str] = {}
    for module in CORPUS_MODULES:
        title = "other"
        for line in module.read_text().splitlines():
            if found := _SECTION.match(line):
                title = found.group(1)
            elif found := _CASE.match(line):
                out[found.group(1)] = title
    return out


def plan_nodes(record: dict) -> list[str]:
    """The plan node classes of a record, in order of first appearance: expressions, and the clauses
    and instructions of row-level commands (held in expression fields), left out."""
    seen: list[str] = []
    stack: list = [record["plan"]]
    while stack:  # Spark's JSON: nodes are dicts with a class, plans and expressions nest in fields
        item = stack.pop(0)
        if isinstance(item, list):
            stack[:0] = item
        elif isinstance(item, dict):
            full = str(item.get("class", ""))
            name = full.rsplit(".", 1)[-1]
            if full and ".expressions." not in full and not _CLAUSE.search(name) and name not in seen:
                seen.append(name)
            stack[:0] = [v for k, v in item.items() if k != "class" and isinstance(v, (list, dict))]
    return seen


_CLAUSE = re.compile(r"Action$|^Assignment$|\$")


def verdict(case: Case, st: StatementLineage | None, reason: str = "", renamed: str = "") -> str:
    if reason:
        return f"not supported: {reason}"
    if st is None:
        return "not supported: no lineage"
    got_direct, got_indirect = direct(st), indirect(st)
    if renamed:  # the row-level catalog's table of a mode stands for the corpus's table
        got_direct = {c: {s.replace(renamed, "acct.") for s in v} for c, v in got_direct.items()}
        got_indirect = {s.replace(renamed, "acct.") for s in got_indirect}
    if got_direct == case.columns and got_indirect == case.indirect and not st.warnings:
        return "exact"
    if st.warnings:
        return "partial: " + "; ".join(st.warnings)
    wrong = sorted(c for c in set(case.columns) | set(got_direct) if case.columns.get(c) != got_direct.get(c))
    if got_indirect != case.indirect:
        wrong.append("indirect inputs")
    return "partial: differs on " + ", ".join(wrong)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def matrix(plans: Analyzed, rowlevel: Analyzed, jvm: dict[str, str]) -> str:
    """The whole document, from the corpus as it runs now: ``plans``, each case analyzed (``corpus_plans``);
    ``rowlevel``, each row-level write run on the tests' row-level catalog (``rowlevel_plans``); ``jvm``, each
    case's verdict through the JVM listener (``jvm_corpus.py``)."""
    base = corpus_extractor()
    by_section: dict[str, list[str]] = {}
    titles = sections()
    counts = {"plan": 0, "static": 0}
    for case in CASES:
        try:
            record = plans.record(case)
        except Exception as e:  # noqa: BLE001 - the matrix says what Spark's refusal looks like
            raise AssertionError(f"case {case.name} is not analyzed: {e}") from e
        plan = verdict(case, resolve.extract(record))
        nodes = ", ".join(plan_nodes(record))
        if case.target == "acct":  # a row-level write: also as it runs on a table with row-level support
            for mode, label in MODES.items():
                rewritten = rowlevel.record(case, mode)
                nodes += f"; {label}: " + ", ".join(plan_nodes(rewritten))
                shape = verdict(case, resolve.extract(rewritten), renamed=f"acct_{mode}.")
                if shape != "exact" and plan == "exact":
                    plan = f"{shape} ({label})"
        try:
            static = verdict(case, static_of(base, case.sql, case.setup, case.write), case.static)
        except Exception as e:  # noqa: BLE001 - the matrix says what a crash looks like to a user
            static = f"not supported: {case.static or type(e).__name__}"
        counts["plan"] += plan == "exact"
        counts["static"] += static == "exact"
        row = (f"| `{case.name}` | `{_cell(case.sql)}` | {nodes} | {_cell(plan)} "
               f"| {_cell(static)} | {_cell(jvm[case.name])} |")
        by_section.setdefault(titles.get(case.name, "other"), []).append(row)
    lines = [
        "# Coverage matrix",
        "",
        "Generated by `tests/integration/test_coverage.py` from the project's corpus (`tests/integration/corpus*.py`),",
        "on real Spark, and compared with this file on every test run: what is written here is what the tests saw.",
        "A construct not in the corpus is not in the matrix.",
        "",
        "- **plan**: the plan extractor (Spark's analyzed plan), the lineage reported on task completion; a",
        "  row-level write (MERGE, UPDATE, DELETE) is analyzed on a parquet table and also run on a table with",
        "  row-level support in both modes (the tests' own catalog), and is exact only if all three are;",
        "- **static**: the static extractor (sqlglot), the lineage of START events and of runs that leave no plan;",
        "- **jvm**: the case's write run (not only analyzed) by the Python driver with the JVM listener",
        "  (`job/listener`, the capture of Scala/Java applications) added: *same* when the listener's document",
        "  equals the py4j capture's edge for edge (a row-level write as it runs on the tests' row-level",
        "  catalog, in both modes); *not run* when Spark refuses the statement; *no write* for a bare query",
        "  (the listener captures writes).",
        "",
        "*exact*: the case's expected lineage, edge for edge, with no warning. *partial*: the warning a user",
        "sees, or the columns it gets wrong. *not supported*: why.",
        "",
        f"{len(CASES)} constructs: plan exact on {counts['plan']}, static exact on {counts['static']}; "
        f"run through the JVM listener: {sum(v == 'same' or v.startswith('differs') for v in jvm.values())} "
        f"writes, the same on {sum(v == 'same' for v in jvm.values())}.",
        "",
    ]
    for title, rows in by_section.items():
        lines += [f"## {title}", "", "| case | SQL | plan nodes | plan | static | jvm |", "|---|---|---|---|---|---|",
                  *rows, ""]
    return "\n".join(lines + releases_section())


def releases_section() -> list[str]:
    """The corpus on other Spark releases (``test_spark_versions.py``): where their documents differ from the
    worker release's, and Spark's reason."""
    from tests.integration import spark_versions as sv

    lines = [
        "## Spark releases",
        "",
        "Every construct family above (the first case of each section) run by the project's driver with the",
        f"`spark-submit` of Spark {', '.join(sv.RELEASES)} (`tests/integration/test_spark_versions.py`; 4.0 and 4.1",
        "by hand with `AIRFLOW_LINEAGE_SPARK_VERSIONS`), the JVM listener in the same job, and compared with the",
        "worker release's documents: the same on every case but these, each for Spark's own reason.",
        "",
        sv.WHOLE_CORPUS,
        "",
        "| Spark | case | SQL | why |",
        "|---|---|---|---|",
    ]
    by_name = {case.name: case for case in CASES}
    for (line, name), why in sorted(sv.DIFFERENCES.items()):
        lines.append(f"| {line} | `{name}` | `{_cell(by_name[name].sql)}` | {_cell(why)} |")
    return [*lines, ""]


@pytest.mark.slow
def test_the_coverage_matrix_is_the_one_the_corpus_gives(corpus_plans, rowlevel_plans, jvm_corpus):
    text = matrix(corpus_plans, rowlevel_plans, jvm_corpus)
    if os.environ.get("AIRFLOW_LINEAGE_WRITE_COVERAGE"):
        COVERAGE.write_text(text)
    assert COVERAGE.exists(), "docs/coverage.md is missing: run with AIRFLOW_LINEAGE_WRITE_COVERAGE=1"
    assert COVERAGE.read_text() == text, (
        "docs/coverage.md is not what the corpus gives now: regenerate it with AIRFLOW_LINEAGE_WRITE_COVERAGE=1")


def test_no_construct_is_unsupported_without_a_reason():
    text = COVERAGE.read_text()
    assert "not supported: |" not in text and "not supported:  |" not in text
    for line in text.splitlines():
        for cell in line.split(" | "):
            if cell.startswith("not supported"):
                assert len(cell.split(":", 1)[-1].strip()) > 3, line
