"""Capture every write's analyzed plan inside the Spark driver.

A py4j ``QueryExecutionListener`` sees each executed command, whether it came
from SQL or the DataFrame API. For each write it keeps the analyzed plan; the
plan is described later, off Spark's way: its JSON, and what that JSON loses
(``jvm.py``), as a raw record (``lineage/plan/record.py``). Spark reports one write
several times (``saveAsTable``: three events, CTAS: two); which of them stands for
the write is the reader's to decide (``lineage/plan/events.py``), and this capture
asks the same functions before describing any plan, as describing costs tens of
milliseconds. Imports only pyspark, the standard library and lineage's ground floor.
"""

from __future__ import annotations

import json
import threading
import traceback
from typing import Any

from airflow_lineage_provider.job import jvm
from airflow_lineage_provider.lineage.plan import events, writes
from airflow_lineage_provider.lineage.plan import record as raw

# A listener event waiting to be described: the head of its record (``record.event``) and its
# analyzed plan (a JVM object).
Event = tuple[dict[str, Any], Any]
# A plan to describe: an event's, or one that is no event (a dry run's analysis, a query's) with no head.
Plan = tuple[dict[str, Any] | None, Any]

# Fields of Spark's plan JSON that lineage never reads: dropped from the dump, which halves it.
_UNUSED_FIELDS = frozenset({
    "jvmId", "product-class", "metadata", "nullable", "explicitMetadata", "nonInheritableMetadataKeys",
    "timeZoneId", "evalMode", "nullOnOverflow", "failOnError", "ansiEnabled",
})
_CATALOG_FIELDS = frozenset({"catalogTable", "tableMeta", "table", "tableDesc"})


def is_write(plan: Any) -> bool:
    """A command whose target is a dataset (temporary views are not)."""
    return write_command(plan) is not None


def write_plans(plan: Any) -> list[Any]:
    """The writes an analyzed plan makes, each its own: the plan itself, or each insert of a multi-insert
    (``FROM s INSERT INTO a ... INSERT INTO b ...``: a Union of write commands, which Spark runs one by one)."""
    plan = jvm.unwrap(plan)
    if jvm.simple_name(plan) == "Union":
        kids = plan.children()
        inserts = [kids.apply(i) for i in range(kids.size())]
        if inserts and all(is_write(k) for k in inserts):
            return inserts
    return [plan] if is_write(plan) else []


def write_command(plan: Any) -> str | None:
    """The class of the write command ``plan`` runs (EXECUTE IMMEDIATE's, unwrapped), or ``None``."""
    plan = jvm.unwrap(plan)
    name = jvm.simple_name(plan)
    return name if writes.is_write(name, plan.viewType().toString() if name == "CreateViewCommand" else "") \
        else None


