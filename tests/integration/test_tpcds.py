"""All 103 TPC-DS queries extract with no unknown plan node, and the checked-in summary is current."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.lineage.plan import resolve
from tests.helpers import TPCDS_SUMMARY, internal_texts, tpcds_summary

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def extracted(tpcds_records):
    return [(name, mode, resolve.extract(record)) for name, mode, record in tpcds_records]


def test_all_103_queries_are_analyzed(extracted):
    assert len(extracted) == 103
    assert sum(1 for _, mode, _ in extracted if mode == "ctas") >= 90


def test_no_query_meets_an_unknown_plan_node(extracted):
    problems = {name: st.warnings for name, _, st in extracted if st.warnings or st.confidence < 1.0}
    assert problems == {}


def test_ctas_targets_and_sources(extracted):
    for name, mode, st in extracted:
        if mode == "ctas":
            assert st.target is not None and st.target.table == f"spark_catalog.tpcds_out.{name}"
        assert st.inputs, name
        assert all(i.table.startswith("spark_catalog.tpcds.") for _, inputs in st.columns for i in inputs)


def test_q1_lineage(extracted):
    st = next(st for name, _, st in extracted if name == "q1")
    assert [(c, {(i.table.rsplit(".", 1)[-1], i.field, i.subtype) for i in inputs}) for c, inputs in st.columns] == [
        ("c_customer_id", {("customer", "c_customer_id", "IDENTITY")})
    ]
    indirect = {(i.table.rsplit(".", 1)[-1], i.field, i.subtype) for i in st.indirect}
    assert {("store_returns", "sr_return_amt", "FILTER"), ("store", "s_state", "FILTER"),
            ("date_dim", "d_year", "FILTER"), ("store_returns", "sr_customer_sk", "GROUP_BY"),
            ("customer", "c_customer_id", "SORT")} <= indirect


def test_checked_in_summary_is_current(extracted):
    assert TPCDS_SUMMARY.read_text() == tpcds_summary(extracted)


def test_no_expression_text_names_an_internal_class(extracted):
    assert {name: internal_texts(st) for name, _, st in extracted if internal_texts(st)} == {}
