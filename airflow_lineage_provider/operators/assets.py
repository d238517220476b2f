"""Airflow assets from a run's column lineage: what it wrote becomes asset events, what it read their inlets.

Every table or path a run wrote is an asset event, added through the task's ``AssetAlias``
(``column_lineage/<dag_id>/<task_id>``, put in the running task's outlets here), so a DAG scheduled on
``Asset("file:///.../t")`` runs after the task writes ``t``. Assets are named by the URI of the
OpenLineage dataset (``lineage/naming.py``), so the Assets view and the OpenLineage events name one
thing alike. Airflow 3.3 records no inlets a task learns at run time (only those declared in the DAG),
so each event's ``extra`` says what the write read (``inputs``: URIs) and which columns it wrote.
"""

from __future__ import annotations

import logging
from typing import Any

from airflow_lineage_provider.lineage.model import LineageReport
from airflow_lineage_provider.lineage.naming import dataset_uri
from airflow_lineage_provider.lineage.redact import strip_jdbc_credentials

log = logging.getLogger(__name__)

ALIAS_PREFIX = "column_lineage"


def alias_name(dag_id: str, task_id: str) -> str:
    """The asset alias a task's writes are reported through: one per task."""
    return f"{ALIAS_PREFIX}/{dag_id}/{task_id}"


def written(report: LineageReport) -> dict[str, dict[str, Any]]:
    """``{uri: extra}`` of every dataset the run wrote, in order: each with the URIs it was read from
    and the columns written (a table written by two statements is one asset, their union)."""
    out: dict[str, dict[str, Any]] = {}
    for statement in report.statements:
        target = statement.target
        uri = dataset_uri(target.namespace, target.name) if target else None
        if uri is None:
            continue
        entry = out.setdefault(_clean(uri), {"inputs": [], "columns": []})
        if target.table:
            entry["table"] = target.table
        for source in statement.inputs:
            source_uri = dataset_uri(source.namespace, source.name)
            if source_uri and _clean(source_uri) not in entry["inputs"]:
                entry["inputs"].append(_clean(source_uri))
        entry["columns"] += [name for name, _ in statement.columns if name not in entry["columns"]]
    return out


def read(report: LineageReport) -> list[str]:
    """URIs of every dataset the run read."""
    uris: list[str] = []
    for statement in report.statements:
        for source in statement.inputs:
            uri = dataset_uri(source.namespace, source.name)
            if uri and _clean(uri) not in uris:
                uris.append(_clean(uri))
    return uris


def publish(task: Any, context: Any, report: LineageReport | None) -> list[str]:
    """Add the run's writes as asset events through the task's alias; return their URIs.

    Never raises: an asset that Airflow refuses, or anything else going wrong, is one warning line,
    and the task's outcome stays Spark's.
    """
    if report is None:
        return []
    try:
        from airflow.sdk import Asset, AssetAlias

        alias = AssetAlias(name=alias_name(task.dag_id, task.task_id))
        if alias not in (task.outlets or []):
            # A new list: the running task is a shallow copy of the DAG's, sharing its outlets list.
            task.outlets = [*(task.outlets or []), alias]
        events = context["outlet_events"][alias]
        published = []
        for uri, extra in written(report).items():
            try:
                events.add(Asset(uri), extra=extra)
            except Exception as e:  # noqa: BLE001 - an asset Airflow refuses costs that asset only
                log.warning("Column lineage: %s is not reported as an Airflow asset: %s", uri, e)
                continue
            published.append(uri)
        _record_inlets(task, read(report))
        if published:
            log.info("Column lineage: asset events for %s (alias %s)", ", ".join(published), alias.name)
        return published
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.warning("Column lineage: no Airflow asset events for this run: %s: %s", type(e).__name__, e)
        return []


def _record_inlets(task: Any, uris: list[str]) -> None:
    """What the run read, for Airflow's hook-lineage collector (listeners and OpenLineage read it)."""
    if not uris:
        return
    try:
        from airflow.sdk.lineage import get_hook_lineage_collector
    except ImportError:  # pragma: no cover - older task SDKs
        return
    try:
        collector = get_hook_lineage_collector()
        for uri in uris:
            collector.add_input_asset(context=task, uri=uri)
    except Exception as e:  # noqa: BLE001 - the events are out; the collector is an extra
        log.warning("Column lineage: the reads are not in Airflow's hook-lineage collector: %s: %s",
                    type(e).__name__, e)


def _clean(uri: str) -> str:
    """No credential in an asset name: names are already stripped by the naming module; this holds
    for any URI form a future dataset kind might bring."""
    return strip_jdbc_credentials(uri)
