"""lineage/sql/rowlevel.py: MERGE INTO, UPDATE and DELETE FROM from their text alone (no JVM).

The rule is the plan extractor's (``lineage/plan/rowlevel.py``): a target column's sources are the values
the clauses that write rows give it, a column an UPDATE leaves as it is keeps the target's own value,
the ON condition is a JOIN input, WHEN conditions CONDITIONAL, WHERE a FILTER. Where a recorded plan of
the same statement exists (``tests/data/plans/rowlevel_*_analyzed.json``), both extractors must agree.
"""

from __future__ import annotations

import pytest
import sqlglot

from airflow_lineage_provider.lineage.model import StatementLineage
from airflow_lineage_provider.lineage.plan import resolve
from airflow_lineage_provider.lineage.sql import SqlExtractor
from airflow_lineage_provider.lineage.sql.render import SPARK_DIALECT
from airflow_lineage_provider.lineage.sql.rowlevel import rewrite
from airflow_lineage_provider.lineage.sql.shared import UNCHECKED_CONFIDENCE
from tests.helpers import DATA, PLANS, edge_set, plan_record

LETTER = {"IDENTITY": "I", "TRANSFORMATION": "T", "AGGREGATION": "A"}
ACCT = "spark_catalog.corpus.acct"


@pytest.fixture(scope="module")
def corpus() -> SqlExtractor:
    """The corpus schema (``acct``, ``acct_upd``, ...), as the plan fixtures were recorded on it."""
    extractor = SqlExtractor()
    extractor.run((DATA / "corpus_schema.sql").read_text())
    return extractor


def static(corpus: SqlExtractor, sql: str) -> StatementLineage:
    [st] = SqlExtractor(catalog=corpus.catalog.copy()).statement(sql, 0)
    return st


def direct(st: StatementLineage) -> dict[str, set[str]]:
    return {column: {f"{i.table.rsplit('.', 1)[-1]}.{i.field}:{LETTER[i.subtype]}" for i in inputs}
            for column, inputs in st.columns}


def indirect(st: StatementLineage) -> set[str]:
    return {f"{i.table.rsplit('.', 1)[-1]}.{i.field}:{i.subtype}" for i in st.indirect}


# (name, SQL, direct edges, indirect edges): the lineage Spark's plan gives each (the plan extractor's).
VARIANTS = [
    ("merge_aliases_with_as",
     "MERGE INTO acct AS t USING acct_upd AS u ON t.id = u.id WHEN MATCHED THEN UPDATE SET t.balance = u.amount",
     {"id": {"acct.id:I"}, "name": {"acct.name:I"}, "balance": {"acct_upd.amount:I"}, "status": {"acct.status:I"}},
     {"acct.id:JOIN", "acct_upd.id:JOIN"}),
    ("merge_backquoted_names",
     "MERGE INTO `corpus`.`acct` `t` USING `acct_upd` `u` ON `t`.`id` = `u`.`id` "
     "WHEN MATCHED THEN UPDATE SET `status` = upper(`u`.`op`)",
     {"id": {"acct.id:I"}, "name": {"acct.name:I"}, "balance": {"acct.balance:I"}, "status": {"acct_upd.op:T"}},
     {"acct.id:JOIN", "acct_upd.id:JOIN"}),
    ("merge_subquery_source",
     "MERGE INTO acct t USING (SELECT id, sum(amount) AS total FROM acct_upd WHERE op <> 'D' GROUP BY id) s "
     "ON t.id = s.id WHEN MATCHED THEN UPDATE SET balance = s.total "
     "WHEN NOT MATCHED THEN INSERT (id, balance) VALUES (s.id, s.total)",
     {"id": {"acct.id:I", "acct_upd.id:I"}, "name": {"acct.name:I"}, "balance": {"acct_upd.amount:A"},
      "status": {"acct.status:I"}},
     {"acct.id:JOIN", "acct_upd.id:JOIN", "acct_upd.id:GROUP_BY", "acct_upd.op:FILTER"}),
    ("merge_several_when_clauses",
     "MERGE INTO acct t USING acct_upd u ON t.id = u.id "
     "WHEN MATCHED AND u.op = 'D' THEN DELETE "
     "WHEN MATCHED AND u.op = 'U' THEN UPDATE SET name = u.name "
     "WHEN NOT MATCHED AND u.amount > 0 THEN INSERT (id, name, balance, status) VALUES (u.id, u.name, u.amount, u.op) "
     "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET status = 'gone'",
     {"id": {"acct.id:I", "acct_upd.id:I"}, "name": {"acct.name:I", "acct_upd.name:I"},
      "balance": {"acct.balance:I", "acct_upd.amount:I"}, "status": {"acct.status:I", "acct_upd.op:I"}},
     {"acct.id:JOIN", "acct_upd.id:JOIN", "acct_upd.op:CONDITIONAL", "acct_upd.amount:CONDITIONAL"}),
    ("merge_insert_some_columns",
     "MERGE INTO acct t USING acct_upd u ON t.id = u.id WHEN NOT MATCHED THEN INSERT (id, status) VALUES (u.id, 'new')",
     {"id": {"acct_upd.id:I"}, "status": set()},
     {"acct.id:JOIN", "acct_upd.id:JOIN"}),
    ("update_set_expressions",
     "UPDATE acct SET balance = balance * 2 + 1, name = concat(name, '-', status) WHERE id > 3",
     {"id": {"acct.id:I"}, "name": {"acct.name:T", "acct.status:T"}, "balance": {"acct.balance:T"},
      "status": {"acct.status:I"}},
     {"acct.id:FILTER"}),
    ("update_aliased_and_quoted",
     "UPDATE acct AS a SET a.`status` = a.name WHERE a.balance < 0",
     {"id": {"acct.id:I"}, "name": {"acct.name:I"}, "balance": {"acct.balance:I"}, "status": {"acct.name:I"}},
     {"acct.balance:FILTER"}),
    ("delete_subquery_where",
     "DELETE FROM acct WHERE id IN (SELECT id FROM acct_upd WHERE op = 'D')",
     {}, {"acct.id:FILTER", "acct_upd.id:FILTER", "acct_upd.op:FILTER"}),
    ("delete_aliased_exists",
     "DELETE FROM acct a WHERE NOT EXISTS (SELECT 1 FROM acct_upd u WHERE u.id = a.id AND u.amount > a.balance)",
     {}, {"acct.id:FILTER", "acct.balance:FILTER", "acct_upd.id:FILTER", "acct_upd.amount:FILTER"}),
]


