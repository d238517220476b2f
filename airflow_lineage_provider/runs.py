"""The one reader of lineage XComs: a task's or a run's lineage documents in Airflow's database.

One place knows which XComs are lineage and in which order runs come (the order their documents were
pushed): the UI's API (a run's graph, its version, each task's changes against its previous
successful run), ``airflow-lineage show`` (a run's documents) and ``airflow-lineage diff`` (a task's
last two runs) all ask here, and no other module imports ``XComModel``.
"""

from __future__ import annotations

import gc
import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from airflow_lineage_provider.lineage.model import XCOM_KEY, DocumentError, LineageReport


def document_of(value: Any) -> LineageReport:
    """A lineage XCom's value (the document, or its JSON text) as a report; ``DocumentError`` saying what
    is wrong when it is not one."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as e:
            raise DocumentError(f"it is text that is not JSON ({e})") from None
        except RecursionError:
            raise DocumentError("it is JSON nested too deep to read") from None
    return LineageReport.from_dict(value)


def not_a_document(task_id: str, error: DocumentError, run_id: str | None = None) -> str:
    """The sentence that says a task's lineage XCom was skipped, and why (UI API and CLI alike)."""
    run = f" in run {run_id}" if run_id else ""
    return f"task {task_id}: XCom {XCOM_KEY!r}{run} is not a lineage document ({error})"


@dataclass(frozen=True)
class PushedDocument:
    """A lineage XCom as stored: the value is what the task pushed (a lineage document, or not)."""

    task_id: str
    map_index: int
    value: Any


@dataclass(frozen=True)
class LineageRun:
    """A run in which a task instance pushed a lineage document."""

    run_id: str
    map_index: int


def lineage_runs(dag_id: str, task_id: str, *, run_ids: list[str] | None = None, map_index: int | None = None,
                 successful: bool = False, session=None) -> list[LineageRun]:
    """The task's runs with a lineage document, oldest first; ``successful``: only where the task instance
    succeeded (a failed try may have pushed a document of a statement that never committed)."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from airflow.utils.state import TaskInstanceState
    from sqlalchemy import select

    query = select(XComModel.run_id, XComModel.map_index).where(
        XComModel.dag_id == dag_id, XComModel.task_id == task_id, XComModel.key == XCOM_KEY)
    if run_ids:
        query = query.where(XComModel.run_id.in_(run_ids))
    if map_index is not None:
        query = query.where(XComModel.map_index == map_index)
    if successful:
        query = query.join(TaskInstance, (TaskInstance.dag_id == XComModel.dag_id)
                           & (TaskInstance.run_id == XComModel.run_id) & (TaskInstance.task_id == XComModel.task_id)
                           & (TaskInstance.map_index == XComModel.map_index)).where(
            TaskInstance.state == TaskInstanceState.SUCCESS)
    query = query.order_by(XComModel.timestamp, XComModel.map_index)
    if session is not None:
        return [LineageRun(r, m) for r, m in session.execute(query)]
    with create_session() as own:
        return [LineageRun(r, m) for r, m in own.execute(query)]


def read_document(dag_id: str, task_id: str, run: LineageRun, session=None) -> LineageReport:
    """The lineage document a task instance pushed in one run; ``DocumentError`` when the value is not one."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    def read(s) -> LineageReport:
        row = s.scalars(select(XComModel).where(
            XComModel.dag_id == dag_id, XComModel.task_id == task_id, XComModel.run_id == run.run_id,
            XComModel.map_index == run.map_index, XComModel.key == XCOM_KEY)).one()
        return document_of(XComModel.deserialize_value(row))

    if session is not None:
        return read(session)
    with create_session() as own:
        return read(own)


def previous_successful(dag_id: str, task_id: str, run_id: str, map_index: int, session=None) -> LineageRun | None:
    """The task instance's run before ``run_id`` that succeeded and pushed lineage (same map index)."""
    runs = lineage_runs(dag_id, task_id, map_index=map_index, successful=True, session=session)
    before = None
    for run in runs:
        if run.run_id == run_id:
            return before
        before = run
    return None  # this run is not a successful one with lineage: nothing to compare it with


def task_documents(dag_id: str, task_id: str, run_ids: list[str] | None
                   ) -> tuple[list[tuple[str, LineageReport]] | str, list[str]]:
    """A task's lineage documents of two runs, old then new (by default its latest two successful runs with
    a lineage document, as the UI's changes view compares), or a sentence saying why not; and the runs
    whose XCom was skipped as no lineage document, each with the reason (as ``run_documents`` says)."""
    from airflow.utils.session import create_session

    if run_ids and len(run_ids) != 2:
        return f"give two runs to compare, old then new (--run-id given {len(run_ids)} times)", []
    runs = lineage_runs(dag_id, task_id, run_ids=run_ids, successful=not run_ids)
    by_run = {r.run_id: r for r in runs}  # a mapped task: its last map index, as XCom's order says
    missing = [r for r in run_ids or () if r not in by_run]
    if missing:
        return f"task {task_id} of DAG {dag_id} has no column lineage in run(s) {', '.join(missing)}", []
    found: list[tuple[str, LineageReport]] = []
    problems: list[str] = []
    with create_session() as session:
        for run in run_ids or reversed(by_run):  # given: those two; else the newest readable two
            if len(found) == 2:
                break
            try:
                found.append((run, read_document(dag_id, task_id, by_run[run], session=session)))
            except DocumentError as e:
                problems.append(not_a_document(task_id, e, run))
    if len(found) != 2:
        which = "of the runs given" if run_ids else "successful runs"
        return (f"task {task_id} of DAG {dag_id} has a lineage document in {len(found)} {which}: two are needed",
                problems)
    return (found if run_ids else found[::-1]), problems


