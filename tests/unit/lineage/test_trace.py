"""lineage/trace.py: a column's lineage across DAGs, joined where one task writes what another reads."""

from __future__ import annotations

from dataclasses import replace

import pytest

from airflow_lineage_provider.lineage.model import (
    AGGREGATION,
    FILTER,
    IDENTITY,
    INDIRECT,
    JOIN,
    TRANSFORMATION,
    ColumnInput,
    Dataset,
    LineageReport,
    Origin,
    StatementLineage,
)
from airflow_lineage_provider.lineage.trace import DOWNSTREAM, UPSTREAM, Field, TaskRun, Trace, TraceIndex

WH = "file"


def table(name: str) -> Dataset:
    return Dataset(namespace=WH, name=f"/wh/{name}", table=f"spark_catalog.default.{name}")


def write(target: str, columns: dict[str, list[tuple[str, str, str]]], indirect=(), index: int = 0,
          reads: tuple[str, ...] = ()) -> StatementLineage:
    """A write of ``target``: ``{column: [(table, field, subtype)]}``, indirect ``[(table, field, subtype)]``."""
    names = {t for srcs in columns.values() for t, _, _ in srcs} | {t for t, _, _ in indirect} | set(reads)
    return StatementLineage.of(
        index=index, sql=f"INSERT INTO {target} ...", method="plan", confidence=1.0, target=table(target),
        inputs=[table(n) for n in names],
        columns=[(c, [Origin(f"spark_catalog.default.{t}", f, s, f"{t}.{f}", False) for t, f, s in srcs])
                 for c, srcs in columns.items()],
        indirect=[ColumnInput(f"spark_catalog.default.{t}", f, INDIRECT, s) for t, f, s in indirect],
        warnings=())


def report(*statements: StatementLineage) -> LineageReport:
    return LineageReport(statements=statements)


def col(name: str, column: str = "") -> Field:
    return Field(WH, f"/wh/{name}", column)


def run(dag: str, task: str, day: int, hour: int = 1) -> TaskRun:
    return TaskRun(ended=f"2026-11-{day:02d}T{hour:02d}:00:00+00:00", dag_id=dag, task_id=task,
                   run_id=f"scheduled__2026-11-{day:02d}")


# DAG A builds dwd_users from ods_users and dim_company; DAG B reads dwd_users into a report.
DWD = write("dwd_users", {
    "id": [("ods_users", "id", IDENTITY)],
    "age": [("ods_users", "birthday", TRANSFORMATION)],
    "company_name": [("dim_company", "company_name", IDENTITY)],
}, indirect=[("ods_users", "company_id", JOIN), ("dim_company", "id", JOIN)])
REPORT = write("report", {
    "company_name": [("dwd_users", "company_name", IDENTITY)],
    "users": [("dwd_users", "id", AGGREGATION)],
    "age_band": [("dwd_users", "age", TRANSFORMATION)],
}, indirect=[("dwd_users", "company_name", "GROUP_BY")])


def two_dags(day_a: int = 27, day_b: int = 27) -> TraceIndex:
    index = TraceIndex()
    index.add(run("dag_a", "build_dwd", day_a, 1), report(DWD))
    index.add(run("dag_b", "build_report", day_b, 2), report(REPORT))
    return index


def edges(trace, direction=None):
    return {(h.depth, h.target.label.rsplit(".", 1)[-1] + "." + h.target.column, h.source.label.rsplit(".", 1)[-1]
             + "." + h.source.column, h.subtype, h.run.dag_id)
            for h in trace.hops if direction is None or h.direction == direction}


def test_upstream_of_a_report_column_goes_back_through_the_dag_that_wrote_its_source():
    t = two_dags().trace(col("report", "company_name"), downstream=False)
    assert edges(t) == {
        (1, "report.company_name", "dwd_users.company_name", IDENTITY, "dag_b"),
        (1, "report.", "dwd_users.company_name", "GROUP_BY", "dag_b"),
        (2, "dwd_users.company_name", "dim_company.company_name", IDENTITY, "dag_a"),
        (2, "dwd_users.", "ods_users.company_id", JOIN, "dag_a"),
        (2, "dwd_users.", "dim_company.id", JOIN, "dag_a"),
    }
    assert {h.indirect for h in t.hops if h.target.column == ""} == {True}
    # Read but written by no task with lineage: said, with the reason.
    assert sorted(s.dataset.name for s in t.sources) == ["/wh/dim_company", "/wh/ods_users"]
    assert all("no task with column lineage writes it" in s.reason for s in t.sources)
    assert t.found and t.hidden == ()


