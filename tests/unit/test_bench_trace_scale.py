"""The generator of ``bench/trace_scale.py``, small: its documents are valid lineage and chain across DAGs
as the bench says (a trace of the last table's column, depth all, walks every DAG), so the figures it
prints measure the trace they claim to."""

from __future__ import annotations

from airflow_lineage_provider.lineage.model import LineageReport
from airflow_lineage_provider.lineage.trace import TaskRun, TraceIndex, TraceQuery
from bench import trace_scale

DAGS, TASKS, WIDTH = 4, 3, 12


def _index() -> TraceIndex:
    index = TraceIndex()
    for d, t, doc in trace_scale.documents(DAGS, TASKS, WIDTH):
        ended = trace_scale.ended(d, t).isoformat()
        index.add(TaskRun(ended, trace_scale.dag_id(d), trace_scale.task_id(t), "bench_v1"), LineageReport.from_dict(doc))
    return index


def test_the_documents_chain_every_dag_through_shared_tables():
    index = _index()
    assert len(index) == DAGS * TASKS
    last = trace_scale.T + trace_scale.table(DAGS - 1, TASKS, TASKS)
    up = TraceQuery.parse(f"{last}.c010", downstream=False).run(index)
    assert {h.run.dag_id for h in up.hops} == {trace_scale.dag_id(d) for d in range(DAGS)}
    # c010 comes from c010 and the key each step; every step has a join and a filter as indirect inputs.
    assert max(h.depth for h in up.hops) == DAGS * TASKS
    assert {(h.source.column, h.subtype) for h in up.hops if h.indirect} == {("key", "JOIN"), ("status", "FILTER")}
    assert {s.dataset.label for s in up.sources} == {trace_scale.T + "raw_events", trace_scale.T + "dim_keys"}
    first = trace_scale.T + trace_scale.table(0, 1, TASKS)
    down = TraceQuery.parse(f"{first}.c011", upstream=False).run(index)
    assert len(down.hops) == DAGS * TASKS - 1 and {h.subtype for h in down.hops} == {"IDENTITY"}
    # The table is named as the plan extractor names a catalog table: its warehouse location.
    assert {f.name for f in index.find(last)} == {trace_scale.WAREHOUSE + trace_scale.table(DAGS - 1, TASKS, TASKS)}