def _run_query(dag_id: str, run_id: str, task_ids: list[str] | None, map_index: int | None, *columns: Any) -> Any:
    from airflow.models.xcom import XComModel
    from sqlalchemy import select

    query = select(*columns).where(XComModel.dag_id == dag_id, XComModel.run_id == run_id, XComModel.key == XCOM_KEY)
    if task_ids:
        query = query.where(XComModel.task_id.in_(task_ids))
    if map_index is not None:
        query = query.where(XComModel.map_index == map_index)
    return query.order_by(XComModel.timestamp, XComModel.task_id, XComModel.map_index)


def run_version(dag_id: str, run_id: str, task_ids: list[str] | None = None, map_index: int | None = None
                ) -> tuple[Any, ...]:
    """What a run's lineage is, without reading a value: each lineage XCom (task, map index, when pushed)
    and the previous successful run each is compared with. Equal versions, equal documents and changes."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        rows = session.execute(_run_query(dag_id, run_id, task_ids, map_index, XComModel.task_id,
                                          XComModel.map_index, XComModel.timestamp)).all()
        return tuple((t, m, str(ts), previous_successful(dag_id, t, run_id, m, session=session)) for t, m, ts in rows)


def run_values(dag_id: str, run_id: str, task_ids: list[str] | None = None,
               map_index: int | None = None) -> list[PushedDocument]:
    """The lineage XComs of a DAG run (or some of its tasks), in the order they were pushed."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        rows = session.scalars(_run_query(dag_id, run_id, task_ids, map_index, XComModel)).all()
        return [PushedDocument(row.task_id, row.map_index, XComModel.deserialize_value(row)) for row in rows]


def run_documents(dag_id: str, run_id: str, task_ids: list[str] | None = None, map_index: int | None = None
                  ) -> tuple[list[tuple[PushedDocument, LineageReport]], list[str]]:
    """The lineage documents of a DAG run, each with its XCom; a value that is not a lineage document is
    skipped with a sentence saying so (the second list), never an exception."""
    documents: list[tuple[PushedDocument, LineageReport]] = []
    problems: list[str] = []
    for pushed in run_values(dag_id, run_id, task_ids, map_index):
        try:
            documents.append((pushed, document_of(pushed.value)))
        except DocumentError as e:
            problems.append(not_a_document(pushed.task_id, e))
    return documents, problems