def test_downstream_impact_of_a_source_column_crosses_both_dags():
    t = two_dags().trace(col("ods_users", "birthday"), upstream=False)
    assert edges(t) == {
        (1, "dwd_users.age", "ods_users.birthday", TRANSFORMATION, "dag_a"),
        (2, "report.age_band", "dwd_users.age", TRANSFORMATION, "dag_b"),
    }
    assert {h.direction for h in t.hops} == {DOWNSTREAM}


def test_a_join_key_downstream_reaches_the_whole_dataset_it_decides():
    t = two_dags().trace(col("ods_users", "company_id"), upstream=False)
    assert edges(t) == {(1, "dwd_users.", "ods_users.company_id", JOIN, "dag_a")}


def test_depth_limits_each_way():
    index = two_dags()
    one = index.trace(col("dwd_users", "company_name"), depth=1)
    assert {(h.direction, h.depth) for h in one.hops} == {(UPSTREAM, 1), (DOWNSTREAM, 1)}
    assert edges(one, DOWNSTREAM) == {(1, "report.company_name", "dwd_users.company_name", IDENTITY, "dag_b"),
                                      (1, "report.", "dwd_users.company_name", "GROUP_BY", "dag_b")}
    assert len(index.trace(col("report", "age_band"), downstream=False, depth=1).hops) == 2
    assert len(index.trace(col("report", "age_band"), downstream=False).hops) == 5


def test_a_table_that_feeds_itself_ends_where_the_column_comes_back():
    index = TraceIndex()
    index.add(run("dag_c", "accumulate", 27), report(write("totals", {
        "n": [("totals", "n", TRANSFORMATION), ("events", "n", AGGREGATION)]})))
    up = index.trace(col("totals", "n"), downstream=False)
    assert edges(up) == {(1, "totals.n", "totals.n", TRANSFORMATION, "dag_c"),
                         (1, "totals.n", "events.n", AGGREGATION, "dag_c")}
    down = index.trace(col("events", "n"), upstream=False, depth=None)
    assert edges(down) == {(1, "totals.n", "events.n", AGGREGATION, "dag_c"),
                           (2, "totals.n", "totals.n", TRANSFORMATION, "dag_c")}


def test_a_later_run_replaces_the_task_edges_and_as_of_shows_the_earlier():
    index = two_dags()
    index.add(run("dag_c", "rollup", 25), report(write("summary", {"name": [("report", "company_name", IDENTITY)]})))
    index.add(run("dag_c", "rollup", 27), report(write("summary", {"name": [("report", "company_name",
                                                                                TRANSFORMATION)]})))
    now = index.trace(col("summary", "name"), downstream=False, depth=1)
    assert {h.subtype for h in now.hops} == {TRANSFORMATION}
    then = index.trace(col("summary", "name"), downstream=False, depth=1, as_of="2026-11-26T00:00:00+00:00")
    assert {h.subtype for h in then.hops} == {IDENTITY}
    assert {h.run.run_id for h in then.hops} == {"scheduled__2026-11-25"}
    # A run found late (an older one) does not replace the newer.
    index.add(run("dag_c", "rollup", 20), report(write("summary", {"name": [("report", "users", IDENTITY)]})))
    assert index.trace(col("summary", "name"), downstream=False, depth=1) == now
    # Before any run of the task, nothing.
    assert not index.trace(col("summary", "name"), as_of="2026-11-01T00:00:00+00:00").found


