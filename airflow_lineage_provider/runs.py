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

    ``refresh`` reads only the lineage documents of task instances that succeeded since it last
    looked (by their end time: a document is pushed before its task instance succeeds, so the push
    time would miss a task that was still running). A new process starts empty and reads them all on
    its first refresh: the index is a cache of the database, never a second truth.
    """

    def __init__(self) -> None:
        from airflow_lineage_provider.lineage.trace import TraceIndex

        self.index = TraceIndex()
        self.problems: list[str] = []  # XComs skipped as no lineage document, each saying why
        self._mark: Any = None  # end time of the last task instance read
        self._at_mark: set[tuple[str, str, str, int]] = set()  # those that ended at that very time
        self._lock = threading.Lock()

    def refresh(self, session=None) -> int:
        """Add the runs that succeeded since the last refresh; how many were added."""
        from airflow.models.taskinstance import TaskInstance
        from airflow.models.xcom import XComModel
        from airflow.utils.session import create_session
        from airflow.utils.state import TaskInstanceState
        from sqlalchemy import select

        from airflow_lineage_provider.lineage.trace import TaskRun, moment

        query = (select(XComModel.dag_id, XComModel.task_id, XComModel.run_id, XComModel.map_index,
                        TaskInstance.end_date, XComModel.value)
                 .join(TaskInstance, (TaskInstance.dag_id == XComModel.dag_id)
                       & (TaskInstance.run_id == XComModel.run_id) & (TaskInstance.task_id == XComModel.task_id)
                       & (TaskInstance.map_index == XComModel.map_index))
                 .where(XComModel.key == XCOM_KEY, TaskInstance.state == TaskInstanceState.SUCCESS,
                        TaskInstance.end_date.is_not(None)))
        with self._lock:
            if self._mark is not None:
                query = query.where(TaskInstance.end_date >= self._mark)
            query = query.order_by(TaskInstance.end_date)

            def read(s) -> int:
                added = 0
                for dag_id, task_id, run_id, map_index, ended, value in s.execute(query):
                    ident = (dag_id, task_id, run_id, map_index)
                    if ended == self._mark and ident in self._at_mark:
                        continue
                    if ended != self._mark:
                        self._mark, self._at_mark = ended, set()
                    self._at_mark.add(ident)
                    try:
                        report = document_of(XComModel.deserialize_value(_Stored(value)))
                    except DocumentError as e:
                        self.problems.append(not_a_document(task_id, e, run_id))
                        continue
                    self.index.add(TaskRun(ended=moment(ended), dag_id=dag_id, task_id=task_id, run_id=run_id,
                                           map_index=map_index), report)
                    added += 1
                return added

            with _collector_paused():
                if session is not None:
                    return read(session)
                with create_session() as own:
                    return read(own)


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