def latest_run(dag_id: str, task_ids: list[str] | None = None) -> str | None:
    """The DAG's run whose lineage was pushed last (of these tasks); ``None`` when none has lineage."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    query = select(XComModel.run_id).where(XComModel.dag_id == dag_id, XComModel.key == XCOM_KEY)
    if task_ids:
        query = query.where(XComModel.task_id.in_(task_ids))
    with create_session() as session:
        return session.scalar(query.order_by(XComModel.timestamp.desc()).limit(1))


# -- the cross-DAG trace: every task's lineage, followed as runs finish -------------------------------------


class TraceFollower:
    """The cross-DAG index (``lineage/trace.TraceIndex``) kept current without reading every XCom again.

    A new process reads, once, each task's latest successful run with lineage (and the end time of the
    one before, for the stale rule): what it reads grows with the tasks, not with the runs the database
    keeps. ``refresh`` then reads only the documents of task instances that succeeded since it last
    looked (by their end time: a document is pushed before its task instance succeeds, so the push
    time would miss a task that was still running). ``index_at`` answers "as of" an earlier time from
    the database the same way. The index is a cache of the database, never a second truth.
    """

    def __init__(self) -> None:
        from airflow_lineage_provider.lineage.trace import TraceIndex

        self.index = TraceIndex(history=False)
        self.problems: list[str] = []  # XComs skipped as no lineage document, each saying why
        self._mark: Any = None  # end time of the last task instance read
        self._at_mark: set[tuple[str, str, str, int]] = set()  # those that ended at that very time
        self._lock = threading.Lock()
        self._then: dict[str, Any] = {}  # ``index_at``'s last answers, by time

    def refresh(self, session=None) -> int:
        """Add the runs that succeeded since the last refresh (the first: each task's latest); how many
        lineage documents were read."""
        with self._lock, _collector_paused():
            if session is not None:
                return self._read(session)
            from airflow.utils.session import create_session

            with create_session() as own:
                return self._read(own)

    def index_at(self, as_of: str | None) -> Any:
        """The index a trace ``as_of`` that time reads: this one, current, when ``None``; else one built
        from each task's latest successful run at that time (the last few are kept)."""
        if as_of is None:
            self.refresh()
            return self.index
        with self._lock:
            known = self._then.get(as_of)
        if known is not None:
            return known
        from airflow.utils.session import create_session

        from airflow_lineage_provider.lineage.trace import TraceIndex

        index = TraceIndex(history=False)
        with _collector_paused(), create_session() as session:
            for row in session.execute(_latest_runs(until=as_of)):
                self._take(index, row)
        with self._lock:
            if len(self._then) >= 4:
                self._then.pop(next(iter(self._then)))
            self._then[as_of] = index
        return index

    def _read(self, session) -> int:
        from airflow.models.taskinstance import TaskInstance

        if self._mark is None:
            rows = session.execute(_latest_runs())
        else:
            rows = session.execute(_lineage_runs().where(TaskInstance.end_date >= self._mark)
                                   .order_by(TaskInstance.end_date))
        added = 0
        for row in rows:
            ident = (row.dag_id, row.task_id, row.run_id, row.map_index)
            if row.ended == self._mark and ident in self._at_mark:
                continue
            if self._mark is None or row.ended > self._mark:
                self._mark, self._at_mark = row.ended, set()
            if row.ended == self._mark:
                self._at_mark.add(ident)
            added += self._take(self.index, row)
        return added

    def _take(self, index: Any, row: Any) -> int:
        """Put one row in ``index``: its document (1 read), or, for the run before a task's latest, its time."""
        from airflow.models.xcom import XComModel

        from airflow_lineage_provider.lineage.trace import TaskRun, moment

        run = TaskRun(ended=moment(row.ended), dag_id=row.dag_id, task_id=row.task_id, run_id=row.run_id,
                      map_index=row.map_index)
        if getattr(row, "rank", 1) > 1:
            index.note_run(run)
            return 0
        try:
            report = document_of(XComModel.deserialize_value(_Stored(row.value)))
        except DocumentError as e:
            self.problems.append(not_a_document(row.task_id, e, row.run_id))
            return 0
        index.add(run, report)
        return 1


def _lineage_runs():
    """Successful task instances with a lineage document: its key, end time (``ended``) and value."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.state import TaskInstanceState
    from sqlalchemy import select

    return (select(XComModel.dag_id, XComModel.task_id, XComModel.run_id, XComModel.map_index,
                   TaskInstance.end_date.label("ended"), XComModel.value)
            .join(TaskInstance, (TaskInstance.dag_id == XComModel.dag_id) & (TaskInstance.run_id == XComModel.run_id)
                  & (TaskInstance.task_id == XComModel.task_id) & (TaskInstance.map_index == XComModel.map_index))
            .where(XComModel.key == XCOM_KEY, TaskInstance.state == TaskInstanceState.SUCCESS,
                   TaskInstance.end_date.is_not(None)))


def _latest_runs(until: Any = None):
    """Each task's two latest successful runs with lineage (ended by ``until``), oldest first: the value of
    the latest (``rank`` 1) only, the one before (``rank`` 2) for its end time. One query, ranked in the
    database, so that the documents of older runs are never read."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from sqlalchemy import case, func, select

    rank = func.row_number().over(partition_by=(XComModel.dag_id, XComModel.task_id, XComModel.map_index),
                                  order_by=TaskInstance.end_date.desc()).label("rank")
    runs = _lineage_runs().with_only_columns(XComModel.dag_id, XComModel.task_id, XComModel.run_id,
                                            XComModel.map_index, TaskInstance.end_date.label("ended"), rank)
    if until is not None:
        from datetime import datetime

        from airflow_lineage_provider.lineage.trace import moment

        runs = runs.where(TaskInstance.end_date <= datetime.fromisoformat(moment(until)))
    ranked = runs.subquery()
    return (select(ranked.c.dag_id, ranked.c.task_id, ranked.c.run_id, ranked.c.map_index, ranked.c.ended,
                   ranked.c.rank, case((ranked.c.rank == 1, XComModel.value), else_=None).label("value"))
            .join(XComModel, (XComModel.dag_id == ranked.c.dag_id) & (XComModel.run_id == ranked.c.run_id)
                  & (XComModel.task_id == ranked.c.task_id) & (XComModel.map_index == ranked.c.map_index)
                  & (XComModel.key == XCOM_KEY))
            .where(ranked.c.rank <= 2)
            .order_by(ranked.c.ended, ranked.c.rank.desc()))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while runs are read: reading 10,000 documents makes millions of
    small objects, none in a cycle, and each pass of the collector walks all those kept so far (the
    full build took 3.5 times as long with it on). It is back on, as it was, when reading ends."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass(frozen=True)
class _Stored:
    """What ``XComModel.deserialize_value`` reads: an object with the stored ``value``."""

    value: Any


_FOLLOWER: TraceFollower | None = None
_FOLLOWER_LOCK = threading.Lock()


def trace_follower() -> TraceFollower:
    """This process's follower, created on first use and refreshed by each caller that asks."""
    global _FOLLOWER
    with _FOLLOWER_LOCK:
        if _FOLLOWER is None:
            _FOLLOWER = TraceFollower()
        return _FOLLOWER