def test_a_hidden_dag_is_counted_never_shown_or_walked_through():
    index = two_dags()
    index.add(run("dag_c", "rollup", 27, 3), report(write("summary", {"name": [("report", "company_name",
                                                                                   IDENTITY)]})))
    t = index.trace(col("dim_company", "company_name"), upstream=False, visible=lambda dag: dag != "dag_b")
    assert edges(t) == {(1, "dwd_users.company_name", "dim_company.company_name", IDENTITY, "dag_a")}
    assert [(h.direction, h.depth, h.hops) for h in t.hidden] == [(DOWNSTREAM, 2, 2)]
    assert "dag_b" not in repr(t.to_dict()) and "report" not in repr(t.to_dict())


def test_a_reader_that_ran_again_on_data_no_one_refreshed_is_marked_stale():
    index = TraceIndex()
    index.add(run("dag_a", "build_dwd", 20, 1), report(DWD))
    index.add(run("dag_b", "build_report", 26, 2), report(REPORT))
    index.add(run("dag_b", "build_report", 27, 2), report(REPORT))
    t = index.trace(col("report", "company_name"), downstream=False, depth=1)
    [direct] = [h for h in t.hops if not h.indirect]
    assert "dag_a.build_dwd last wrote spark_catalog.default.dwd_users at 2026-11-20" in direct.stale
    assert "previous successful run (2026-11-26T02:00:00+00:00)" in direct.stale
    hidden = index.trace(col("report", "company_name"), downstream=False, depth=1, visible=lambda d: d != "dag_a")
    assert {h.stale.split(" last wrote")[0] for h in hidden.hops if not h.indirect} == {"a DAG you may not read"}
    fresh = two_dags(day_a=27, day_b=27)
    fresh.add(run("dag_b", "build_report", 26, 2), report(REPORT))
    assert {h.stale for h in fresh.trace(col("report", "company_name"), downstream=False).hops} == {""}


def test_a_whole_dataset_starts_from_every_column_it_has():
    t = two_dags().trace(col("dwd_users"), upstream=False)
    assert {h.target.column for h in t.hops if not h.indirect} == {"company_name", "users", "age_band"}


def test_names_compare_as_spark_compares_them_and_search_finds_tables():
    index = TraceIndex()
    index.add(run("d", "t", 27), report(write("b", {"x": [("a", "Birthday", IDENTITY)]})))
    index.add(run("d", "u", 27), report(write("c", {"y": [("b", "X", FILTER)]})))
    assert len(index.trace(col("a", "birthday"), upstream=False).hops) == 2
    assert [f.name for f in index.find("b")] == ["/wh/b"]
    assert [f.name for f in index.find("spark_catalog.default.c")] == ["/wh/c"]
    assert [f.column for f in index.columns(WH, "/wh/b")] == ["x"]  # one column, named as first seen


def test_an_unknown_start_is_not_found():
    t = two_dags().trace(col("nowhere", "x"))
    assert not t.found and t.hops == ()


def test_a_run_cleared_and_run_again_replaces_its_first_document():
    index = two_dags()
    first = TaskRun(ended="2026-11-27T03:00:00+00:00", dag_id="dag_c", task_id="t", run_id="manual__1")
    again = TaskRun(ended="2026-11-27T04:00:00+00:00", dag_id="dag_c", task_id="t", run_id="manual__1")
    index.add(first, report(write("summary", {"name": [("report", "company_name", IDENTITY)]})))
    index.add(again, report(write("summary", {"name": [("report", "users", IDENTITY)]})))
    assert len(index) == 3
    assert edges(index.trace(col("summary", "name"), downstream=False, depth=1)) == {
        (1, "summary.name", "report.users", IDENTITY, "dag_c")}
    assert index.trace(col("report", "company_name"), upstream=False).hops == ()


def test_a_start_is_named_as_a_user_writes_it():
    index = two_dags()
    [c] = index.starts("spark_catalog.default.report.COMPANY_NAME")
    assert (c.name, c.column) == ("/wh/report", "company_name")
    assert [(f.name, f.column) for f in index.starts("default.report")] == [("/wh/report", "")]
    assert [(f.name, f.column) for f in index.starts("report.users")] == [("/wh/report", "users")]
    assert [(f.name, f.column) for f in index.starts("/wh/report", column="users")] == [("/wh/report", "users")]
    assert index.starts("nowhere.x") == [] and index.starts("report") != []


