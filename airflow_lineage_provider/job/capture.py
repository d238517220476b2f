"""Capture every write's analyzed plan inside the Spark driver.

A py4j ``QueryExecutionListener`` sees each executed command, whether it came
from SQL or the DataFrame API. For each write it keeps the analyzed plan; the
plan is described later, off Spark's way: its JSON, and what that JSON loses
(``jvm.py``). Spark reports one write several times (``saveAsTable``: three
events, CTAS: two): a script's statement keeps one record per target, an
application one write per user action (``nest_writes``). Which commands are
writes, and which of one write's events wins, is ``lineage/plan/writes.py``'s.
Imports only pyspark, the standard library and lineage's ground floor.
"""

from __future__ import annotations

import json
import threading
import traceback
from typing import Any, Callable

from airflow_lineage_provider.job import jvm
from airflow_lineage_provider.lineage.naming import table_name
from airflow_lineage_provider.lineage.plan import writes

# Fields of Spark's plan JSON that lineage never reads: dropped from the dump, which halves it.
_UNUSED_FIELDS = frozenset({
    "jvmId", "product-class", "metadata", "nullable", "explicitMetadata", "nonInheritableMetadataKeys",
    "timeZoneId", "evalMode", "nullOnOverflow", "failOnError", "ansiEnabled",
})
_CATALOG_FIELDS = frozenset({"catalogTable", "tableMeta", "table", "tableDesc"})


def is_write(plan: Any) -> bool:
    """A command whose target is a dataset (temporary views are not)."""
    plan = jvm.unwrap(plan)
    name = jvm.simple_name(plan)
    return writes.is_write(name, plan.viewType().toString() if name == "CreateViewCommand" else "")


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
        self._pending: list[tuple[int, str, str, Any]] = []  # (query execution id, func, class, plan)
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
                self.spark._jsparkSession.listenerManager().unregister(self._java_listener)
            self._listener = self._java_listener = None

    def on_success(self, func_name: str, qe: Any) -> None:
        try:
            plan = qe.analyzed()
            if is_write(plan):
                with self._lock:
                    self._pending.append((int(qe.id()), func_name, jvm.simple_name(plan), plan))
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            self.warnings.append(f"plan capture failed: {e}\n{traceback.format_exc(limit=3)}")

    def _take(self) -> list[tuple[int, str, str, Any]]:
        """The events since the last take, once Spark's listener bus has delivered them all."""
        self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
        with self._lock:
            pending, self._pending = self._pending, []
        return pending

    def flush(self) -> list[Any]:
        """The analyzed plans of one statement's writes.

        Spark reports some writes more than once: the insert a CTAS runs inside is a
        "file source write" of its own, and ``saveAsTable`` wraps a CTAS or an insert.
        Those inner and outer events are dropped here, before any plan is described.
        """
        pending = self._take()
        created = any(writes.creates(name) and func == "command" for _, func, name, _ in pending)
        return [plan for _, func, name, plan in pending
                if not (created and func != "command") and not (name == "SaveAsV1TableCommand" and len(pending) > 1)]

    def drain(self) -> list[Any]:
        """The analyzed plans of an application's writes since the last drain, one per user action."""
        kept = nest_writes([(qid, (name, plan)) for qid, _, name, plan in self._take()],
                           lambda item: writes.rank(item[0]))
        return [plan for _, plan in kept]

    # -- describing a plan -------------------------------------------------------------

    def describe_all(self, plans: list[Any]) -> list[dict[str, Any]]:
        """Records of a statement's writes, one per target."""
        return deduplicate(self.describe_each(plans))

    def describe_each(self, plans: list[Any], *, sql_text: bool = False) -> list[dict[str, Any]]:
        """One record per plan; a plan that cannot be described is a warning. With ``sql_text``, a
        write made with ``spark.sql`` keeps its SQL (an application's: it has no script)."""
        records = []
        for plan in plans:
            try:
                record = self.describe(plan)
            except Exception as e:  # noqa: BLE001 - lineage never breaks the job
                self.warnings.append(f"plan capture failed: {e}")
                continue
            if sql_text:
                try:
                    text = plan.origin().sqlText()
                    if text.isDefined():
                        record["sql_text"] = str(text.get())
                except Exception:  # noqa: BLE001 - no origin: a DataFrame write
                    pass
            records.append(record)
        return records

    def describe(self, plan: Any) -> dict[str, Any]:
        """The record of one analyzed plan: its JSON and what the JSON loses."""
        plan = jvm.unwrap(plan)
        parsed = json.loads(plan.toJSON())
        extras: dict[str, Any] = {"tables": {}, "relations": {}}
        try:
            jvm.add_table_locations(parsed, extras, self.location)
            jvm.add_path_relations(plan, parsed, extras)
            jvm.add_expand_projections(plan, parsed, extras, compact)
            jvm.add_source_relations(plan, parsed, extras)
            write = jvm.write_details(plan, self.location)
            if write:
                extras["write"] = write
        except Exception as e:  # noqa: BLE001 - a JVM reader failing costs the extras, not the record
            self.warnings.append(f"could not read locations from the JVM: {e}")
        return {"kind": "write" if jvm.simple_name(plan) in writes.WRITES else "query", "plan": compact(parsed),
                "extras": extras}


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

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]


def nest_writes(events: list[tuple[int, Any]], rank: Callable[[Any], int]) -> list[Any]:
    """One write per user action, from the listener's events in arrival order.

    Each event is ``(query execution id, item)``. A command that runs other commands
    (``saveAsTable`` runs a CTAS, which runs an insert) gets its id first and reports
    last, so the events that arrived before it with a larger id ran inside it. Of such a
    nest, the item with the lowest ``rank`` is kept (the CTAS over the insert it runs,
    anything over ``SaveAsV1TableCommand``); on a tie the outermost.
    """
    kept: list[tuple[int, Any]] = []
    for qid, item in events:
        inner = [k for k in kept if k[0] > qid]
        if inner:
            kept = [k for k in kept if k[0] <= qid]
            nest = [(qid, item)] + sorted(inner, key=lambda k: k[0])
            kept.append(min(nest, key=lambda k: rank(k[1])))  # min keeps the first (outermost) on ties
        else:
            kept.append((qid, item))
    return [item for _, item in kept]


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


def deduplicate(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep one record per target: Spark reports a CTAS or ``saveAsTable`` more than once."""
    best: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for rec in records:
        key = target_key(rec)
        rank = writes.rank(jvm.short(rec["plan"][0]["class"]))
        if key not in best:
            order.append(key)
            best[key] = rec
        elif rank < writes.rank(jvm.short(best[key]["plan"][0]["class"])):
            best[key] = rec
    return [best[k] for k in order]


def target_key(rec: dict[str, Any]) -> str:
    """Where a write lands: its location when known (a CTAS and the insert it runs share it)."""
    write = rec.get("extras", {}).get("write") or {}
    where = write.get("path") or write.get("location")
    if where:
        # One directory, however it is spelled: INSERT OVERWRITE DIRECTORY names ``file:/x``, the file
        # insert it runs ``file:///x`` or ``/x``.
        where = str(where).rstrip("/")
        return "/" + where[len("file:"):].lstrip("/") if where.startswith("file:") else where
    root = rec["plan"][0]
    for fname in ("catalogTable", "table", "tableDesc"):
        meta = root.get(fname)
        if isinstance(meta, dict) and isinstance(meta.get("identifier"), dict):
            return table_name(meta["identifier"]) or ""
    return str(id(rec))