def compact(value: Any) -> Any:
    """The plan JSON without what lineage never reads (a catalog table keeps its identifier)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in _UNUSED_FIELDS:
                continue
            if key in _CATALOG_FIELDS and isinstance(item, dict) and "identifier" in item:
                item = {"identifier": item["identifier"]}
            out[key] = compact(item)
        return out
    if isinstance(value, list):
        return [compact(v) for v in value]
    return value


class PlanCapture:
    """Collects the writes Spark reports.

    The listener only keeps a reference to each write's analyzed plan: turning it
    into JSON (tens of milliseconds in the JVM) happens in ``describe``, which the
    runners call on a background thread (scripts) or at the end (applications).
    A script's runner takes the writes after each statement (``flush``); an
    application's, all at once (``drain``).
    """

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.jvm = spark.sparkContext._jvm
        self._lock = threading.Lock()
        self._pending: list[Event] = []
        self.warnings: list[str] = []
        self.location = jvm.TableLocations(spark)
        self._listener: _Listener | None = None
        self._java_listener: Any = None

    # -- listener ------------------------------------------------------------------

    def install(self) -> None:
        """Register the listener (starts py4j's callback server if needed)."""
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(self.spark.sparkContext._gateway)
        manager = self.spark._jsparkSession.listenerManager()
        before = len(manager.listListeners())
        self._listener = _Listener(self)
        manager.register(self._listener)
        # py4j hands Spark a new proxy each time a Python object is passed: keep the one
        # Spark holds (registration appends it), so that uninstall removes it.
        listeners = manager.listListeners()
        self._java_listener = listeners[len(listeners) - 1] if len(listeners) == before + 1 else None

    def uninstall(self) -> None:
        if self._listener is not None:
            self._listener.closed = True
            if self._java_listener is not None:
                try:
                    self.spark._jsparkSession.listenerManager().unregister(self._java_listener)
                except Exception as e:  # noqa: BLE001 - lineage never breaks the job: it stays registered, closed
                    self.warnings.append(f"the plan capture could not be unregistered: {type(e).__name__}")
            self._listener = self._java_listener = None

    def on_success(self, func_name: str, qe: Any) -> None:
        try:
            # A multi-insert is one event ("multi-commands") for all its inserts: each is a write of its own.
            found = [(command, plan) for plan in write_plans(qe.analyzed())
                     if (command := write_command(plan)) is not None]
            if found:
                qid = int(qe.id())
                with self._lock:
                    self._pending += [(raw.event(qid, func_name, command), plan) for command, plan in found]
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            self.warnings.append(f"plan capture failed: {e}\n{traceback.format_exc(limit=3)}")

    def _take(self) -> list[Event]:
        """The events since the last take, once Spark's listener bus has delivered them all."""
        self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
        with self._lock:
            pending, self._pending = self._pending, []
        return pending

    def flush(self) -> list[Event]:
        """One statement's write events, less those the reader would drop before describing them:
        the insert a CTAS runs inside it, the ``saveAsTable`` around a CTAS or an insert."""
        pending = self._take()
        return _kept(pending, events.drop_inner([head for head, _ in pending]))

    def drain(self) -> list[Event]:
        """An application's (or a scripting block's) write events since the last drain, one per user
        action, in the order the reader keeps them."""
        pending = self._take()
        return _kept(pending, events.one_per_action([head for head, _ in pending]))

    # -- describing a plan -------------------------------------------------------------

    def describe_all(self, plans: list[Plan]) -> list[dict[str, Any]]:
        """Records of a statement's writes, one per target."""
        return events.one_per_target(self.describe_each(plans))

    def describe_each(self, plans: list[Plan], *, sql_text: bool = False) -> list[dict[str, Any]]:
        """One record per plan; a plan that cannot be described is a warning. With ``sql_text``, a
        write made with ``spark.sql`` keeps its SQL (an application's: it has no script; ``jvm.sql_text``)."""
        records = []
        for head, plan in plans:
            try:
                record = self.describe(plan, head)
            except Exception as e:  # noqa: BLE001 - lineage never breaks the job
                self.warnings.append(f"plan capture failed: {e}")
                continue
            if sql_text:
                try:
                    text = jvm.sql_text(plan)
                    if text:
                        record[raw.SQL] = text
                except Exception:  # noqa: BLE001 - the text annotates the write: its lineage stands without it
                    pass
            records.append(record)
        return records

    def describe(self, plan: Any, head: dict[str, Any] | None = None) -> dict[str, Any]:
        """The raw record of one analyzed plan: its JSON and what the JSON loses; ``head``: the keys
        of the listener event that reported it."""
        plan = jvm.unwrap(plan)
        parsed = json.loads(plan.toJSON())
        extras = raw.new_extras()
        try:
            jvm.add_table_locations(parsed, extras, self.location)
            jvm.add_path_relations(plan, parsed, extras)
            jvm.add_expand_projections(plan, parsed, extras, compact)
            jvm.add_source_relations(plan, parsed, extras)
            write = jvm.write_details(plan, self.location)
            if write:
                extras[raw.WRITE] = write
        except Exception as e:  # noqa: BLE001 - a JVM reader failing costs the extras, not the record
            self.warnings.append(f"could not read locations from the JVM: {e}")
        kind = raw.WRITE_KIND if jvm.simple_name(plan) in writes.WRITES else raw.QUERY_KIND
        return raw.make(kind, compact(parsed), extras, head)


class _Listener:
    """The py4j side of ``org.apache.spark.sql.util.QueryExecutionListener``."""

    def __init__(self, capture: PlanCapture) -> None:
        self.capture = capture
        self.closed = False

    def onSuccess(self, funcName: str, qe: Any, durationNs: int) -> None:  # noqa: N802, N803
        if not self.closed:
            self.capture.on_success(funcName, qe)

    def onFailure(self, funcName: str, qe: Any, exception: Any) -> None:  # noqa: N802, N803
        return None

    # Spark compares listeners with equals() to unregister one; with another QueryExecutionListener
    # registered (the JVM listener, a user's own), Java calls these on the py4j proxy.
    def equals(self, other: Any) -> bool:
        return other is self

    def hashCode(self) -> int:  # noqa: N802
        return id(self) & 0x7FFFFFFF

    def toString(self) -> str:  # noqa: N802
        return "airflow-lineage py4j capture"

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]


def digested(record: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """The record with its lean plan (``lineage/plan/digest.py``) and its resolved lineage, both worked
    out in the driver while Spark runs on, so that the hook only reads them. Spark's own JSON, with a
    warning, if the digest fails, and no lineage if the resolution does (the hook does either again)."""
    from airflow_lineage_provider.lineage.plan import resolve
    from airflow_lineage_provider.lineage.plan.digest import digest

    try:
        lean = digest(record)
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        warnings.append(f"plan digest failed, dumped Spark's JSON: {e.__class__.__name__}: {e}")
        return record
    try:
        lean[resolve.RESOLVED] = resolve.resolved(resolve.extract(lean))
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        warnings.append(f"plan lineage not resolved in the driver: {e.__class__.__name__}: {e}")
    return lean


def _kept(pending: list[Event], heads: list[dict[str, Any]]) -> list[Event]:
    """The events whose heads the reduction kept, in the order it keeps them."""
    plans = {id(head): plan for head, plan in pending}
    return [(head, plans[id(head)]) for head in heads]