def test_a_query_is_checked_once_for_both_doors():
    from airflow_lineage_provider.lineage.trace import TraceQuery

    q = TraceQuery.parse("report.company_name", depth="2", as_of="2026-11-26")
    assert (q.depth, q.as_of) == (2, "2026-11-26T00:00:00.000000+00:00")
    assert TraceQuery.parse("t.c", depth="all").depth is None
    for bad, message in [({"depth": "0"}, "at least 1 step"), ({"depth": "two"}, "not a number"),
                         ({"as_of": "yesterday"}, "not a time"), ({"upstream": False, "downstream": False}, "ask for")]:
        try:
            TraceQuery.parse("t.c", **bad)
        except ValueError as e:
            assert message in str(e)
        else:
            raise AssertionError(bad)
    index = two_dags()
    assert "no task with column lineage" in TraceQuery.parse("nowhere.x").run(index)
    index.add(run("dag_z", "other", 27), report(StatementLineage.of(
        index=0, sql="", method="plan", confidence=1.0, inputs=[],
        target=Dataset(namespace="s3://lake", name="x/report", table="spark_catalog.other.report"),
        columns=[("a", [])], indirect=(), warnings=())))
    assert "names 2 datasets" in TraceQuery.parse("report.a").run(index)
    trace = TraceQuery.parse("default.report.company_name", downstream=False).run(two_dags())
    lines = trace.lines()
    assert lines[0] == "column lineage of spark_catalog.default.report.company_name across DAGs"
    assert any("spark_catalog.default.dwd_users.company_name <- spark_catalog.default.dim_company.company_name"
               in line for line in lines)
    assert {r["kind"] for r in trace.rows()} == {"hop", "source"}


def test_a_table_named_by_location_in_one_run_and_by_catalog_name_in_another_is_one_dataset():
    # A static fallback names the table by catalog name; the plan of another task by its location.
    index = two_dags()
    index.add(run("dag_s", "static_task", 27, 4), report(StatementLineage.of(
        index=0, sql="", method="sql", confidence=1.0,
        inputs=[Dataset(namespace="spark_catalog", name="default.company_report",
                        table="spark_catalog.default.company_report")],
        target=Dataset(namespace="spark_catalog", name="default.archive", table="spark_catalog.default.archive"),
        columns=[("n", [Origin("spark_catalog.default.company_report", "company_name", IDENTITY, "n", False)])],
        indirect=(), warnings=())))
    index.add(run("dag_b", "build_report", 27, 2), report(write("company_report", {
        "company_name": [("dwd_users", "company_name", IDENTITY)]})))
    t = index.trace(Field("spark_catalog", "default.archive", "n"), downstream=False)
    assert edges(t) == {(1, "archive.n", "company_report.company_name", IDENTITY, "dag_s"),
                        (2, "company_report.company_name", "dwd_users.company_name", IDENTITY, "dag_b"),
                        (3, "dwd_users.company_name", "dim_company.company_name", IDENTITY, "dag_a"),
                        (3, "dwd_users.", "ods_users.company_id", JOIN, "dag_a"),
                        (3, "dwd_users.", "dim_company.id", JOIN, "dag_a")}
    assert len(index.find("default.company_report")) == 1


def test_search_offers_datasets_then_columns_of_visible_dags_only():
    index = two_dags()
    got = [(f.label.rsplit(".", 1)[-1], f.column) for f in index.search("company")]
    assert got[:1] == [("dim_company", "")]
    assert ("report", "company_name") in got and ("dwd_users", "company_name") in got
    hidden_b = [(f.label.rsplit(".", 1)[-1], f.column) for f in index.search("report", visible=lambda d: d != "dag_b")]
    assert hidden_b == []  # only DAG B names the report
    assert index.search("  ") == [] and len(index.search("e", limit=3)) == 3


def test_runs_that_repeat_a_task_lineage_share_one_copy():
    index = TraceIndex()
    for day in (25, 26, 27):
        index.add(run("dag_a", "build_dwd", day), report(DWD))
    runs = index._runs[("dag_a", "build_dwd", -1)]
    assert len(runs) == 3 and runs[0].edges is runs[1].edges is runs[2].edges
    assert [r.run.run_id for r in runs] == ["scheduled__2026-11-25", "scheduled__2026-11-26", "scheduled__2026-11-27"]


