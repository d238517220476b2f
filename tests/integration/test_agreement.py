"""The static extractor (SQL text) against the plan extractor (Spark's analyzed plan), edge by edge.

An edge is (statement target column, source table, source field, type, subtype); indirect
edges have no target column. Agreement = |edges in both| / |edges in either|, over the
plan extractor's corpus (tests/integration/corpus.py, schema tests/data/corpus_schema.sql fed
as DDL) and the 103 TPC-DS queries (schema tests/data/tpcds/schema.sql as DDL, each query
analyzed as Spark analyzes it: CTAS into ``tpcds_out.<q>`` or a bare SELECT, see tests/helpers.py).
Every disagreement is listed with its cause in docs/accuracy.md.
"""

from __future__ import annotations

from typing import Iterable

import pytest

from airflow_lineage_provider.lineage.model import StatementLineage
from airflow_lineage_provider.lineage.plan import resolve
from airflow_lineage_provider.lineage.sql import SqlExtractor
from tests.helpers import DATA, TPCDS, edge_set
from tests.integration.case import Analyzed
from tests.integration.corpus import CASES

pytestmark = pytest.mark.spark

THRESHOLD = 0.99  # over the whole corpus and TPC-DS; what differs is explained in docs/accuracy.md

def corpus_extractor() -> SqlExtractor:
    """The corpus schema (tables, views) as DDL; ``py_upper`` and ``sq_plus`` are just function calls in SQL."""
    x = SqlExtractor()
    x.run((DATA / "corpus_schema.sql").read_text())
    return x


def tpcds_extractor() -> SqlExtractor:
    x = SqlExtractor(database="tpcds")
    x.run((TPCDS / "schema.sql").read_text())
    return x


def static_of(base: SqlExtractor, sql: str, setup: str = "", write: int = 0) -> StatementLineage:
    """The statement ``sql`` on a copy of ``base``'s catalog (cases never see each other's DDL), after
    the case's ``setup`` statements; of a statement that makes several writes, its write ``write``."""
    x = SqlExtractor(catalog=base.catalog.copy())
    if setup:
        x.run(setup)
    found = x.statement(sql, 0)
    if not found:  # nothing read at all (a construct the case's ``static`` reason names)
        return StatementLineage.of(index=0, sql=sql, method="none", confidence=0.0, target=None, inputs=(), columns=(),
                                   indirect=(), warnings=("the static extractor found no statement here",))
    return found[write] if write < len(found) else found[0]


def compare(pairs: Iterable[tuple[str, StatementLineage, StatementLineage]]) -> tuple[int, int, list[tuple]]:
    """(edges in both, edges in either, [(name, only in plan, only in sql), ...])."""
    both = either = 0
    diffs = []
    for name, planned, static in pairs:
        p, s = edge_set(planned), edge_set(static)
        both += len(p & s)
        either += len(p | s)
        if p != s:
            diffs.append((name, sorted(p - s, key=str), sorted(s - p, key=str)))
    return both, either, diffs


def corpus_pairs(plans: Analyzed) -> list[tuple[str, StatementLineage, StatementLineage]]:
    """Plan and static lineage of every case, those the static extractor is said to miss included."""
    base = corpus_extractor()
    return [(case.name, plans.lineage(case), static_of(base, case.sql, case.setup, case.write)) for case in CASES]


def tpcds_pairs(records) -> list[tuple[str, StatementLineage, StatementLineage]]:
    base = tpcds_extractor()
    return [(name, resolve.extract(record), static_of(base, record["sql"])) for name, _, record in records]


def report(label: str, both: int, either: int, diffs: list[tuple]) -> str:
    lines = [f"{label}: {both}/{either} edges agree ({both / either:.2%})"]
    for name, only_plan, only_sql in diffs:
        lines.append(f"  {name}: only plan {only_plan} only sql {only_sql}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def corpus_lineage(corpus_plans):
    return corpus_pairs(corpus_plans)


@pytest.fixture(scope="module")
def corpus_result(corpus_lineage):
    return compare(corpus_lineage)


@pytest.fixture(scope="module")
def tpcds_result(tpcds_records):
    return compare(tpcds_pairs(tpcds_records))


def test_corpus_agreement(corpus_result):
    both, either, diffs = corpus_result
    print(report("corpus", both, either, diffs))
    assert both / either >= THRESHOLD, report("corpus", both, either, diffs)


def test_tpcds_agreement(tpcds_result):
    both, either, diffs = tpcds_result
    print(report("TPC-DS", both, either, diffs))
    assert both / either >= THRESHOLD, report("TPC-DS", both, either, diffs)


def test_overall_agreement(corpus_result, tpcds_result):
    both = corpus_result[0] + tpcds_result[0]
    either = corpus_result[1] + tpcds_result[1]
    print(f"overall: {both}/{either} edges agree ({both / either:.2%})")
    assert both / either >= THRESHOLD


def test_every_difference_is_a_case_said_to_differ(corpus_result):
    """Outside the cases whose ``static`` reason says why (and that docs/accuracy.md explains), the two
    extractors agree edge for edge."""
    _, _, diffs = corpus_result
    said = {case.name for case in CASES if case.static}
    assert [name for name, _, _ in diffs if name not in said] == []


def test_static_statements_say_sql_and_name_targets_as_the_plan(corpus_lineage):
    said = {case.name for case in CASES if case.static}
    for name, planned, static in corpus_lineage:
        if name in said:
            continue
        assert static.method == "sql" and static.warnings == () and static.confidence == 1.0, name
        assert [c for c, _ in static.columns] == [c for c, _ in planned.columns], name
        assert (static.target.table if static.target else None) == (planned.target.table if planned.target else None)


def test_a_case_the_static_extractor_is_said_to_miss_is_really_missed(corpus):
    """A case's ``static`` reason is what the coverage matrix publishes: once the static extractor gets
    the case right, the reason is stale and must go (and the case joins the agreement tests)."""
    from tests.integration.test_corpus import direct, indirect

    base = corpus_extractor()
    stale = []
    for case in CASES:
        if not case.static:
            continue
        try:
            st = static_of(base, case.sql, case.setup, case.write)
        except Exception:  # noqa: BLE001 - a crash is a miss too
            continue
        if direct(st) == case.columns and indirect(st) == case.indirect and not st.warnings:
            stale.append(case.name)
    assert stale == [], f"the static extractor now gets these right: drop their reason {stale}"