@pytest.mark.parametrize(("name", "sql", "columns", "conditions"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_row_level_variant_has_its_lineage(corpus, name, sql, columns, conditions):
    st = static(corpus, sql)
    assert direct(st) == columns
    assert list(dict(st.columns)) == list(columns), "columns in the table's order"
    assert indirect(st) == conditions
    assert st.method == "sql" and st.warnings == () and st.confidence == 1.0
    assert st.target is not None and st.target.table == ACCT and st.target.mode == name.split("_", 1)[0]


def test_merge_values_carry_their_expressions(corpus):
    st = static(corpus, "MERGE INTO acct t USING acct_upd u ON t.id = u.id "
                        "WHEN MATCHED THEN UPDATE SET balance = t.balance + u.amount")
    assert {(i.table, i.field, i.subtype, i.expression) for i in dict(st.columns)["balance"]} == {
        (ACCT, "balance", "TRANSFORMATION", "(t.balance + u.amount)"),
        (ACCT + "_upd", "amount", "TRANSFORMATION", "(t.balance + u.amount)")}
    assert {(i.field, i.expression) for i in dict(st.columns)["name"]} == {("name", "t.name")}


def test_without_the_targets_schema_the_kept_columns_are_unknown():
    [st] = SqlExtractor().statement("UPDATE t SET a = upper(b) WHERE c = 1")
    assert direct(st) == {"a": {"t.b:T"}}
    assert indirect(st) == {"t.c:FILTER"}
    assert st.confidence == UNCHECKED_CONFIDENCE
    assert any("no schema" in w for w in st.warnings)


def test_rewrite_reads_a_merge_as_one_query_over_target_and_source():
    merge = sqlglot.parse_one("MERGE INTO acct t USING acct_upd u ON t.id = u.id WHEN MATCHED AND u.op = 'D' "
                              "THEN DELETE WHEN NOT MATCHED THEN INSERT (id, name) VALUES (u.id, u.name)",
                              dialect=SPARK_DIALECT)
    query = rewrite(merge, ["id", "name", "balance", "status"])
    assert query.columns == ["id", "name"]  # the INSERT writes these two; the DELETE writes nothing
    assert query.feeds == {"__value_0": "id", "__value_1": "name"}
    assert query.warnings == []
    text = query.query.sql(dialect=SPARK_DIALECT)
    assert "FROM acct AS t JOIN acct_upd AS u ON t.id = u.id" in text
    assert "CASE WHEN u.op = 'D' THEN NULL END AS __when_2" in text


ANALYZED = sorted(p.stem for p in PLANS.glob("rowlevel_*_analyzed.json"))


@pytest.mark.parametrize("fixture", ANALYZED)
def test_the_static_lineage_of_a_recorded_statement_is_its_plans(corpus, fixture):
    record = plan_record(fixture)
    plan, st = resolve.extract(record), static(corpus, record["sql"])
    assert edge_set(st) == edge_set(plan)
    assert [c for c, _ in st.columns] == [c for c, _ in plan.columns]
    assert st.target is not None and plan.target is not None
    assert (st.target.table, st.target.mode) == (plan.target.table, plan.target.mode)