def test_a_trace_too_big_to_draw_keeps_its_nearest_whole_depths_and_counts_the_rest():
    index = TraceIndex()
    for n in range(1, 30):  # a chain of 30 tables, 3 columns each
        index.add(run("dag", f"t{n}", 27), report(write(f"x{n}", {c: [(f"x{n - 1}", c, IDENTITY)] for c in "abc"})))
    full = index.trace(col("x29", "a"), downstream=False)
    assert len(full.hops) == 29 and full.omitted == 0 and full.nearest(29) is full
    cut = full.nearest(10)
    assert (len(cut.hops), cut.omitted, cut.shown_depth) == (10, 19, 10)
    assert {h.depth for h in cut.hops} == set(range(1, 11))
    assert cut.sources == ()  # x0, the only source without a writer, lies beyond the cut
    assert full.sources[0].dataset.name == "/wh/x0"
    assert "19 more hop(s) beyond depth 10 left out" in cut.lines()
    assert cut.to_dict()["omitted"] == 19 and full.to_dict()["shown_depth"] is None


def branching_dags() -> TraceIndex:
    """Eight DAGs, each a task widening ``x{n}`` from ``x{n-1}`` (every column from two) plus an indirect
    join key; DAG 3 is the one a test hides. Depth all from ``x8.a`` both ways is some 400 hops."""
    index = TraceIndex()
    cols = "abcdef"
    for n in range(1, 9):
        index.add(run(f"dag{n}", "build", 27, n), report(write(
            f"x{n}", {c: [(f"x{n - 1}", c, IDENTITY), (f"x{n - 1}", cols[(i + 1) % 6], TRANSFORMATION)]
                      for i, c in enumerate(cols)}, indirect=[(f"x{n - 1}", "a", JOIN)])))
        index.add(run(f"reader{n}", "read", 27, n), report(write(f"r{n}", {c: [(f"x{n}", c, IDENTITY)] for c in cols})))
    return index


def test_a_limited_trace_builds_only_the_depths_it_keeps_and_equals_the_full_trace_cut():
    index = branching_dags()
    for start, limit, visible in [(col("x8", "a"), 5, None), (col("x8", "a"), 20, None), (col("x4", "b"), 12, None),
                                  (col("x8", "a"), 20, lambda d: d != "dag3"), (col("x8"), 30, None),
                                  (col("x1", "c"), 1, None), (col("x8", "a"), 10_000, None)]:
        full = index.trace(start, visible=visible)
        limited = index.trace(start, visible=visible, limit=limit)
        assert limited == full.nearest(limit), (start, limit)
        assert len(limited.hops) + limited.omitted == len(full.hops)
    # What the cut kept is what a user reads: the nearest depth is whole even past the limit.
    one = index.trace(col("x8", "a"), downstream=False, limit=1)
    assert one.shown_depth == 1 and {h.depth for h in one.hops} == {1} and len(one.hops) == 3 and one.omitted > 0


def test_find_offers_what_each_new_run_brings_and_only_what_the_view_holds():
    index = two_dags()
    assert index.find("default.report") and not index.find("default.audit")
    # A later run of a task that now also writes an audit table: found as soon as it is added.
    index.add(run("dag_b", "build_report", 28), report(REPORT, write("audit", {"n": [("report", "users", AGGREGATION)]},
                                                                       index=1)))
    assert [d.label for d in index.find("default.audit")] == ["spark_catalog.default.audit"]
    # An older run of another task, added late, names a table the view does not hold yet...
    index.add(run("dag_c", "load", 20), report(write("late", {"x": [("audit", "n", IDENTITY)]})))
    index.add(run("dag_c", "load", 19), report(write("early", {"x": [("audit", "n", IDENTITY)]})))
    assert index.find("default.late") and not index.find("default.early")
    # ...until a newer run of that task writes it: the names are built again.
    index.add(run("dag_c", "load", 29), report(write("early", {"x": [("audit", "n", IDENTITY)]})))
    assert index.find("default.early")


