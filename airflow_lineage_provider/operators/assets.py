"""Airflow assets from a run's column lineage: what it wrote becomes asset events, what it read their inlets.

Every table or path a run wrote is an asset event, added through the task's ``AssetAlias``
(``column_lineage/<dag_id>/<task_id>``, put in the running task's outlets here), so a DAG scheduled on
``Asset("file:///.../t")`` runs after the task writes ``t``. Assets are named by the URI of the
OpenLineage dataset (``lineage/naming.py``), so the Assets view and the OpenLineage events name one
thing alike. Airflow 3.3 records no inlets a task learns at run time (only those declared in the DAG),
so each event's ``extra`` says what the write read (``inputs``: URIs) and which columns it wrote.

A URI percent-encodes its path (``naming.dataset_uri``: ``file:///data/out%20dir/%C3%BC``) and is
checked against what Airflow accepts before it goes into the outlet events (``refusal``): one Airflow
would refuse is left out, with a warning in the log and in the lineage document, so an asset can
never fail a task whose Spark job succeeded.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any
from urllib.parse import unquote

from airflow_lineage_provider.lineage.model import LineageReport
from airflow_lineage_provider.lineage.naming import dataset_uri
from airflow_lineage_provider.lineage.redact import scrub_location

log = logging.getLogger(__name__)

ALIAS_PREFIX = "column_lineage"


def alias_name(dag_id: str, task_id: str) -> str:
    """The asset alias a task's writes are reported through: one per task."""
    return f"{ALIAS_PREFIX}/{dag_id}/{task_id}"


def written(report: LineageReport) -> dict[str, dict[str, Any]]:
    """``{uri: extra}`` of every dataset the run wrote, in order: each with the URIs it was read from
    and the columns written (a table written by two statements is one asset, their union). A URI
    Airflow would refuse (``refusal``) is left out, as a target and as an input."""
    return _assets(report)[0]


def read(report: LineageReport) -> list[str]:
    """URIs of every dataset the run read (those Airflow accepts)."""
    return _assets(report)[1]


def refused(report: LineageReport) -> list[str]:
    """One warning per dataset URI of the run that Airflow would refuse as an asset: the report's
    document carries them, so a reader sees why an asset is missing."""
    return [f"{_shown(uri)} is not reported as an Airflow asset: {why}" for uri, why in _assets(report)[2].items()]


def _shown(uri: str) -> str:
    """A URI for a warning line: a very long one keeps its start and its end."""
    return uri if len(uri) <= 300 else f"{uri[:200]}...{uri[-60:]}"


def with_asset_warnings(report: LineageReport) -> LineageReport:
    """``report`` with a warning for each URI Airflow would refuse; never raises."""
    try:
        for warning in refused(report):
            if warning not in report.warnings:
                report = report.with_warning(warning)
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.warning("Column lineage: the asset URIs could not be checked: %s: %s", type(e).__name__, e)
    return report


def refusal(uri: str) -> str | None:
    """Why Airflow 3.3 would refuse ``uri`` as an asset, ``None`` when it takes it as it is.

    Checked here, before the URI goes into the outlet events, because Airflow checks some of it only
    in the api-server when the task ends (``AssetModel``: ASCII only), where a refusal fails a task
    whose Spark job succeeded. Refused: a URI that is not ASCII or is over 1,500 characters (the
    column's size), one ``Asset`` refuses (its sanitizing, a provider's URI normalizer, the reserved
    ``airflow`` scheme), and one ``Asset`` would record as another URI (it drops a fragment, sorts a
    query, applies a normalizer), since the asset would then not name the dataset.
    """
    if not uri.isascii():
        return "Airflow takes ASCII asset URIs only"
    if len(uri) > _MAX_URI:
        return f"Airflow takes asset URIs of up to {_MAX_URI} characters; this one has {len(uri)}"
    from airflow.sdk import Asset

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            asset = Asset(uri)
    except Exception as e:  # noqa: BLE001 - whatever Airflow says is the reason
        return f"Airflow refuses it: {type(e).__name__}: {e}"
    if asset.uri != uri:
        return f"Airflow would record it as {asset.uri}"
    return None


_MAX_URI = 1500  # AssetModel.uri: String(length=1500)


def _assets(report: LineageReport) -> tuple[dict[str, dict[str, Any]], list[str], dict[str, str]]:
    """(written, read, refused) of a report: refused maps each URI Airflow would refuse to why."""
    out: dict[str, dict[str, Any]] = {}
    reads: list[str] = []
    bad: dict[str, str] = {}
    checked: dict[str, str | None] = {}

    def accepted(namespace: str, name: str) -> str | None:
        uri = dataset_uri(namespace, name)
        if uri is None:
            return None
        masked = _masked(uri)
        if masked != uri:  # never cut to another directory's name: left out, saying so (masked)
            bad[masked] = "it holds a credential its dataset's name should have had masked"
            return None
        if uri not in checked:
            checked[uri] = refusal(uri)
            if checked[uri] is not None:
                bad[uri] = checked[uri]
        return None if checked[uri] is not None else uri

    for statement in report.statements:
        sources = [uri for uri in (accepted(s.namespace, s.name) for s in statement.inputs) if uri]
        reads += [uri for uri in sources if uri not in reads]
        target = statement.target
        uri = accepted(target.namespace, target.name) if target else None
        if uri is None:
            continue
        entry = out.setdefault(uri, {"inputs": [], "columns": []})
        if target.table:
            entry["table"] = target.table
        entry["inputs"] += [source for source in sources if source not in entry["inputs"]]
        entry["columns"] += [name for name, _ in statement.columns if name not in entry["columns"]]
    return out, reads, bad


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
        found, reads, bad = _assets(report)
        for uri, why in bad.items():
            log.warning("Column lineage: %s is not reported as an Airflow asset: %s", _shown(uri), why)
        for uri, extra in found.items():
            try:
                events.add(Asset(uri), extra=extra)
            except Exception as e:  # noqa: BLE001 - an asset Airflow refuses costs that asset only
                log.warning("Column lineage: %s is not reported as an Airflow asset: %s", uri, e)
                continue
            published.append(uri)
        _record_inlets(task, reads)
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


def _masked(uri: str) -> str:
    """``uri`` with any credential masked (decoded, as its dataset's name): the naming module masks names
    already, so this differs from ``uri`` only for a URI form a future dataset kind might bring."""
    decoded = unquote(uri)
    masked = scrub_location(decoded)
    return uri if masked == decoded else masked