def test_an_index_without_history_answers_as_one_with_it_and_keeps_one_run_a_task():
    runs = [(run("dag_a", "build_dwd", 20, 1), report(DWD)), (run("dag_b", "build_report", 25, 2), report(REPORT)),
            (run("dag_b", "build_report", 27, 2), report(REPORT)), (run("dag_b", "build_report", 26, 2), report(REPORT)),
            (run("dag_a", "build_dwd", 21, 1), report(write("dwd_users", {"id": [("ods_users", "id", IDENTITY)]})))]
    full, lean = TraceIndex(), TraceIndex(history=False)
    for r, doc in runs:
        full.add(r, doc)
        lean.add(r, doc)
    for start in (col("report", "company_name"), col("ods_users", "id"), col("dwd_users")):
        assert lean.trace(start) == full.trace(start)
    # One run a task with its lineage, and the time of the one before (the stale rule's).
    assert [len(v) for v in lean._runs.values()] == [2, 2]
    assert [r.edges == () for r in lean._runs[("dag_b", "build_report", -1)]] == [True, False]
    assert any(h.stale for h in lean.trace(col("report", "users"), downstream=False, depth=1).hops)
    # An earlier time is not in it: it says so rather than answer from the latest runs.
    with pytest.raises(ValueError, match="latest run only"):
        lean.trace(col("report", "company_name"), as_of="2026-11-26T00:00:00+00:00")
    assert lean.trace(col("report", "company_name"), as_of="2026-11-30T00:00:00+00:00") == full.trace(
        col("report", "company_name"), as_of="2026-11-30T00:00:00+00:00")


def test_a_run_noted_without_lineage_is_what_the_stale_rule_compares_with():
    index = TraceIndex(history=False)
    index.add(run("dag_a", "build_dwd", 20, 1), report(DWD))
    index.note_run(run("dag_b", "build_report", 26, 2))
    index.add(run("dag_b", "build_report", 27, 2), report(REPORT))
    [direct] = [h for h in index.trace(col("report", "company_name"), downstream=False, depth=1).hops if not h.indirect]
    assert "previous successful run (2026-11-26T02:00:00+00:00)" in direct.stale
    with pytest.raises(ValueError, match="older than its latest"):
        index.note_run(run("dag_b", "build_report", 28, 2))


# -- issue 42: hidden tables ---------------------------------------------------------------------------------
# A table no DAG the user may read touches is answered as one that does not exist; a table partly seen
# shows what the visible DAGs name, the hidden ones counted, never named.

def SEES_B(dag: str) -> bool:  # noqa: N802 - a user who may read DAG B only
    return dag == "dag_b"


def by_catalog_name(name: str) -> Dataset:
    """A table named as a static extraction names it: by catalog name, no location."""
    return Dataset(namespace="spark_catalog", name=f"default.{name}", table=f"spark_catalog.default.{name}")


def hidden_and_partial() -> TraceIndex:
    """DAG A (hidden) writes dwd_users by location from ods_users and dim_company, and a secret table from a
    vault; DAG B (visible) reads dwd_users by catalog name into the report."""
    index = two_dags()
    index.add(run("dag_a", "build_secret", 27, 3), report(write("secret", {
        "SSN": [("vault", "ssn", IDENTITY)], "salary": [("vault", "pay", TRANSFORMATION)]})))
    index.add(run("dag_b", "build_report", 27, 4), report(StatementLineage.of(
        index=0, sql="", method="sql", confidence=1.0, inputs=[by_catalog_name("dwd_users")],
        target=by_catalog_name("report"),
        columns=[("company_name", [Origin("spark_catalog.default.dwd_users", "company_name", IDENTITY, "c", False)]),
                 ("users", [Origin("spark_catalog.default.dwd_users", "id", AGGREGATION, "count(id)", False)])],
        indirect=(), warnings=())))
    return index


def unknown_spelling(text: str) -> str:
    """The same spelling of a table no task touches: ``secret`` -> ``nosuch`` (case kept)."""
    import re

    return re.sub("secret", lambda m: "nosuch" if m.group().islower() else "NOSUCH", text, flags=re.I)


HIDDEN_SPELLINGS = [("spark_catalog.default.secret", None), ("default.secret", None), ("secret", None),
                    ("SPARK_CATALOG.Default.SECRET", None), ("`default`.`secret`", None),
                    ("`spark_catalog`.`default`.`secret`.`ssn`", None), ("default.secret.ssn", None),
                    ("DEFAULT.SECRET.SSN", None), ("/wh/secret", None), ("file//wh/secret", None),
                    ("/wh/secret", "ssn"), ("/WH/SECRET", "SSN")]


@pytest.mark.parametrize("start, column", HIDDEN_SPELLINGS)
def test_a_hidden_table_is_answered_as_a_table_that_does_not_exist(start, column):
    from airflow_lineage_provider.lineage.trace import TraceQuery

    index = hidden_and_partial()
    # Whoever may read DAG A finds it under each spelling...
    assert not isinstance(TraceQuery.parse(start, column=column).run(index), str), start
    for visible in (lambda dag: False, SEES_B):  # ...a user with no role, or with DAG B only, does not
        for kwargs in ({}, {"upstream": False}, {"downstream": False}, {"depth": "1"}):
            got = TraceQuery.parse(start, column=column, **kwargs).run(index, visible=visible)
            unknown = TraceQuery.parse(unknown_spelling(start), column=column and unknown_spelling(column),
                                       **kwargs).run(index, visible=visible)
            assert isinstance(got, str) and got == unknown.replace("nosuch", "secret").replace("NOSUCH", "SECRET"), (
                start, got, unknown)
        assert index.starts(start, column, visible=visible) == []


def test_a_hidden_start_traced_directly_equals_an_unknown_one():
    index = hidden_and_partial()
    for start in (col("secret", "ssn"), col("secret"), col("vault", "ssn")):
        got = index.trace(start, visible=SEES_B)
        assert got == Trace(start=start, found=False), start
        assert index.trace(start, visible=lambda dag: False) == Trace(start=start, found=False)
        assert index.trace(start).found  # the DAG's readers see it


def test_search_offers_nothing_of_a_hidden_table():
    index = hidden_and_partial()
    assert {f.label for f in index.search("secret")} == {"spark_catalog.default.secret"}
    for q in ("secret", "SECRET", "ssn", "vault", "salary", "default.secret"):
        assert index.search(q, visible=SEES_B) == [] and index.search(q, visible=lambda dag: False) == [], q
    # Only DAG B's naming of a table both DAGs touch: by catalog name, never DAG A's location.
    got = index.search("dwd_users", visible=SEES_B)
    assert {(f.namespace, f.name, f.column) for f in got} == {
        ("spark_catalog", "default.dwd_users", ""), ("spark_catalog", "default.dwd_users", "company_name"),
        ("spark_catalog", "default.dwd_users", "id")}


def test_a_table_written_by_a_hidden_dag_shows_its_visible_reader_and_counts_the_writer():
    from airflow_lineage_provider.lineage.trace import TraceQuery

    index = hidden_and_partial()
    t = TraceQuery.parse("default.dwd_users.company_name").run(index, visible=SEES_B)
    # The start as DAG B names it: by catalog name, not by the location only DAG A's plan gave.
    assert t.found and (t.start.namespace, t.start.name, t.start.column) == (
        "spark_catalog", "default.dwd_users", "company_name")
    assert edges(t) == {(1, "report.company_name", "dwd_users.company_name", IDENTITY, "dag_b")}
    # DAG A's three hops into dwd_users (a column and two join keys): counted once, at their depth.
    assert [(h.direction, h.depth, h.hops) for h in t.hidden] == [(UPSTREAM, 1, 3)]
    assert t.sources == ()  # DAG A writes it: no "no task writes it" about a table that is written
    text = repr(t.to_dict()) + "\n".join(t.lines()) + repr(t.rows())
    for leak in ("dag_a", "build_dwd", "/wh/dwd_users", "ods_users", "dim_company", "'file'"):
        assert leak not in text, leak
    # Upstream of the report: DAG B's hop, then DAG A's hops into dwd_users.id counted at depth 2.
    up = TraceQuery.parse("default.report.users", downstream=False).run(index, visible=SEES_B)
    assert edges(up) == {(1, "report.users", "dwd_users.id", AGGREGATION, "dag_b")}
    assert [(h.direction, h.depth, h.hops) for h in up.hidden] == [(UPSTREAM, 2, 3)]
    assert "dag_a" not in repr(up.to_dict()) and "/wh/dwd_users" not in repr(up.to_dict())


def test_a_whole_table_partly_seen_counts_the_hidden_hops_once_a_depth():
    from airflow_lineage_provider.lineage.trace import TraceQuery

    index = hidden_and_partial()
    t = TraceQuery.parse("default.dwd_users", downstream=False).run(index, visible=SEES_B)
    assert (t.start.namespace, t.start.name, t.start.column) == ("spark_catalog", "default.dwd_users", "")
    assert t.hops == ()
    # Every hop of DAG A into the table, one count at depth 1: not one entry per column it writes.
    assert [(h.direction, h.depth, h.hops) for h in t.hidden] == [(UPSTREAM, 1, 5)]
    assert "age" not in repr(t.to_dict()) and "dag_a" not in repr(t.to_dict())


def test_a_column_of_a_partly_seen_table_that_only_a_hidden_dag_names_is_an_unknown_column():
    from airflow_lineage_provider.lineage.trace import TraceQuery

    index = hidden_and_partial()
    age = TraceQuery.parse("default.dwd_users.AGE").run(index, visible=SEES_B)  # only DAG A writes age
    unknown = TraceQuery.parse("default.dwd_users.NOSUCH").run(index, visible=SEES_B)
    assert age == replace(unknown, start=replace(unknown.start, column="AGE"))
    assert not age.found and age.hops == age.hidden == age.sources == ()
    assert age.start.column == "AGE"  # as the user typed it, never as the hidden DAG spells it
    assert TraceQuery.parse("default.dwd_users.AGE").run(index).start.column == "age"  # whoever reads DAG A


def test_a_partly_seen_table_asked_by_the_location_only_the_hidden_dag_gives_is_unknown():
    from airflow_lineage_provider.lineage.trace import TraceQuery

    index = hidden_and_partial()
    for start in ("/wh/dwd_users", "file//wh/dwd_users", "/wh/dwd_users.company_name"):
        got = TraceQuery.parse(start).run(index, visible=SEES_B)
        assert got == f"no task with column lineage writes or reads {start}", start
        assert not isinstance(TraceQuery.parse(start).run(index), str), start
    # The name DAG B gives finds it, for B's reader and for everyone else alike.
    for start in ("spark_catalog/default.dwd_users", "default.dwd_users"):
        for visible in (SEES_B, None):
            t = TraceQuery.parse(start, column="company_name").run(index, visible=visible)
            assert not isinstance(t, str) and t.found, (start, visible)


def test_an_ambiguous_name_lists_only_the_datasets_a_visible_dag_names():
    from airflow_lineage_provider.lineage.trace import TraceQuery

    index = hidden_and_partial()
    index.add(run("dag_a", "other", 27, 5), report(StatementLineage.of(
        index=0, sql="", method="plan", confidence=1.0, inputs=[],
        target=Dataset(namespace="s3://lake", name="x/report", table="spark_catalog.other.report"),
        columns=[("users", [])], indirect=(), warnings=())))
    assert "names 2 datasets" in TraceQuery.parse("report.users").run(index)
    t = TraceQuery.parse("report.users").run(index, visible=SEES_B)
    assert not isinstance(t, str) and t.start.label == "spark_catalog.default.report"
    assert "lake" not in repr(t.to_dict()) and "other" not in repr(t.to_dict())
    assert TraceQuery.parse("other.report.users").run(index, visible=SEES_B) == (
        "no task with column lineage writes or reads other.report.users")


def test_a_name_quoted_as_spark_quotes_it_names_the_same_start():
    from airflow_lineage_provider.lineage.trace import TraceQuery

    index = two_dags()
    plain = TraceQuery.parse("spark_catalog.default.report.company_name").run(index)
    for quoted in ("`spark_catalog`.`default`.`report`.`company_name`", "`default`.report.`COMPANY_NAME`",
                   " `report`.`company_name` "):
        assert TraceQuery.parse(quoted).run(index) == plain, quoted
    assert TraceQuery.parse("`default`.`report`", column="company_name").run(index) == plain
